/**
 * The benchmark's data, loaded the way a company loads it: a company and a
 * key made with the `mirador` command, then every kind imported with
 * `mirador import` (customers, and articles, works and notices in the sample
 * files' proportions), then a re-export of the customers in which the last 1%
 * changed, so that `updated_since` selects a real suffix.
 */
import { statSync } from 'node:fs';
import { KINDS, type Kind } from '../src/domain/kinds.js';
import { code, ensureSampleCsv, ROWS_PER_CUSTOMER } from './clientes-fixture.js';
import { mirador, miradorEnv, type Env } from './processes.js';
import { openStore } from '../src/store/open-store.js';

export const COMPANY = 'bench';

export interface ImportRun {
  kind: Kind;
  file: string;
  bytes: number;
  rows: number;
  /** The whole `mirador import` command, from spawn to exit. */
  wallMs: number;
  /** The import's own duration (report.duration_ms): applying it, without the upload and process start. */
  applyMs: number;
  maxRssKb: number | null;
  report: { status: string; inserted: number; updated: number; unchanged: number; rows_read: number };
}

export interface Dataset {
  env: Env;
  key: string;
  customers: number;
  imports: ImportRun[];
}

export function rowsOf(kind: Kind, customers: number): number {
  return Math.round(customers * ROWS_PER_CUSTOMER[kind]);
}

/** The files of a dataset of `customers` customers, written on first use. */
export async function datasetFiles(customers: number, dir: string): Promise<{ kind: Kind; file: string }[]> {
  const files = [];
  for (const kind of KINDS) files.push({ kind, file: await ensureSampleCsv({ kind, rows: rowsOf(kind, customers), dir }) });
  const changedFrom = customers - Math.round(customers / 100);
  files.push({ kind: 'clientes' as Kind, file: await ensureSampleCsv({ kind: 'clientes', rows: customers, dir, changedFrom }) });
  return files;
}

/** Runs `mirador import` once, timed. */
export async function importFile(env: Env, kind: Kind, file: string): Promise<ImportRun> {
  const r = await mirador(['import', COMPANY, kind, file, '--json'], env, { timed: true });
  const report = JSON.parse(r.stdout) as ImportRun['report'] & { duration_ms: number };
  if (report.status !== 'succeeded') throw new Error(`import of ${file} ${report.status}: ${r.stdout}`);
  return {
    kind,
    file,
    bytes: statSync(file).size,
    rows: report.rows_read,
    wallMs: r.wallMs,
    applyMs: report.duration_ms,
    maxRssKb: r.maxRssKb,
    report,
  };
}

/**
 * Waits until a running server's import process has made the gzip segments of
 * every live snapshot of the benchmark's company (it does so after each
 * publication, when no import waits): measuring while it works would measure
 * it too. Passes write their segments in chunk order, so a snapshot whose
 * last chunk has one is done. Returns how long it waited.
 */
export async function waitForSegments(databaseUrl: string, timeoutMs = 600_000): Promise<number> {
  const started = performance.now();
  const store = await openStore(databaseUrl);
  try {
    const company = await store.companyBySlug(COMPANY);
    if (!company) throw new Error(`no company ${COMPANY}`);
    for (;;) {
      let pending = 0;
      for (const kind of KINDS) {
        const id = await store.liveSnapshotId(company.id, kind);
        const meta = id === null ? null : await store.snapshotMeta(id);
        const last = (meta?.chunkStarts.length ?? 0) - 1;
        if (meta && last >= 0 && (await store.readSegments(meta.id, last, last)).length === 0) pending++;
      }
      if (pending === 0) return performance.now() - started;
      if (performance.now() - started > timeoutMs) throw new Error(`gzip segments of ${pending} snapshots not made within ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await store.close();
  }
}

/** Creates the company and key, and imports every file of the dataset. */
export async function loadDataset(databaseUrl: string, customers: number, fixtureDir: string): Promise<Dataset> {
  const env = miradorEnv(databaseUrl);
  await mirador(['company', 'create', COMPANY, '--name', 'Benchmark S.L.'], env);
  const { key } = JSON.parse((await mirador(['key', 'create', COMPANY, '--json'], env)).stdout) as { key: string };
  const imports: ImportRun[] = [];
  for (const { kind, file } of await datasetFiles(customers, fixtureDir)) imports.push(await importFile(env, kind, file));
  return { env, key, customers, imports };
}

/** `actualizado_at` of the re-import, read from the last customer (changed in it) through a running server. */
export async function reimportTime(base: string, key: string, customers: number): Promise<string> {
  const res = await fetch(`${base}/v1/clientes/${code('C', customers - 1)}`, { headers: { authorization: `Bearer ${key}` } });
  if (!res.ok) throw new Error(`reading the last customer: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { item: { actualizado_at: string } }).item.actualizado_at;
}
