/**
 * The stores every contract suite runs against. SQLite always runs (a real
 * file in a temporary directory). PostgreSQL runs when a server answers, and
 * must run in CI (CI=true): there its absence is a failure, not a skip.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Store } from '../../src/store/store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

export interface StoreFactory {
  name: 'sqlite' | 'postgres';
  /** When set, the suite is skipped with this message. */
  skip: string | false;
  /** A fresh, migrated, empty store, and its DATABASE_URL for child processes. */
  create(): Promise<{ store: Store; databaseUrl: string; cleanup(): Promise<void> }>;
}

export function tempDir(prefix = 'mirador-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const sqliteFactory: StoreFactory = {
  name: 'sqlite',
  skip: false,
  async create() {
    const dir = tempDir();
    const file = join(dir.path, 'mirador.db');
    const store = new SqliteStore(file);
    await store.migrate();
    return {
      store,
      databaseUrl: `sqlite:${file}`,
      cleanup: async () => {
        await store.close();
        dir.remove();
      },
    };
  },
};

/** The server the PostgreSQL suites use; each store gets its own database on it. */
const POSTGRES_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * How long a connection to the test server may take. A server that is not there refuses at
 * once whatever this is; one that is there but busy (a CI machine running other work, a
 * checkpoint after large databases were dropped) took more than 2 s once, and the suites of
 * a test file then failed as if it were absent.
 */
const CONNECT_TIMEOUT_MS = 30_000;

/** Resolves to null when a server answers, else to why not. */
async function probePostgres(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return (err as Error).message || String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Runs `sql` on the server's maintenance database (CREATE / DROP DATABASE cannot run in a transaction). */
async function onServer(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end().catch(() => {});
  }
}

function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function createDatabase(name: string) {
  // A non-C default collation (ICU en-US) where the server has one, so that a
  // column missing COLLATE "C" shows up as a wrong order in the tests.
  try {
    await onServer(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  } catch {
    await onServer(`CREATE DATABASE ${name}`);
  }
}

/** Ends every connection to database `name`, as a server restart would. */
async function terminateConnections(name: string) {
  await onServer(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
}

async function dropDatabase(name: string) {
  await terminateConnections(name);
  await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * A new, empty (unmigrated) database `mirador_test_<random>`. `terminate`
 * ends every connection to it (as a server restart would); `drop` removes it.
 */
export async function freshPostgresDatabase(): Promise<{ url: string; terminate(): Promise<void>; drop(): Promise<void> }> {
  const name = `mirador_test_${randomBytes(6).toString('hex')}`;
  await createDatabase(name);
  return { url: databaseUrl(name), terminate: () => terminateConnections(name), drop: () => dropDatabase(name) };
}

let postgresFactoryMemo: Promise<StoreFactory> | undefined;

/**
 * PostgreSQL, when a server answers at TEST_DATABASE_URL (default: the local
 * one). Without a server the suites are skipped, out loud — except in CI
 * (CI=true), where every `create()` fails instead.
 */
export function postgresFactory(): Promise<StoreFactory> {
  postgresFactoryMemo ??= (async () => {
    const absent = await probePostgres(POSTGRES_URL);
    const message = `PostgreSQL suite skipped: no server at ${redact(POSTGRES_URL)} (set TEST_DATABASE_URL; required when CI=true)`;
    const required = process.env.CI === 'true';
    if (absent !== null && !required) process.stderr.write(`${message}\n  (${absent})\n`);
    return {
      name: 'postgres',
      skip: absent !== null && !required ? message : false,
      async create() {
        if (absent !== null) {
          throw new Error(`CI=true requires PostgreSQL, but no server answers at ${redact(POSTGRES_URL)}: ${absent}`);
        }
        const db = await freshPostgresDatabase();
        // As `mirador serve` opens it: listening for publications, live pointers cached.
        const store = await PostgresStore.connect(db.url, { servesRequests: true });
        try {
          await store.migrate();
        } catch (err) {
          await store.close();
          await db.drop();
          throw err;
        }
        return {
          store,
          databaseUrl: db.url,
          cleanup: async () => {
            await store.close();
            await db.drop();
          },
        };
      },
    };
  })();
  return postgresFactoryMemo;
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

export async function storeFactories(): Promise<StoreFactory[]> {
  return [sqliteFactory, await postgresFactory()];
}
