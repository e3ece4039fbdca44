import type { Command } from 'commander';
import { EXPIRES_IN_FORMAT, generateCredential, isValidPrefix, parseExpiresIn } from '../domain/api-keys.js';
import { auditEvent } from '../domain/audit.js';
import type { Credential } from '../store/store.js';
import { CliError, cliWho, emit, iso, requireCompany, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

/** A key's state in lists: revoked wins over expired. */
export function credentialStatus(c: Credential, now = Date.now()): 'revoked' | 'expired' | 'active' {
  if (c.revokedAt) return 'revoked';
  if (c.expiresAt && c.expiresAt.getTime() <= now) return 'expired';
  return 'active';
}

export function registerKeyCommands(program: Command, ctx: CliContext) {
  const key = program.command('key').description('manage API keys');

  key
    .command('create')
    .description('create an API key for a company; it is printed once')
    .argument('<slug>', 'company')
    .option('--label <label>', 'what the key is for')
    .option('--expires-in <duration>', 'refuse the key after this long: days or hours, such as 90d or 12h (default: never)')
    .option('--json', 'print JSON: {"key", "prefix"} (and "expires_at" with --expires-in)')
    .action(async (slug: string, opts: JsonOption & { label?: string; expiresIn?: string }) => {
      let expiresAt: number | null = null;
      if (opts.expiresIn !== undefined) {
        const ms = parseExpiresIn(opts.expiresIn);
        if (ms === null) throw new CliError(`--expires-in must be ${EXPIRES_IN_FORMAT}; got "${opts.expiresIn}".`);
        expiresAt = Date.now() + ms;
      }
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const fresh = generateCredential('read');
        const label = opts.label?.trim() || null;
        const expires = expiresAt === null ? null : new Date(expiresAt).toISOString();
        await store.createCredential(
          { companyId: company.id, scope: 'read', prefix: fresh.prefix, secretHash: fresh.secretHash, label, expiresAt },
          auditEvent(cliWho(), company.id, 'key.create', { prefix: fresh.prefix, label, expires_at: expires }),
        );
        // The contract's {"key", "prefix"}, and expires_at only for a key that expires.
        emit(ctx, opts, { key: fresh.token, prefix: fresh.prefix, ...(expires ? { expires_at: expires } : {}) }, () =>
          [
            `Created API key ${fresh.prefix} for ${company.slug}${expires ? `, valid until ${expires}` : ''}:`,
            '',
            `  ${fresh.token}`,
            '',
            'Store it now: it is not kept and cannot be shown again.',
          ].join('\n'),
        );
      });
    });

  key
    .command('list')
    .description("list a company's API keys")
    .argument('<slug>', 'company')
    .option('--json', 'print JSON')
    .action(async (slug: string, opts: JsonOption) => {
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const keys = await store.listCredentials(company.id, 'read');
        const rows = keys.map((k) => ({
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
            ? `No API keys for ${company.slug}. Create one with "mirador key create ${company.slug}".`
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

  key
    .command('revoke')
    .description('revoke an API key; every instance refuses it within a second')
    .argument('<prefix>', 'the 8-character prefix of the key')
    .option('--json', 'print JSON')
    .action(async (prefix: string, opts: JsonOption) => {
      if (!isValidPrefix(prefix)) throw new CliError(`"${prefix}" is not a key prefix: it has 8 characters of a-z and 0-9.`);
      await withStore(ctx, async (store) => {
        const existing = await store.credentialByPrefix(prefix);
        if (!existing || existing.scope !== 'read') throw new CliError(`There is no API key with prefix "${prefix}".`);
        const revoked = (await store.revokeCredential(
          prefix,
          auditEvent(cliWho(), existing.companyId, 'key.revoke', { prefix, label: existing.label }),
        ))!;
        emit(ctx, opts, { prefix, revoked_at: iso(revoked.revokedAt) }, () =>
          existing.revokedAt ? `Key ${prefix} was already revoked.` : `Revoked key ${prefix}.`,
        );
      });
    });
}
