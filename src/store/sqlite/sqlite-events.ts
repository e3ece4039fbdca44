/**
 * Events for the SQLite adapter: written inside the transaction that ends an
 * import (the callers in sqlite-imports.ts and sqlite-snapshots.ts), listed
 * for /v1/eventos, swept after their retention.
 */
import type { Database } from 'better-sqlite3';
import { eventCounts, newEventId, renderEvent, type EventPage, type ImportEnd } from '../events.js';
import { toEndpoint, type EndpointRow } from '../webhook-rows.js';

// Databases known to have the events tables; a schema never loses them once migrated.
const migrated = new WeakSet<Database>();

function hasEventTables(db: Database): boolean {
  if (migrated.has(db)) return true;
  if (!db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhook_deliveries'`).get()) return false;
  migrated.add(db);
  return true;
}

/**
 * Inserts the event of an import that ends, and a delivery of it to every
 * enabled endpoint of the company that wants its type. Runs inside the
 * caller's transaction: the import's end, its event and its deliveries
 * commit together or not at all.
 *
 * Before migration 10 there is no events table, and nothing to record: an
 * instance of this release may end imports while `mirador migrate` has not
 * run yet (rolling upgrade), and its imports must not fail for that.
 */
export function recordImportEnd(db: Database, end: ImportEnd): void {
  if (!hasEventTables(db)) return;
  const job = db.prepare('SELECT company_id, kind FROM imports WHERE id = ?').get(end.importId) as
    | { company_id: number; kind: string }
    | undefined;
  if (!job) return;
  const publicId = newEventId();
  const body = renderEvent({
    publicId,
    type: end.type,
    createdAt: end.at,
    kind: job.kind,
    importId: end.importId,
    snapshot: end.snapshot,
    counts: eventCounts(end.type, end.report),
  });
  db.prepare('INSERT INTO events (public_id, company_id, type, created_at, body) VALUES (?, ?, ?, ?, ?)').run(
    publicId,
    job.company_id,
    end.type,
    end.at,
    body,
  );
  const endpoints = (
    db.prepare('SELECT * FROM webhook_endpoints WHERE company_id = ? AND disabled_at IS NULL').all(job.company_id) as EndpointRow[]
  ).map(toEndpoint);
  const insert = db.prepare(
    `INSERT INTO webhook_deliveries (endpoint_id, company_id, event_id, event_type, body, status, created_at, window_started_at, next_attempt_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
  );
  for (const e of endpoints) {
    if (e.eventTypes.length > 0 && !e.eventTypes.includes(end.type)) continue;
    insert.run(e.id, job.company_id, publicId, end.type, body, end.at, end.at, end.at);
  }
}

export function listEvents(db: Database, companyId: number, since: number | null, offset: number, limit: number): EventPage {
  const from = since ?? 0;
  const total = db.prepare('SELECT count(*) FROM events WHERE company_id = ? AND created_at >= ?').pluck().get(companyId, from) as number;
  const bodies = db
    .prepare('SELECT body FROM events WHERE company_id = ? AND created_at >= ? ORDER BY created_at, id LIMIT ? OFFSET ?')
    .pluck()
    .all(companyId, from, limit, offset) as string[];
  return { total, bodies };
}

export function sweepEvents(db: Database, before: number): number {
  return db.transaction(() => {
    const events = db.prepare('DELETE FROM events WHERE created_at < ?').run(before).changes;
    db.prepare('DELETE FROM webhook_attempts WHERE at < ?').run(before);
    db.prepare(`DELETE FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < ?`).run(before);
    return events;
  })();
}
