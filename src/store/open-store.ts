/** Chooses the adapter from DATABASE_URL. The only place that knows both. */
import type { Store, StoreOptions } from './store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) return new SqliteStore(databaseUrl.slice('sqlite:'.length), options);
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    return PostgresStore.connect(databaseUrl, options);
  }
  throw new Error(`Unsupported DATABASE_URL: ${databaseUrl}`);
}
