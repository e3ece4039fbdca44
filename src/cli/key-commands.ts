import type { Command } from 'commander';
import { generateCredential, isValidPrefix } from '../domain/api-keys.js';
import { CliError, emit, iso, requireCompany, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

export function registerKeyCommands(program: Command, ctx: CliContext) {
  const key = program.command('key').description('manage API keys');

  key
    .command('create')
    .description('create an API key for a company; it is printed once')
    .argument('<slug>', 'company')
    .option('--label <label>', 'what the key is for')
    .option('--json', 'print JSON: {"key", "prefix"}')
    .action(async (slug: string, opts: JsonOption & { label?: string }) => {
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const fresh = generateCredential('read');
        await store.createCredential({
          companyId: company.id,
          scope: 'read',
          prefix: fresh.prefix,
          secretHash: fresh.secretHash,
          label: opts.label?.trim() || null,
        });
        emit(ctx, opts, { key: fresh.token, prefix: fresh.prefix }, () =>
          [
            `Created API key ${fresh.prefix} for ${company.slug}:`,
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
        }));
        emit(ctx, opts, rows, () =>
          rows.length === 0
            ? `No API keys for ${company.slug}. Create one with "mirador key create ${company.slug}".`
            : table([
                ['PREFIX', 'LABEL', 'CREATED', 'LAST USED', 'REVOKED'],
                ...rows.map((r) => [r.prefix, r.label ?? '', r.created_at!, r.last_used_at ?? 'never', r.revoked_at ?? 'no']),
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
        const revoked = (await store.revokeCredential(prefix))!;
        emit(ctx, opts, { prefix, revoked_at: iso(revoked.revokedAt) }, () =>
          existing.revokedAt ? `Key ${prefix} was already revoked.` : `Revoked key ${prefix}.`,
        );
      });
    });
}
