/**
 * Events for the PostgreSQL adapter: written inside the transaction that ends
 * an import (the callers in postgres-imports.ts and postgres-snapshots.ts),
 * listed for /v1/eventos, swept after their retention.
 */
import { eventCounts, newEventId, renderEvent, type EventPage, type ImportEnd } from '../events.js';
import { toEndpoint, type EndpointRow } from '../webhook-rows.js';
import type { Conn, Db } from './postgres-connection.js';

/**
 * Inserts the event of an import that ends, and a delivery of it to every
 * enabled endpoint of the company that wants its type, on the caller's
 * transaction: the import's end, its event and its deliveries commit
 * together or not at all.
 *
 * Before migration 10 there is no events table, and nothing to record: an
 * instance of this release may end imports while `mirador migrate` has not
 * run yet (rolling upgrade), and its imports must not fail for that. One
 * catalog lookup per import end, which is rare.
 */
export async function recordImportEnd(c: Conn, end: ImportEnd): Promise<void> {
  const tables = await c.one<{ ok: boolean }>(`SELECT to_regclass('webhook_deliveries') IS NOT NULL AS ok`);
  if (!tables?.ok) return;
  const job = await c.one<{ company_id: number; kind: string }>('SELECT company_id, kind FROM imports WHERE id = $1', [end.importId]);
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
  await c.run('INSERT INTO events (public_id, company_id, type, created_at, body) VALUES ($1, $2, $3, $4, $5)', [
    publicId,
    job.company_id,
    end.type,
    end.at,
    body,
  ]);
  const endpoints = (
    await c.rows<EndpointRow>('SELECT * FROM webhook_endpoints WHERE company_id = $1 AND disabled_at IS NULL', [job.company_id])
  ).map(toEndpoint);
  for (const e of endpoints) {
    if (e.eventTypes.length > 0 && !e.eventTypes.includes(end.type)) continue;
    await c.run(
      `INSERT INTO webhook_deliveries (endpoint_id, company_id, event_id, event_type, body, status, created_at, window_started_at, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6, $6)`,
      [e.id, job.company_id, publicId, end.type, body, end.at],
    );
  }
}

export async function listEvents(db: Db, companyId: number, since: number | null, offset: number, limit: number): Promise<EventPage> {
  const from = since ?? 0;
  const [count, rows] = await Promise.all([
    db.one<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE company_id = $1 AND created_at >= $2', [companyId, from]),
    db.rows<{ body: string }>(
      'SELECT body FROM events WHERE company_id = $1 AND created_at >= $2 ORDER BY created_at, id LIMIT $3 OFFSET $4',
      [companyId, from, limit, offset],
    ),
  ]);
  return { total: count!.n, bodies: rows.map((r) => r.body) };
}

export async function sweepEvents(db: Db, before: number): Promise<number> {
  return db.tx(async (c) => {
    const events = await c.run('DELETE FROM events WHERE created_at < $1', [before]);
    await c.run('DELETE FROM webhook_attempts WHERE at < $1', [before]);
    await c.run(`DELETE FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < $1`, [before]);
    return events;
  });
}
