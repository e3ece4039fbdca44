/**
 * Import speed (issue 4 target 4, issue 3 point 10, issue 5 point 4): the
 * customers file through `mirador import` (a fresh database each round,
 * SQLite and PostgreSQL), beside `sqlite3`'s own `.import` of the same file
 * converted to UTF-8, in alternating rounds; then a re-import of the same
 * customers with the last 1% changed (change detection, the general path).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { BenchContext } from './bench-context.js';
import { ensureSampleCsv } from './clientes-fixture.js';
import { freshDatabase, type Backend } from './databases.js';
import { COMPANY, importFile, type ImportRun } from './dataset.js';
import { mirador, miradorEnv, run } from './processes.js';
import { fmt, median } from './report.js';
import { decodeWindows1252 } from '../src/imports/windows-1252.js';

const SQLITE3 = '/usr/bin/sqlite3';

interface Timed {
  wallMs: number;
  applyMs: number | null;
  maxRssKb: number | null;
}

/** The same text in UTF-8, for sqlite3 (which does not decode Windows-1252). */
function utf8Copy(file: string): string {
  const out = file.replace(/\.csv$/, '.utf8.csv');
  if (!existsSync(out)) writeFileSync(out, decodeWindows1252(readFileSync(file)).text, 'utf8');
  return out;
}

async function sqlite3Import(ctx: BenchContext, utf8File: string): Promise<Timed> {
  const db = await freshDatabase('sqlite', ctx.outDir);
  try {
    const r = await run(SQLITE3, ['-cmd', '.mode csv', '-cmd', '.separator ;', db.path!, `.import ${utf8File} clientes`], { timed: true });
    if (r.code !== 0 || r.stderr.trim() !== '') throw new Error(`sqlite3 .import failed: ${r.stderr}`);
    return { wallMs: r.wallMs, applyMs: null, maxRssKb: r.maxRssKb };
  } finally {
    await db.drop();
  }
}

async function miradorImports(ctx: BenchContext, backend: Backend, file: string, changed: string): Promise<[ImportRun, ImportRun]> {
  const db = await freshDatabase(backend, ctx.outDir);
  try {
    const env = miradorEnv(db.url);
    await mirador(['company', 'create', COMPANY, '--name', 'Benchmark S.L.'], env);
    const first = await importFile(env, 'clientes', file);
    const again = await importFile(env, 'clientes', changed);
    return [first, again];
  } finally {
    await db.drop();
  }
}

export async function importBench(ctx: BenchContext): Promise<void> {
  const n = ctx.customers;
  const file = await ensureSampleCsv({ kind: 'clientes', rows: n, dir: ctx.fixtureDir });
  const changed = await ensureSampleCsv({ kind: 'clientes', rows: n, dir: ctx.fixtureDir, changedFrom: n - Math.round(n / 100) });
  const hasSqlite3 = existsSync(SQLITE3);
  const utf8 = hasSqlite3 ? utf8Copy(file) : null;
  const bytes = readFileSync(file).length;
  const sqlite3Runs: Timed[] = [];
  const runs = new Map<Backend, { first: ImportRun[]; again: ImportRun[] }>(ctx.backends.map((b) => [b, { first: [], again: [] }]));
  for (let round = 0; round < ctx.rounds; round++) {
    if (utf8) sqlite3Runs.push(await sqlite3Import(ctx, utf8));
    for (const backend of ctx.backends) {
      const [first, again] = await miradorImports(ctx, backend, file, changed);
      runs.get(backend)!.first.push(first);
      runs.get(backend)!.again.push(again);
    }
  }
  const section = ctx.report.section(
    `Import: ${n.toLocaleString('en')} customers × 150 columns (${fmt.mb(bytes)} MiB, Windows-1252)`,
    ['import', 'wall s', 'MiB/s', 'rows/s', 'apply s', 'peak RSS MiB', 'MiB/s ÷ sqlite3', 'target'],
    [
      `Wall time of the whole command, from spawn to exit (for Mirador: storing the upload in the queue, applying it, ` +
        `checkpointing); "apply" is the import's own duration_ms. Medians of ${ctx.rounds} alternating rounds, fresh databases, not pinned.`,
    ],
  );
  const wall = (xs: Timed[]) => median(xs.map((x) => x.wallMs));
  const ref = utf8 ? wall(sqlite3Runs) : NaN;
  const line = (name: string, xs: Timed[], rows: number, target: string) => {
    const s = wall(xs) / 1000;
    const apply = xs[0]?.applyMs === null ? '—' : (median(xs.map((x) => x.applyMs!)) / 1000).toFixed(2);
    const rss = median(xs.map((x) => x.maxRssKb ?? NaN)) / 1024;
    ctx.report.row(section, [name, s.toFixed(2), (bytes / 2 ** 20 / s).toFixed(1), fmt.int(rows / s), apply, fmt.int(rss), fmt.ratio(ref / wall(xs)), target]);
  };
  if (utf8) line('sqlite3 .import (UTF-8 copy)', sqlite3Runs, n, '—');
  else ctx.report.row(section, ['sqlite3 .import', 'not installed (apt-get install sqlite3)', '', '', '', '', '', '']);
  for (const [backend, r] of runs) {
    line(`mirador import, ${backend}, first import`, r.first, n, '≥ 0.50');
    line(`mirador import, ${backend}, re-import (1% changed)`, r.again, n, '—');
  }
  ctx.report.record('import', { bytes, sqlite3: sqlite3Runs, mirador: Object.fromEntries(runs) });
}
