/** `mirador backup <file>` and `mirador restore <file>`: whole-database copies (SQLite; PostgreSQL uses pg_dump). */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, emit, withStore, type CliContext, type JsonOption } from './cli-context.js';

const PG_HINT =
  'This DATABASE_URL is PostgreSQL: back it up with "pg_dump -Fc" and restore with "pg_restore" (see docs/operations.md, "Backups").';

export function registerBackupCommands(program: Command, ctx: CliContext) {
  program
    .command('backup <file>')
    .description('copy the whole SQLite database into a new file, while the server runs and imports')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: JsonOption) => {
      const path = resolve(file);
      await withStore(ctx, async (store) => {
        if (!store.backsUpToFile) throw new CliError(PG_HINT);
        const started = Date.now();
        const { bytes } = await store.backup(path);
        const ms = Date.now() - started;
        emit(ctx, opts, { ok: true, file: path, bytes, ms }, () => `Backed up to ${path} (${bytes} bytes in ${ms} ms).`);
      });
    });

  program
    .command('restore <file>')
    .description('fill a new, empty SQLite database (DATABASE_URL) from a backup; stop every server on it first')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: JsonOption) => {
      const path = resolve(file);
      const store = await ctx.openStore();
      try {
        if (!store.backsUpToFile) throw new CliError(PG_HINT);
        try {
          await store.restore(path);
        } catch (err) {
          throw new CliError((err as Error).message);
        }
      } finally {
        await store.close();
      }
      // Opened again: migrating brings a backup of an older release up to this one's schema.
      await withStore(ctx, async (restored) => {
        const companies = (await restored.listCompanies()).map((c) => c.slug);
        emit(ctx, opts, { ok: true, file: path, companies }, () => `Restored ${path}: ${companies.length} companies (${companies.join(', ')}).`);
      });
    });
}
