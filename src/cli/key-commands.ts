/**
 * `mirador key …` (API keys, which read) and `mirador token …` (upload tokens,
 * which only upload): the same credential, two scopes, created as the panel
 * creates them (credential-routes.ts). Each command refuses the other scope's
 * prefix by name, so `token revoke` never revokes a key nor `key revoke` a token.
 */
import type { Command } from 'commander';
import { generateCredential, isValidPrefix, type CredentialScope } from '../domain/api-keys.js';
import { CliError, emit, iso, requireCompany, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

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

export function registerKeyCommands(program: Command, ctx: CliContext) {
  registerCredentialCommands(program, ctx, 'read');
  registerCredentialCommands(program, ctx, 'upload');
}

function registerCredentialCommands(program: Command, ctx: CliContext, scope: CredentialScope) {
  const w = WORDS[scope];
  const group = program
    .command(w.command)
    .description(scope === 'read' ? 'manage API keys (read /v1)' : 'manage upload tokens (PUT /panel/api/imports/<kind>, for unattended exports)');

  group
    .command('create')
    .description(`create an ${w.noun} for a company; it is printed once`)
    .argument('<slug>', 'company')
    .option('--label <label>', `what the ${w.noun} is for`)
    .option('--json', 'print JSON: {"key", "prefix"}')
    .action(async (slug: string, opts: JsonOption & { label?: string }) => {
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const fresh = generateCredential(scope);
        await store.createCredential({
          companyId: company.id,
          scope,
          prefix: fresh.prefix,
          secretHash: fresh.secretHash,
          // The panel's limit, so a label looks the same whichever way it was made.
          label: opts.label?.trim().slice(0, 200) || null,
        });
        emit(ctx, opts, { key: fresh.token, prefix: fresh.prefix }, () =>
          [
            `Created ${w.noun} ${fresh.prefix} for ${company.slug}:`,
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
        }));
        emit(ctx, opts, rows, () =>
          rows.length === 0
            ? `No ${w.noun}s for ${company.slug}. Create one with "mirador ${w.command} create ${company.slug}".`
            : table([
                ['PREFIX', 'LABEL', 'CREATED', 'LAST USED', 'REVOKED'],
                ...rows.map((r) => [r.prefix, r.label ?? '', r.created_at!, r.last_used_at ?? 'never', r.revoked_at ?? 'no']),
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
        const revoked = (await store.revokeCredential(prefix))!;
        emit(ctx, opts, { prefix, revoked_at: iso(revoked.revokedAt) }, () =>
          existing.revokedAt ? `${capitalise(w.noun)} ${prefix} was already revoked.` : `Revoked ${w.noun} ${prefix}.`,
        );
      });
    });
}

const capitalise = (s: string) => s[0]!.toUpperCase() + s.slice(1);
