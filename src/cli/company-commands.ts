import type { Command } from 'commander';
import { ConflictError } from '../store/store.js';
import { CliError, emit, iso, SLUG, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

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
}
