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
 * (UPLOAD_RETENTION_DAYS at one import a day), packed as a serving worker packs
 * them once their import has ended (store/upload-packing.ts; `--no-pack` keeps
 * them plain, as releases before it did). On PostgreSQL the database is
 * VACUUMed after each night, as autovacuum would within a day.
 *
 *   npm run bench -- storage [--customers 100000] [--nights 30] [--changes 300] [--spread] [--retention-days D] [--no-pack] [--backend sqlite|postgres]
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

async function oneBackend(ctx: BenchContext, backend: Backend, nights: number, changes: number, retentionDays: number, spread: boolean, pack: boolean) {
  const db = await freshDatabase(backend, ctx.outDir);
  const env = miradorEnv(db.url);
  const rows = ctx.customers;
  const section = ctx.report.section(
    `storage: ${rows.toLocaleString('en')} customers re-imported nightly, ${changes} rows changed each night (${spread ? 'spread over the file' : 'one range'}), on ${backend}`,
    ['after', 'size MB', 'free MB', 'size ÷ first', ...(pack ? ['÷ first packed'] : []), 'stored uploads', 'updated'],
    [
      `Superseded snapshots swept after each night; uploads kept for the last ${retentionDays} imports (UPLOAD_RETENTION_DAYS=${retentionDays} at one a day), ${pack ? 'packed once their import ended' : 'kept plain (--no-pack)'}.`,
      backend === 'sqlite'
        ? 'SQLite: "size" is the file (page_count × page_size); "free" is its free pages, which later writes reuse (no VACUUM).'
        : 'PostgreSQL: "size" is pg_database_size after a VACUUM (as autovacuum would run within a day); dead rows\' space is reused, not returned.',
      ...(pack ? ['"first": the moment the first import ends, its upload still plain; "first packed": once the worker has packed it (about a minute later).'] : []),
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
    const packAll = async () => {
      for (let r = await store.packUpload(0); r; r = await store.packUpload(r.importId));
      await db.settle();
    };
    let firstPacked: typeof first | null = null;
    if (pack) {
      await packAll();
      firstPacked = await store.storageSize();
    }
    const ratios = (bytes: number) => [(bytes / first.bytes).toFixed(2), ...(firstPacked ? [(bytes / firstPacked.bytes).toFixed(2)] : [])];
    const series: { night: number; bytes: number; freeBytes: number; uploads: number }[] = [];
    const storedUploads = async () => (await store.listImports(company.id, 'clientes', 1000)).filter((j) => !j.fileRemovedAt).length;
    ctx.report.row(section, ['first import', mb(first.bytes), mb(first.freeBytes), ...ratios(first.bytes), String(await storedUploads()), '—']);
    if (firstPacked) ctx.report.row(section, ['first, packed', mb(firstPacked.bytes), mb(firstPacked.freeBytes), ...ratios(firstPacked.bytes), String(await storedUploads()), '—']);
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
      if (pack) await packAll();
      else await db.settle();
      const size = await store.storageSize();
      const uploads = await storedUploads();
      series.push({ night, ...size, uploads });
      ctx.report.row(section, [`night ${night}`, mb(size.bytes), mb(size.freeBytes), ...ratios(size.bytes), String(uploads), String(run.report.updated)]);
    }
    ctx.report.record(`storage-${backend}${spread ? '-spread' : ''}${pack ? '' : '-plain'}`, { rows, nights, changes, spread, retentionDays, pack, first, firstPacked, series });
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
  const pack = !process.argv.includes('--no-pack');
  for (const backend of ctx.backends) await oneBackend(ctx, backend, nights, changes, retentionDays, spread, pack);
}
