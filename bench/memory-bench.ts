/**
 * Issue 3 point 9 and issue 4 target 4: memory stays flat whatever the file's
 * size. Imports a customers file of just under 1 GiB (the default
 * MAX_UPLOAD_BYTES) with `mirador import` under `/usr/bin/time`, and reports
 * the process's peak RSS beside a 100,000-customer import's.
 */
import { statfsSync, statSync } from 'node:fs';
import type { BenchContext } from './bench-context.js';
import { ensureSampleCsv } from './clientes-fixture.js';
import { freshDatabase, type Backend } from './databases.js';
import { COMPANY, importFile, type ImportRun } from './dataset.js';
import { mirador, miradorEnv } from './processes.js';
import { fmt } from './report.js';

/** About 750 bytes a row: 1,430,000 rows are 1.07 GB, just under 1 GiB. */
const GIB_ROWS = 1_430_000;

async function importInFreshDb(ctx: BenchContext, backend: Backend, file: string): Promise<ImportRun> {
  const db = await freshDatabase(backend, ctx.outDir);
  try {
    const env = miradorEnv(db.url);
    await mirador(['company', 'create', COMPANY, '--name', 'Benchmark S.L.'], env);
    return await importFile(env, 'clientes', file);
  } finally {
    await db.drop();
  }
}

export async function memoryBench(ctx: BenchContext): Promise<void> {
  const bigRows = ctx.quick ? GIB_ROWS / 10 : GIB_ROWS;
  const section = ctx.report.section(
    'Peak RSS of `mirador import` (issue 3 point 9: < 300 MB for any size)',
    ['backend', 'file', 'rows', 'wall s', 'MiB/s', 'peak RSS MiB'],
    ['`/usr/bin/time -f %M mirador import bench clientes <file>` on a fresh database: the process that uploads and applies the import.'],
  );
  // The 1 GiB file, its upload and its snapshot take about 8 GB of disk.
  const free = statfsSync(ctx.outDir);
  if (!ctx.quick && free.bavail * free.bsize < 12 * 2 ** 30) {
    ctx.report.row(section, ['—', 'skipped: less than 12 GiB free on disk', '', '', '', '']);
    return;
  }
  const files = [
    await ensureSampleCsv({ kind: 'clientes', rows: ctx.quick ? 10_000 : 100_000, dir: ctx.fixtureDir }),
    await ensureSampleCsv({ kind: 'clientes', rows: bigRows, dir: ctx.fixtureDir }),
  ];
  for (const backend of ctx.backends) {
    // Both files on both stores: how an import writes (streamed COPYs on PostgreSQL, statements
    // on SQLite) changes what it holds, so one store's figure does not stand for the other's.
    for (const file of files) {
      const r = await importInFreshDb(ctx, backend, file);
      const bytes = statSync(file).size;
      ctx.report.row(section, [
        backend,
        `${fmt.mb(bytes)} MiB`,
        fmt.int(r.rows),
        (r.wallMs / 1000).toFixed(1),
        (bytes / 2 ** 20 / (r.wallMs / 1000)).toFixed(1),
        r.maxRssKb === null ? '— (no /usr/bin/time)' : fmt.int(r.maxRssKb / 1024),
      ]);
      ctx.report.record(`memory:${backend}:${bytes}`, r);
    }
  }
}
