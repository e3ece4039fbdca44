/** Placeholder until the PostgreSQL adapter lands (issue 5). */
import type { Store } from '../store.js';

export class PostgresStore {
  static async connect(_url: string): Promise<Store> {
    throw new Error('The PostgreSQL store is not available in this build yet; use DATABASE_URL=sqlite:<path>.');
  }
}
