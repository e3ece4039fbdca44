/**
 * Fresh, empty databases for benchmark runs: a new SQLite file, or a new
 * PostgreSQL database on the local server (dropped afterwards). PostgreSQL is
 * used when it answers; the benchmark says so when it does not.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

export type Backend = 'sqlite' | 'postgres';

/** Where the local PostgreSQL server is; BENCH_POSTGRES_URL overrides. */
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  backend: Backend;
  url: string;
  /** For SQLite, the file. */
  path: string | null;
  /**
   * After a bulk load: on PostgreSQL, VACUUM (ANALYZE) now, so that autovacuum does not
   * start on the fresh tables in the middle of a measurement (it shares the same 2 cores).
   */
  settle(): Promise<void>;
  drop(): Promise<void>;
}

let counter = 0;

export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function freshDatabase(backend: Backend, dir: string): Promise<BenchDatabase> {
  const name = `mirador_bench_${process.pid}_${++counter}`;
  if (backend === 'sqlite') {
    const folder = join(dir, name);
    mkdirSync(folder, { recursive: true });
    const path = join(folder, 'mirador.db');
    return { backend, url: `sqlite:${path}`, path, settle: async () => {}, drop: async () => rmSync(folder, { recursive: true, force: true }) };
  }
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    backend,
    url: url.toString(),
    path: null,
    settle: () => admin('VACUUM (ANALYZE)', url.toString()),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function admin(sql: string, connectionString = ADMIN_URL): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
