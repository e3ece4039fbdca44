/**
 * Counts rows straight from the database behind a DATABASE_URL, SQLite or
 * PostgreSQL, not through the store's own answers: what tests use to check
 * what an import wrote or a sweep removed. Queries use `$1`, `$2`… for both.
 */
import Database from 'better-sqlite3';
import pg from 'pg';

export interface SqlCounter {
  /** `SELECT count(*) AS n …` with its parameters; the count. */
  count(sql: string, params?: unknown[]): Promise<number>;
  close(): Promise<void>;
}

export function sqlCounter(databaseUrl: string): SqlCounter {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    return {
      async count(sql, params = []) {
        // A connection per count: it sees everything committed by the time it opens.
        const db = new Database(file, { readonly: true, fileMustExist: true });
        try {
          return (db.prepare(sql.replace(/\$\d+/g, '?')).get(...params) as { n: number }).n;
        } finally {
          db.close();
        }
      },
      close: async () => {},
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  const connected = client.connect();
  return {
    async count(sql, params = []) {
      await connected;
      return Number((await client.query(sql, params)).rows[0].n);
    },
    async close() {
      await connected.catch(() => {});
      await client.end();
    },
  };
}
