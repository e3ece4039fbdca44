import type { Command } from 'commander';
import { hashPassword, isPlausibleEmail, normaliseEmail, passwordProblem } from '../domain/passwords.js';
import { ConflictError } from '../store/store.js';
import { auditEvent } from '../domain/audit.js';
import { CliError, cliWho, emit, iso, requireCompany, withStore, type CliContext, type JsonOption } from './cli-context.js';

export function registerUserCommands(program: Command, ctx: CliContext) {
  const user = program.command('user').description('manage panel administrators');

  user
    .command('create')
    .description("create a panel administrator of a company; the password is prompted for, or read with --password-stdin")
    .argument('<slug>', 'company')
    .argument('<email>', 'the email the administrator signs in with')
    .option('--password-stdin', 'read the password from standard input (one line)')
    .option('--json', 'print JSON')
    .action(async (slug: string, emailArg: string, opts: JsonOption & { passwordStdin?: boolean }) => {
      const email = normaliseEmail(emailArg);
      if (!isPlausibleEmail(email)) throw new CliError(`"${emailArg}" is not an email address.`);
      const password = opts.passwordStdin ? await readStdinPassword() : await promptPassword(ctx);
      const problem = passwordProblem(password);
      if (problem) throw new CliError(problem);
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        // Hash before anything is written: a failure leaves no half-made user.
        const passwordHash = await hashPassword(password);
        let created;
        try {
          created = await store.createUser({ companyId: company.id, email, passwordHash }, auditEvent(cliWho(), company.id, 'user.create', { email }));
        } catch (err) {
          if (err instanceof ConflictError) throw new CliError(`A user with email "${email}" already exists.`);
          throw err;
        }
        emit(ctx, opts, { id: created.id, company: company.slug, email, created_at: iso(created.createdAt) }, () =>
          `Created panel user ${email} for ${company.slug}. Sign in at /panel.`,
        );
      });
    });
}

/** The first line of standard input, without its line break (as `docker login --password-stdin`). */
async function readStdinPassword(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError('--password-stdin reads a pipe, e.g.: printf %s "$PASSWORD" | mirador user create …');
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return text.replace(/\r?\n$/, '');
}

/** Asks twice on the terminal without echoing what is typed. */
async function promptPassword(ctx: CliContext): Promise<string> {
  if (!process.stdin.isTTY) {
    throw new CliError('No terminal to ask for the password: pass it on standard input with --password-stdin.');
  }
  const first = await askHidden('Password: ');
  const second = await askHidden('Repeat the password: ');
  if (first !== second) throw new CliError('The two passwords differ.');
  ctx.err('');
  return first;
}

function askHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let typed = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new CliError('Cancelled.'));
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    stdin.on('data', onData);
  });
}
