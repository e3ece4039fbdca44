/**
 * Loads the thousand companies of the tenants benchmark through the import
 * pipeline, in one process. `mirador import` per file would start a process
 * (and open the store, and migrate) for each of 4,000 imports; here the
 * benchmark does what that command does for each file, in a loop: store the
 * upload and prepare the import from the same file (`queueLocalFile`), then
 * claim and apply it with an `ImportWorker` (`runOnce`, the queue's own claim,
 * guards, publication and report). Then the gzip segments every serving
 * process's worker would make after publication (`segmentOnce`), timed apart,
 * so that no server of the measurements makes them meanwhile.
 *
 * Companies and API keys are made as `mirador company create` and
 * `mirador key create` make them (the store's createCompany and
 * createCredential with a fresh read credential).
 */
import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import { cliWho } from '../src/cli/cli-context.js';
import { generateCredential } from '../src/domain/api-keys.js';
import { uploadAudit } from '../src/domain/audit.js';
import { KINDS, type Kind } from '../src/domain/kinds.js';
import { plainUpload } from '../src/imports/compressed-upload.js';
import { ImportWorker } from '../src/imports/import-worker.js';
import { discard, queueLocalFile } from '../src/imports/prepared-import.js';
import { openStore } from '../src/store/open-store.js';
import { ensureSampleCsv } from './clientes-fixture.js';
import type { TenantPlan } from './tenants-plan.js';

export interface Tenant extends TenantPlan {
  key: string;
  /** `actualizado_at` of its records (one import each: the same for all of them). */
  importedAt?: string;
}

export interface LoadFigures {
  /** Writing the CSV files (shared by companies of the same size; reused between runs). */
  generateMs: number;
  files: number;
  imports: number;
  records: number;
  bytes: number;
  /** Storing, preparing and applying every import. */
  importMs: number;
  /** The slowest import and its size. */
  slowest: { ms: number; slug: string; kind: Kind; rows: number };
  /** Making the gzip segments of every live snapshot afterwards. */
  segmentsMs: number;
  segmentPasses: number;
}

const READ_BYTES = 1024 * 1024;
const DAY = 86_400_000;

/** The CSV files every company needs, written on first use (ensureSampleCsv), and how long that took. */
export async function tenantFiles(plans: readonly TenantPlan[], dir: string): Promise<{ files: Map<string, string>; ms: number }> {
  const started = performance.now();
  const files = new Map<string, string>();
  for (const p of plans) {
    for (const kind of KINDS) {
      const k = `${kind}:${p.rows[kind]}`;
      if (!files.has(k)) files.set(k, await ensureSampleCsv({ kind, rows: p.rows[kind], dir }));
    }
  }
  return { files, ms: performance.now() - started };
}

export async function loadTenants(
  databaseUrl: string,
  plans: readonly TenantPlan[],
  fixtureDir: string,
  log: (line: string) => void,
): Promise<{ tenants: Tenant[]; figures: LoadFigures }> {
  const { files, ms: generateMs } = await tenantFiles(plans, fixtureDir);
  log(`  ${files.size} CSV files ready in ${(generateMs / 1000).toFixed(1)} s`);
  const store = await openStore(databaseUrl);
  await store.migrate();
  const worker = new ImportWorker(store, { snapshotRetentionMs: DAY, tombstoneRetentionMs: 30 * DAY });
  const tenants: Tenant[] = [];
  const figures: LoadFigures = {
    generateMs,
    files: files.size,
    imports: 0,
    records: 0,
    bytes: 0,
    importMs: 0,
    slowest: { ms: 0, slug: '', kind: 'clientes', rows: 0 },
    segmentsMs: 0,
    segmentPasses: 0,
  };
  try {
    const started = performance.now();
    let lastLog = started;
    for (const plan of plans) {
      const company = await store.createCompany(plan.slug, `Empresa ${plan.slug} S.L.`);
      const fresh = generateCredential('read');
      await store.createCredential({ companyId: company.id, scope: 'read', prefix: fresh.prefix, secretHash: fresh.secretHash, label: 'bench' });
      tenants.push({ ...plan, key: fresh.token });
      for (const kind of KINDS) {
        const file = files.get(`${kind}:${plan.rows[kind]}`)!;
        const one = performance.now();
        const queued = await queueLocalFile(
          store,
          {
            companyId: company.id,
            kind,
            filename: basename(file),
            source: 'cli',
            sizeBytes: statSync(file).size,
            open: () => plainUpload(createReadStream(file, { highWaterMark: READ_BYTES }), false),
            audit: uploadAudit(cliWho(), company.id, kind, basename(file), 'cli'),
          },
          Number.MAX_SAFE_INTEGER,
          { prepare: true },
        );
        const ran = await worker.runOnce(queued.prepared);
        if (!ran || ran.job.id !== queued.job.id) throw new Error(`import of ${file} for ${plan.slug} was not the one claimed`);
        if (!ran.prepared) await discard(store, queued.prepared);
        if (ran.report.status !== 'succeeded') throw new Error(`import of ${file} for ${plan.slug}: ${ran.report.status} ${JSON.stringify(ran.report)}`);
        const ms = performance.now() - one;
        if (ms > figures.slowest.ms) figures.slowest = { ms, slug: plan.slug, kind, rows: plan.rows[kind] };
        figures.imports++;
        figures.records += ran.report.rows_read;
        figures.bytes += statSync(file).size;
      }
      if (performance.now() - lastLog > 15_000) {
        lastLog = performance.now();
        log(`  ${tenants.length}/${plans.length} companies, ${figures.records.toLocaleString('en')} records, ${((lastLog - started) / 1000).toFixed(0)} s`);
      }
    }
    figures.importMs = performance.now() - started;
    const segStarted = performance.now();
    while (await worker.segmentOnce()) figures.segmentPasses++;
    figures.segmentsMs = performance.now() - segStarted;
  } finally {
    await store.close();
  }
  return { tenants, figures };
}

/** The database's size on disk (the store's own account: SQLite's pages, PostgreSQL's pg_database_size). */
export async function databaseBytes(databaseUrl: string): Promise<number> {
  const store = await openStore(databaseUrl);
  try {
    return (await store.storageSize()).bytes;
  } finally {
    await store.close();
  }
}

/**
 * The largest tables and indexes, in MiB: what the database's size is made
 * of. SQLite: the dbstat table (one scan of the file); PostgreSQL:
 * pg_total_relation_size (TOAST and indexes with their table).
 */
export async function databaseBreakdown(db: { backend: 'sqlite' | 'postgres'; url: string; path: string | null }): Promise<[string, number][]> {
  const mib = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;
  if (db.backend === 'sqlite') {
    const { default: Database } = await import('better-sqlite3');
    const conn = new Database(db.path!, { readonly: true });
    try {
      const rows = conn.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 12').all() as { name: string; bytes: number }[];
      return rows.map((r) => [r.name, mib(r.bytes)]);
    } finally {
      conn.close();
    }
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const r = await client.query<{ name: string; bytes: string }>(
      `SELECT relname AS name, pg_total_relation_size(oid)::text AS bytes FROM pg_class
        WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY pg_total_relation_size(oid) DESC LIMIT 12`,
    );
    return r.rows.map((row) => [row.name, mib(Number(row.bytes))]);
  } finally {
    await client.end();
  }
}
