/**
 * Import speed (issue 4 target 4, issue 3 point 10, issue 5 point 4, issue
 * 23): the customers file through `mirador import` (a fresh database each
 * round, SQLite and PostgreSQL), and through a running `mirador serve`
 * (uploaded with an upload token, see server-import.ts), beside `sqlite3`'s
 * own `.import` of the same file converted to UTF-8, in alternating rounds;
 * each time the first import, then the nightly re-import with the last 1% of
 * customers changed (change detection, the general path), then the same file
 * again: 0% changed, which keeps the live snapshot (`unchanged_snapshot`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { BenchContext } from './bench-context.js';
import { ensureSampleCsv } from './clientes-fixture.js';
import { freshDatabase, type Backend } from './databases.js';
import { COMPANY, importFile, type ImportRun } from './dataset.js';
import { mirador, miradorEnv, run } from './processes.js';
import { serverImports, type ServerImportRun } from './server-import.js';
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

/** The three imports of a round, in order: first, 1% changed, 0% changed. */
const STEPS = ['first import', 're-import, 1% changed', 're-import, 0% changed'] as const;

async function miradorImports(ctx: BenchContext, backend: Backend, files: string[]): Promise<ImportRun[]> {
  const db = await freshDatabase(backend, ctx.outDir);
  try {
    const env = miradorEnv(db.url);
    await mirador(['company', 'create', COMPANY, '--name', 'Benchmark S.L.'], env);
    const runs: ImportRun[] = [];
    for (const file of files) runs.push(await importFile(env, 'clientes', file));
    return runs;
  } finally {
    await db.drop();
  }
}

async function throughServer(ctx: BenchContext, backend: Backend, files: string[]): Promise<ServerImportRun[]> {
  const db = await freshDatabase(backend, ctx.outDir);
  try {
    return await serverImports(db, backend, files);
  } finally {
    await db.drop();
  }
}

/** Issue 23's targets, as MiB/s ÷ sqlite3 .import's. */
function target(backend: Backend, step: (typeof STEPS)[number]): string {
  if (step === 're-import, 0% changed') return '—';
  return backend === 'sqlite' ? '≥ 0.50' : '≥ 0.40';
}

export async function importBench(ctx: BenchContext): Promise<void> {
  const n = ctx.customers;
  const file = await ensureSampleCsv({ kind: 'clientes', rows: n, dir: ctx.fixtureDir });
  const changed = await ensureSampleCsv({ kind: 'clientes', rows: n, dir: ctx.fixtureDir, changedFrom: n - Math.round(n / 100) });
  // First import, 1% changed, then the same file again: 0% changed.
  const files = [file, changed, changed];
  const hasSqlite3 = existsSync(SQLITE3);
  const utf8 = hasSqlite3 ? utf8Copy(file) : null;
  const bytes = readFileSync(file).length;
  const sqlite3Runs: Timed[] = [];
  const cli = new Map<Backend, ImportRun[][]>(ctx.backends.map((b) => [b, []]));
  const served = new Map<Backend, ServerImportRun[][]>(ctx.backends.map((b) => [b, []]));
  for (let round = 0; round < ctx.rounds; round++) {
    if (utf8) sqlite3Runs.push(await sqlite3Import(ctx, utf8));
    for (const backend of ctx.backends) {
      cli.get(backend)!.push(await miradorImports(ctx, backend, files));
      served.get(backend)!.push(await throughServer(ctx, backend, files));
    }
  }
  const section = ctx.report.section(
    `Import: ${n.toLocaleString('en')} customers × 150 columns (${fmt.mb(bytes)} MiB, Windows-1252)`,
    ['import', 'wall s', 'MiB/s', 'rows/s', 'apply s', 'segments s', 'peak RSS MiB', 'MiB/s ÷ sqlite3', 'target'],
    [
      `"mirador import": wall time of the whole command, from spawn to exit (storing the upload in the queue, applying it, ` +
        `checkpointing); its peak RSS from /usr/bin/time. "serve": a running \`mirador serve\`, the file PUT with an upload token ` +
        `(plain, not gzip), timed from the first byte sent to the status URL (polled every 50 ms) saying the import ended; ` +
        `the server runs under the unit's environment (deploy/mirador.service, --no-deploy-env without), the CLI bare; ` +
        `peak RSS is the server's / the import child's (VmHWM sampled every 50 ms; the highest of the rounds). "apply" is the import's own duration_ms; ` +
        `"segments" the server's gzip segment pass after the publication, waited for before the next upload. ` +
        `Each round: first import, the last 1% of customers changed, then that same file again (0% changed: the live snapshot ` +
        `is kept). Medians of ${ctx.rounds} alternating rounds, fresh databases, not pinned.`,
    ],
  );
  const ref = utf8 ? median(sqlite3Runs.map((x) => x.wallMs)) : NaN;
  const mibs = (ms: number) => (bytes / 2 ** 20 / (ms / 1000)).toFixed(1);
  const secs = (ms: number) => (ms / 1000).toFixed(2);
  if (utf8) {
    const rss = median(sqlite3Runs.map((x) => x.maxRssKb ?? NaN)) / 1024;
    ctx.report.row(section, ['sqlite3 .import (UTF-8 copy)', secs(ref), mibs(ref), fmt.int(n / (ref / 1000)), '—', '—', fmt.int(rss), '1.00', '—']);
  } else {
    ctx.report.row(section, ['sqlite3 .import', 'not installed (apt-get install sqlite3)', '', '', '', '', '', '', '']);
  }
  const unchangedNote = (reports: { unchanged_snapshot?: boolean }[]) =>
    reports.every((r) => r.unchanged_snapshot === true) ? ' (kept the live snapshot)' : reports.some((r) => r.unchanged_snapshot) ? ' (kept it in some rounds)' : ' (rewrote the snapshot)';
  for (const backend of ctx.backends) {
    STEPS.forEach((step, k) => {
      const xs = cli.get(backend)!.map((r) => r[k]!);
      const wall = median(xs.map((x) => x.wallMs));
      const rss = median(xs.map((x) => x.maxRssKb ?? NaN)) / 1024;
      const note = k === 2 ? unchangedNote(xs.map((x) => x.report as { unchanged_snapshot?: boolean })) : '';
      ctx.report.row(section, [
        `mirador import, ${backend}, ${step}${note}`, secs(wall), mibs(wall), fmt.int(n / (wall / 1000)),
        secs(median(xs.map((x) => x.applyMs))), '—', fmt.int(rss), fmt.ratio(ref / wall), target(backend, step),
      ]);
    });
    STEPS.forEach((step, k) => {
      const xs = served.get(backend)!.map((r) => r[k]!);
      const wall = median(xs.map((x) => x.wallMs));
      const server = Math.max(...xs.map((x) => x.serverRssKb)) / 1024;
      const child = Math.max(...xs.map((x) => x.childRssKb)) / 1024;
      const note = k === 2 ? unchangedNote(xs.map((x) => x.report)) : '';
      ctx.report.row(section, [
        `serve (upload token), ${backend}, ${step}${note}`, secs(wall), mibs(wall), fmt.int(n / (wall / 1000)),
        secs(median(xs.map((x) => x.applyMs))), secs(median(xs.map((x) => x.segmentsMs))),
        `${fmt.int(server)} / ${fmt.int(child)}`, fmt.ratio(ref / wall), target(backend, step),
      ]);
    });
  }
  ctx.report.record('import', { bytes, sqlite3: sqlite3Runs, mirador: Object.fromEntries(cli), serve: Object.fromEntries(served) });
}
