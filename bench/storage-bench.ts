/**
 * Issue 22, point 3: does the database stay bounded when the same customers
 * file comes back every night with a few hundred changes? One company, the
 * bench's customers file imported once, then `--nights N` (default 30)
 * re-exports, each with `--changes N` (default 300) rows changed (a different
 * range each night, so the previous night's rows change back too). With
 * `--spread`, each night's changes are spread over the whole file instead
 * (every rows/changes-th row, from a different offset each night): the
 * hardest case for snapshots sharing unchanged chunks, where most changes
 * land in a chunk of their own.
 *
 * A night is compressed into minutes, so the background sweep's clock is
 * played by hand after each import, as it would have run over a day: superseded
 * snapshots are swept (SNAPSHOT_RETENTION_SECONDS is minutes, a night is
 * longer), and stored uploads are kept for the last `--retention-days` imports
 * (UPLOAD_RETENTION_DAYS at one import a day). On PostgreSQL the database is
 * VACUUMed after each night, as autovacuum would within a day.
 *
 *   npm run bench -- storage [--customers 100000] [--nights 30] [--changes 300] [--spread] [--retention-days D] [--backend sqlite|postgres]
 */
import { rmSync } from 'node:fs';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/store/open-store.js';
import type { BenchContext } from './bench-context.js';
import { ensureSampleCsv } from './clientes-fixture.js';
import { freshDatabase, type Backend } from './databases.js';
import { COMPANY, importFile } from './dataset.js';
import { mirador, miradorEnv } from './processes.js';

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

async function oneBackend(ctx: BenchContext, backend: Backend, nights: number, changes: number, retentionDays: number, spread: boolean) {
  const db = await freshDatabase(backend, ctx.outDir);
  const env = miradorEnv(db.url);
  const rows = ctx.customers;
  const section = ctx.report.section(
    `storage: ${rows.toLocaleString('en')} customers re-imported nightly, ${changes} rows changed each night (${spread ? 'spread over the file' : 'one range'}), on ${backend}`,
    ['after', 'size MB', 'free MB', 'size ÷ first', 'stored uploads', 'updated'],
    [
      `Superseded snapshots swept after each night; uploads kept for the last ${retentionDays} imports (UPLOAD_RETENTION_DAYS=${retentionDays} at one a day).`,
      backend === 'sqlite'
        ? 'SQLite: "size" is the file (page_count × page_size); "free" is its free pages, which later writes reuse (no VACUUM).'
        : 'PostgreSQL: "size" is pg_database_size after a VACUUM (as autovacuum would run within a day); dead rows\' space is reused, not returned.',
    ],
  );
  const store = await openStore(db.url);
  try {
    await mirador(['company', 'create', COMPANY, '--name', 'Storage S.L.'], env);
    // Nightly files change a few hundred rows and remove none; the guard would only get in the way of a run.
    await mirador(['company', 'guard', COMPANY, '--off'], env);
    const base = await ensureSampleCsv({ kind: 'clientes', rows, dir: ctx.fixtureDir });
    await importFile(env, 'clientes', base);
    await db.settle();
    const company = (await store.companyBySlug(COMPANY))!;
    const first = await store.storageSize();
    const series: { night: number; bytes: number; freeBytes: number; uploads: number }[] = [];
    const storedUploads = async () => (await store.listImports(company.id, 'clientes', 1000)).filter((j) => !j.fileRemovedAt).length;
    ctx.report.row(section, ['first import', mb(first.bytes), mb(first.freeBytes), '1.00', String(await storedUploads()), '—']);
    for (let night = 1; night <= nights; night++) {
      const every = Math.max(1, Math.floor(rows / changes));
      const from = spread ? (night * 7919) % every : ((night - 1) * changes) % Math.max(1, rows - changes);
      const range = spread ? { changedEvery: every } : { changedTo: from + changes };
      const file = await ensureSampleCsv({ kind: 'clientes', rows, dir: ctx.fixtureDir, changedFrom: from, ...range });
      const run = await importFile(env, 'clientes', file);
      rmSync(file, { force: true });
      // The day passes: the sweep removes superseded snapshots and uploads past their retention.
      await store.sweepSnapshots(Date.now());
      const jobs = (await store.listImports(company.id, 'clientes', 1000)).filter((j) => j.finishedAt);
      const keepFrom = jobs[retentionDays - 1]?.finishedAt;
      await store.sweepUploads(retentionDays === 0 ? Date.now() + 1 : keepFrom ? keepFrom.getTime() : 0);
      await db.settle();
      const size = await store.storageSize();
      const uploads = await storedUploads();
      series.push({ night, ...size, uploads });
      ctx.report.row(section, [`night ${night}`, mb(size.bytes), mb(size.freeBytes), (size.bytes / first.bytes).toFixed(2), String(uploads), String(run.report.updated)]);
    }
    ctx.report.record(`storage-${backend}${spread ? '-spread' : ''}`, { rows, nights, changes, spread, retentionDays, first, series });
  } finally {
    await store.close();
    await db.drop();
  }
}

export async function storageBench(ctx: BenchContext): Promise<void> {
  const nights = arg('nights', 30);
  const changes = arg('changes', 300);
  const retentionDays = arg('retention-days', loadConfig({}).uploadRetentionMs / 86_400_000);
  const spread = process.argv.includes('--spread');
  for (const backend of ctx.backends) await oneBackend(ctx, backend, nights, changes, retentionDays, spread);
}
