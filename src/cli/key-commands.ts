/**
 * `mirador key …` (API keys, which read) and `mirador token …` (upload tokens,
 * which only upload): the same credential, two scopes, created as the panel
 * creates them (credential-routes.ts). Each command refuses the other scope's
 * prefix by name, so `token revoke` never revokes a key nor `key revoke` a token.
 * Every creation and revocation is written to the audit trail with the OS user.
 */
import type { Command } from 'commander';
import { EXPIRES_IN_FORMAT, generateCredential, isValidPrefix, parseExpiresIn, type CredentialScope } from '../domain/api-keys.js';
import { auditEvent } from '../domain/audit.js';
import type { Credential } from '../store/store.js';
import { CliError, cliWho, emit, iso, requireCompany, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

interface ScopeWords {
  command: 'key' | 'token';
  /** "API key", "upload token" */
  noun: string;
  /** What the other command is, for the refusal of a wrong-scope prefix. */
  other: { command: 'key' | 'token'; noun: string };
  refusal: string;
}

const WORDS: Record<CredentialScope, ScopeWords> = {
  read: {
    command: 'key',
    noun: 'API key',
    other: { command: 'token', noun: 'upload token' },
    refusal: 'every instance refuses it within a second',
  },
  upload: {
    command: 'token',
    noun: 'upload token',
    other: { command: 'key', noun: 'API key' },
    refusal: 'uploads with it are refused within a second',
  },
};

/** A credential's state in lists: revoked wins over expired. */
export function credentialStatus(c: Credential, now = Date.now()): 'revoked' | 'expired' | 'active' {
  if (c.revokedAt) return 'revoked';
  if (c.expiresAt && c.expiresAt.getTime() <= now) return 'expired';
  return 'active';
}

export function registerKeyCommands(program: Command, ctx: CliContext) {
  registerCredentialCommands(program, ctx, 'read');
  registerCredentialCommands(program, ctx, 'upload');
}

function registerCredentialCommands(program: Command, ctx: CliContext, scope: CredentialScope) {
  const w = WORDS[scope];
  const group = program
    .command(w.command)
    .description(scope === 'read' ? 'manage API keys (read /v1)' : 'manage upload tokens (PUT /panel/api/imports/<kind>, for unattended exports)');

  const create = group
    .command('create')
    .description(`create an ${w.noun} for a company; it is printed once`)
    .argument('<slug>', 'company')
    .option('--label <label>', `what the ${w.noun} is for`);
  // Expiry is for API keys, which integrations hold for a long time (contract issue 24).
  if (scope === 'read') {
    create.option('--expires-in <duration>', 'refuse the key after this long: days or hours, such as 90d or 12h (default: never)');
  }
  create
    .option('--json', `print JSON: {"key", "prefix"}${scope === 'read' ? ' (and "expires_at" with --expires-in)' : ''}`)
    .action(async (slug: string, opts: JsonOption & { label?: string; expiresIn?: string }) => {
      let expiresAt: number | null = null;
      if (opts.expiresIn !== undefined) {
        const ms = parseExpiresIn(opts.expiresIn);
        if (ms === null) throw new CliError(`--expires-in must be ${EXPIRES_IN_FORMAT}; got "${opts.expiresIn}".`);
        expiresAt = Date.now() + ms;
      }
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const fresh = generateCredential(scope);
        // The panel's limit, so a label looks the same whichever way it was made.
        const label = opts.label?.trim().slice(0, 200) || null;
        const expires = expiresAt === null ? null : new Date(expiresAt).toISOString();
        await store.createCredential(
          { companyId: company.id, scope, prefix: fresh.prefix, secretHash: fresh.secretHash, label, expiresAt },
          auditEvent(cliWho(), company.id, scope === 'read' ? 'key.create' : 'token.create', {
            prefix: fresh.prefix,
            label,
            ...(scope === 'read' ? { expires_at: expires } : {}),
          }),
        );
        // The contract's {"key", "prefix"}, and expires_at only for a key that expires.
        emit(ctx, opts, { key: fresh.token, prefix: fresh.prefix, ...(expires ? { expires_at: expires } : {}) }, () =>
          [
            `Created ${w.noun} ${fresh.prefix} for ${company.slug}${expires ? `, valid until ${expires}` : ''}:`,
            '',
            `  ${fresh.token}`,
            '',
            'Store it now: it is not kept and cannot be shown again.',
          ].join('\n'),
        );
      });
    });

  group
    .command('list')
    .description(`list a company's ${w.noun}s`)
    .argument('<slug>', 'company')
    .option('--json', 'print JSON')
    .action(async (slug: string, opts: JsonOption) => {
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const listed = await store.listCredentials(company.id, scope);
        const rows = listed.map((k) => ({
          prefix: k.prefix,
          label: k.label,
          created_at: iso(k.createdAt),
          last_used_at: iso(k.lastUsedAt),
          revoked_at: iso(k.revokedAt),
          expires_at: iso(k.expiresAt),
          status: credentialStatus(k),
        }));
        emit(ctx, opts, rows, () =>
          rows.length === 0
            ? `No ${w.noun}s for ${company.slug}. Create one with "mirador ${w.command} create ${company.slug}".`
            : table([
                ['PREFIX', 'LABEL', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED'],
                ...rows.map((r) => [
                  r.prefix,
                  r.label ?? '',
                  r.created_at!,
                  r.last_used_at ?? 'never',
                  r.expires_at === null ? 'never' : r.status === 'expired' ? `${r.expires_at} (expired)` : r.expires_at,
                  r.revoked_at ?? 'no',
                ]),
              ]),
        );
      });
    });

  group
    .command('revoke')
    .description(`revoke an ${w.noun}; ${w.refusal}`)
    .argument('<prefix>', `the 8-character prefix of the ${w.noun}`)
    .option('--json', 'print JSON')
    .action(async (prefix: string, opts: JsonOption) => {
      if (!isValidPrefix(prefix)) throw new CliError(`"${prefix}" is not a ${w.command} prefix: it has 8 characters of a-z and 0-9.`);
      await withStore(ctx, async (store) => {
        const existing = await store.credentialByPrefix(prefix);
        if (existing && existing.scope !== scope) {
          throw new CliError(`${prefix} is an ${w.other.noun}, not an ${w.noun}: nothing was revoked. Use "mirador ${w.other.command} revoke ${prefix}".`);
        }
        if (!existing) throw new CliError(`There is no ${w.noun} with prefix "${prefix}".`);
        const revoked = (await store.revokeCredential(
          prefix,
          auditEvent(cliWho(), existing.companyId, scope === 'read' ? 'key.revoke' : 'token.revoke', { prefix, label: existing.label }),
        ))!;
        emit(ctx, opts, { prefix, revoked_at: iso(revoked.revokedAt) }, () =>
          existing.revokedAt ? `${capitalise(w.noun)} ${prefix} was already revoked.` : `Revoked ${w.noun} ${prefix}.`,
        );
      });
    });
}

const capitalise = (s: string) => s[0]!.toUpperCase() + s.slice(1);
