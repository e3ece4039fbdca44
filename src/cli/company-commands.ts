import type { Command } from 'commander';
import { ConflictError } from '../store/store.js';
import { guardJson, readGuard, writeGuard } from '../imports/deletion-guard.js';
import { auditEvent } from '../domain/audit.js';
import { CliError, cliWho, emit, iso, requireCompany, SLUG, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

export function registerCompanyCommands(program: Command, ctx: CliContext) {
  const company = program.command('company').description('manage companies');

  company
    .command('create')
    .description('create a company')
    .argument('<slug>', 'identifier: a-z, 0-9 and "-"')
    .requiredOption('--name <name>', 'display name')
    .option('--json', 'print JSON')
    .action(async (slug: string, opts: JsonOption & { name: string }) => {
      if (!SLUG.test(slug)) throw new CliError(`"${slug}" is not a valid slug: use 1 to 64 of a-z, 0-9 and "-".`);
      const name = opts.name.trim();
      if (!name) throw new CliError('--name must not be empty.');
      await withStore(ctx, async (store) => {
        try {
          const c = await store.createCompany(slug, name);
          emit(ctx, opts, { slug: c.slug, name: c.name, created_at: iso(c.createdAt) }, () => `Created company ${c.slug} (${c.name}).`);
        } catch (err) {
          if (err instanceof ConflictError) throw new CliError(err.message);
          throw err;
        }
      });
    });

  company
    .command('list')
    .description('list companies')
    .option('--json', 'print JSON')
    .action(async (opts: JsonOption) => {
      await withStore(ctx, async (store) => {
        const companies = await store.listCompanies();
        emit(
          ctx,
          opts,
          companies.map((c) => ({ slug: c.slug, name: c.name, created_at: iso(c.createdAt) })),
          () =>
            companies.length === 0
              ? 'No companies yet. Create one with "mirador company create <slug> --name <name>".'
              : table([['SLUG', 'NAME', 'CREATED'], ...companies.map((c) => [c.slug, c.name, iso(c.createdAt)!])]),
        );
      });
    });

  company
    .command('guard')
    .description('show or set the mass-deletion guard: imports removing more than both thresholds wait for confirmation')
    .argument('<slug>', 'company')
    .option('--on', 'turn the guard on')
    .option('--off', 'turn the guard off')
    .option('--min-records <n>', 'hold only when more than this many records would be removed (default 100)')
    .option('--max-fraction <f>', 'hold only when more than this fraction of the records would be removed (default 0.2)')
    .option('--json', 'print JSON')
    .action(async (slug: string, opts: JsonOption & { on?: boolean; off?: boolean; minRecords?: string; maxFraction?: string }) => {
      if (opts.on && opts.off) throw new CliError('Give --on or --off, not both.');
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const before = await readGuard(store, company.id);
        const guard = { ...before };
        const changed = opts.on || opts.off || opts.minRecords !== undefined || opts.maxFraction !== undefined;
        if (opts.on) guard.enabled = true;
        if (opts.off) guard.enabled = false;
        if (opts.minRecords !== undefined) {
          const n = Number(opts.minRecords);
          if (!Number.isInteger(n) || n < 0) throw new CliError('--min-records must be an integer of 0 or more.');
          guard.minRecords = n;
        }
        if (opts.maxFraction !== undefined) {
          const f = Number(opts.maxFraction);
          if (!(f >= 0 && f <= 1)) throw new CliError('--max-fraction must be a number from 0 to 1.');
          guard.maxFraction = f;
        }
        if (changed) {
          const audit = auditEvent(cliWho(), company.id, 'guard.change', { before: guardJson(before), after: guardJson(guard) });
          await writeGuard(store, company.id, guard, audit);
        }
        emit(ctx, opts, guardJson(guard), () =>
          guard.enabled
            ? `Mass-deletion guard for ${company.slug}: on — imports removing more than ${guard.minRecords} records and more than ${guard.maxFraction * 100}% of a kind wait for confirmation.`
            : `Mass-deletion guard for ${company.slug}: off.`,
        );
      });
    });
}
