/**
 * Issue 18, point 5: `mirador import` of the customers file gzipped (`.csv.gz`, decompressed as
 * it is stored, and once more while the import is prepared on PostgreSQL) against the same file
 * plain. Fresh database per import, plain and gzipped alternating, medians.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { BenchContext } from './bench-context.js';
import { ensureSampleCsv } from './clientes-fixture.js';
import { freshDatabase, type Backend } from './databases.js';
import { COMPANY, importFile, type ImportRun } from './dataset.js';
import { mirador, miradorEnv } from './processes.js';
import { fmt, median } from './report.js';

async function importOnce(ctx: BenchContext, backend: Backend, file: string): Promise<ImportRun> {
  const db = await freshDatabase(backend, ctx.outDir);
  try {
    const env = miradorEnv(db.url);
    await mirador(['company', 'create', COMPANY, '--name', 'Benchmark S.L.'], env);
    return await importFile(env, 'clientes', file);
  } finally {
    await db.drop();
  }
}

export async function gzipImportBench(ctx: BenchContext): Promise<void> {
  const n = ctx.customers;
  const plain = await ensureSampleCsv({ kind: 'clientes', rows: n, dir: ctx.fixtureDir });
  const gz = `${plain}.gz`;
  // gzip's default level (6), as `gzip file.csv` or the nightly script makes it.
  if (!existsSync(gz)) writeFileSync(gz, gzipSync(readFileSync(plain), { level: 6 }));
  const sizes = { plain: statSync(plain).size, gz: statSync(gz).size };
  const section = ctx.report.section(
    `Import of ${n.toLocaleString('en')} customers: .csv.gz against plain .csv`,
    ['backend', 'file', 'MiB on disk', 'wall s', 'apply s', 'wall − apply s', 'peak RSS MiB'],
    [
      `Whole \`mirador import\` command, spawn to exit; "apply" is the import's duration_ms; "wall − apply" is mostly ` +
        `storing the upload (and decompressing it). Medians of ${ctx.rounds} alternating rounds, fresh databases.`,
    ],
  );
  for (const backend of ctx.backends) {
    const runs: Record<'plain' | 'gz', ImportRun[]> = { plain: [], gz: [] };
    for (let round = 0; round < ctx.rounds; round++) {
      runs.plain.push(await importOnce(ctx, backend, plain));
      runs.gz.push(await importOnce(ctx, backend, gz));
    }
    for (const which of ['plain', 'gz'] as const) {
      const xs = runs[which];
      ctx.report.row(section, [
        backend,
        which === 'plain' ? 'clientes.csv' : 'clientes.csv.gz',
        fmt.mb(sizes[which]),
        (median(xs.map((x) => x.wallMs)) / 1000).toFixed(2),
        (median(xs.map((x) => x.applyMs)) / 1000).toFixed(2),
        (median(xs.map((x) => x.wallMs - x.applyMs)) / 1000).toFixed(2),
        fmt.int(median(xs.map((x) => x.maxRssKb ?? NaN)) / 1024),
      ]);
    }
    ctx.report.record(`gzip-import-${backend}`, { sizes, runs });
  }
}
