/**
 * Prepared statements kept per connection. Preparing costs more than running
 * the short indexed reads of the request path (a snapshot's meta, its chunks,
 * a record), so those are prepared once and reused.
 */
import type { Database, Statement } from 'better-sqlite3';

const byConnection = new WeakMap<Database, Map<string, Statement>>();

/** `db.prepare(sql)`, once per connection and SQL text. */
export function cachedStatement(db: Database, sql: string): Statement {
  let statements = byConnection.get(db);
  if (!statements) byConnection.set(db, (statements = new Map()));
  let stmt = statements.get(sql);
  if (!stmt) statements.set(sql, (stmt = db.prepare(sql)));
  return stmt;
}
