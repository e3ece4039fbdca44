import type { Command } from 'commander';
import { KIND_SPECS } from '../domain/kinds.js';
import { describeDefaults, mappingAudit } from '../imports/column-mapping.js';
import { CliError, cliWho, emit, requireCompany, table, withStore, type CliContext, type JsonOption } from './cli-context.js';
import { requireKind } from './import-commands.js';

export function registerMappingCommands(program: Command, ctx: CliContext) {
  const mapping = program.command('mapping').description('which CSV column feeds each highlighted field');

  mapping
    .command('show')
    .description("a company's mapping for a kind: its overrides and the names recognised by default")
    .argument('<slug>', 'company')
    .argument('<kind>', 'kind')
    .option('--json', 'print JSON')
    .action(async (slug: string, kindArg: string, opts: JsonOption) => {
      const kind = requireKind(kindArg);
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const override = await store.getMapping(company.id, kind);
        const defaults = describeDefaults(kind);
        emit(ctx, opts, { kind, override, defaults }, () =>
          table([
            ['FIELD', 'COLUMN', 'RECOGNISED BY DEFAULT'],
            ...defaults.map((d) => [d.field, override[d.field] ?? '(default)', d.columns.join(', ')]),
          ]),
        );
      });
    });

  mapping
    .command('set')
    .description('override the column of some fields, from the next import on ("field=" restores the default)')
    .argument('<slug>', 'company')
    .argument('<kind>', 'kind')
    .argument('<assignments...>', 'field=COLUMN (exact column name)')
    .option('--json', 'print JSON')
    .action(async (slug: string, kindArg: string, assignments: string[], opts: JsonOption) => {
      const kind = requireKind(kindArg);
      const fields = KIND_SPECS[kind].fields.map((f) => f.name);
      const changes: [string, string][] = assignments.map((a) => {
        const at = a.indexOf('=');
        if (at <= 0) throw new CliError(`"${a}" is not field=COLUMN.`);
        const field = a.slice(0, at);
        if (!fields.includes(field)) throw new CliError(`"${field}" is not a field of ${kind}: use one of ${fields.join(', ')}.`);
        return [field, a.slice(at + 1)];
      });
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const override = await store.getMapping(company.id, kind);
        const before = { ...override };
        for (const [field, column] of changes) {
          if (column === '') delete override[field];
          else override[field] = column;
        }
        await store.setMapping(company.id, kind, override, mappingAudit(cliWho(), company.id, kind, before, override));
        emit(ctx, opts, { kind, override }, () => `Mapping of ${kind} for ${company.slug} saved; it applies from the next import.`);
      });
    });
}
