/**
 * Webhook endpoints, deliveries and attempts for the SQLite adapter. A claim
 * is one UPDATE under SQLite's write lock, so two processes sharing the file
 * never take the same delivery.
 */
import type { Database } from 'better-sqlite3';
import type { AuditEvent } from '../../domain/audit.js';
import { insertAudit } from './sqlite-audit.js';
import type { AttemptResult, ClaimedDelivery, EventType, WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../events.js';
import {
  ATTEMPT_COLUMNS,
  toAttempt,
  toClaimed,
  toDelivery,
  toEndpoint,
  type AttemptRow,
  type DeliveryRow,
  type EndpointRow,
} from '../webhook-rows.js';

export function createEndpoint(
  db: Database,
  input: { companyId: number; url: string; eventTypes: EventType[]; secret: string },
  audit?: AuditEvent,
): WebhookEndpoint {
  return db.transaction(() => {
    const r = db
      .prepare('INSERT INTO webhook_endpoints (company_id, url, event_types, secret, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *')
      .get(input.companyId, input.url, JSON.stringify(input.eventTypes), input.secret, Date.now()) as EndpointRow;
    if (audit) insertAudit(db, audit, { webhook_id: r.id });
    return toEndpoint(r);
  })();
}

export function endpointById(db: Database, id: number): WebhookEndpoint | null {
  const r = db.prepare('SELECT * FROM webhook_endpoints WHERE id = ?').get(id) as EndpointRow | undefined;
  return r ? toEndpoint(r) : null;
}

export function listEndpoints(db: Database, companyId: number): WebhookEndpoint[] {
  return (db.prepare('SELECT * FROM webhook_endpoints WHERE company_id = ? ORDER BY id').all(companyId) as EndpointRow[]).map(toEndpoint);
}

export function anyEnabledEndpoint(db: Database): boolean {
  return db.prepare('SELECT 1 FROM webhook_endpoints WHERE disabled_at IS NULL LIMIT 1').get() !== undefined;
}

export function setEndpointEnabled(db: Database, id: number, enabled: boolean, audit?: AuditEvent): WebhookEndpoint | null {
  const now = Date.now();
  db.transaction(() => {
    let changed: number;
    if (enabled) {
      changed = db
        .prepare('UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL WHERE id = ? AND disabled_at IS NOT NULL')
        .run(id).changes;
      if (changed > 0) {
        db.prepare(
          `UPDATE webhook_deliveries SET window_started_at = ?, next_attempt_at = ? WHERE endpoint_id = ? AND status = 'pending'`,
        ).run(now, now, id);
      }
    } else {
      changed = db
        .prepare(`UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = 'manual' WHERE id = ? AND disabled_at IS NULL`)
        .run(now, id).changes;
    }
    if (changed > 0 && audit) insertAudit(db, audit);
  })();
  return endpointById(db, id);
}

export function deleteEndpoint(db: Database, id: number, audit?: AuditEvent): boolean {
  return db.transaction(() => {
    db.prepare('DELETE FROM webhook_attempts WHERE endpoint_id = ?').run(id);
    db.prepare('DELETE FROM webhook_deliveries WHERE endpoint_id = ?').run(id);
    const deleted = db.prepare('DELETE FROM webhook_endpoints WHERE id = ?').run(id).changes > 0;
    if (deleted && audit) insertAudit(db, audit);
    return deleted;
  })();
}

export function queueDelivery(
  db: Database,
  endpointId: number,
  event: { publicId: string; type: string; body: string },
  claim?: { worker: string; leaseMs: number },
): WebhookDelivery {
  const now = Date.now();
  const r = db
    .prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, company_id, event_id, event_type, body, status, created_at, window_started_at,
         next_attempt_at, claimed_by, claimed_until)
       SELECT id, company_id, ?, ?, ?, 'pending', ?, ?, ?, ?, ? FROM webhook_endpoints WHERE id = ?
       RETURNING *`,
    )
    .get(event.publicId, event.type, event.body, now, now, now, claim?.worker ?? null, claim ? now + claim.leaseMs : null, endpointId) as
    | DeliveryRow
    | undefined;
  if (!r) throw new Error(`There is no webhook endpoint ${endpointId}.`);
  return toDelivery(r);
}

export function redeliver(db: Database, deliveryId: number): WebhookDelivery | null {
  const now = Date.now();
  // A delivery being attempted right now keeps its claim: its result is recorded, and it is then due again at once.
  const r = db
    .prepare(
      `UPDATE webhook_deliveries SET status = 'pending', window_started_at = ?, next_attempt_at = ?, finished_at = NULL
       WHERE id = ? RETURNING *`,
    )
    .get(now, now, deliveryId) as DeliveryRow | undefined;
  return r ? toDelivery(r) : null;
}

export function deliveryById(db: Database, id: number): WebhookDelivery | null {
  const r = db.prepare('SELECT * FROM webhook_deliveries WHERE id = ?').get(id) as DeliveryRow | undefined;
  return r ? toDelivery(r) : null;
}

export function listDeliveries(db: Database, endpointId: number, limit: number): WebhookDelivery[] {
  const rows = db.prepare('SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY id DESC LIMIT ?').all(endpointId, limit) as DeliveryRow[];
  return rows.map(toDelivery);
}

export function listAttempts(db: Database, endpointId: number, limit: number): WebhookAttempt[] {
  const rows = db
    .prepare(`SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts WHERE endpoint_id = ? ORDER BY id DESC LIMIT ?`)
    .all(endpointId, limit) as AttemptRow[];
  return rows.map(toAttempt);
}

export function claimDeliveries(
  db: Database,
  worker: string,
  limit: number,
  leaseMs: number,
  skipEndpoints: readonly number[],
  now: number,
): ClaimedDelivery[] {
  if (limit <= 0) return [];
  return db.transaction(() => {
    const rows = db
      .prepare(
        `UPDATE webhook_deliveries SET claimed_by = ?, claimed_until = ?
         WHERE id IN (
           SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
           WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.claimed_until IS NULL OR d.claimed_until < ?)
             AND e.disabled_at IS NULL AND d.endpoint_id NOT IN (SELECT value FROM json_each(?))
           ORDER BY d.next_attempt_at, d.id LIMIT ?)
         RETURNING *`,
      )
      .all(worker, now + leaseMs, now, now, JSON.stringify(skipEndpoints), limit) as DeliveryRow[];
    const endpoint = db.prepare('SELECT url, secret FROM webhook_endpoints WHERE id = ?');
    return rows.map((r) => toClaimed({ ...r, ...(endpoint.get(r.endpoint_id) as { url: string; secret: string }) }));
  }).immediate();
}

export function finishDelivery(db: Database, deliveryId: number, worker: string, result: AttemptResult): boolean {
  return db.transaction(() => {
    const d = db.prepare('SELECT * FROM webhook_deliveries WHERE id = ? AND claimed_by = ?').get(deliveryId, worker) as DeliveryRow | undefined;
    if (!d) return false;
    db.prepare(
      `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, at, duration_ms, status_code, ok, error, response_body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(d.id, d.endpoint_id, d.event_id, d.event_type, result.at, result.durationMs, result.statusCode, result.ok ? 1 : 0, result.error, result.responseBody);
    const end = result.at + result.durationMs;
    // "Send again" while this attempt ran moved the window past its start: the delivery stays due.
    const resent = d.window_started_at > result.at;
    const status = resent ? 'pending' : result.ok ? 'delivered' : result.retryAt === null ? 'failed' : 'pending';
    db.prepare(
      `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, claimed_by = NULL, claimed_until = NULL,
         next_attempt_at = ?, finished_at = ?, last_status_code = ?, last_error = ?
       WHERE id = ?`,
    ).run(
      status,
      resent ? d.next_attempt_at : status === 'pending' ? result.retryAt : null,
      status === 'pending' ? null : end,
      result.statusCode,
      result.error,
      d.id,
    );
    if (result.ok) db.prepare('UPDATE webhook_endpoints SET last_success_at = max(coalesce(last_success_at, 0), ?) WHERE id = ?').run(end, d.endpoint_id);
    if (status === 'failed') {
      // Every attempt failed for the whole retry period, and nothing else reached it meanwhile.
      db.prepare(
        `UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = 'failing'
         WHERE id = ? AND disabled_at IS NULL AND (last_success_at IS NULL OR last_success_at < ?)`,
      ).run(end, d.endpoint_id, d.window_started_at);
    }
    return true;
  }).immediate();
}

export function releaseDeliveries(db: Database, isGone: (worker: string) => boolean): number {
  const workers = db
    .prepare(`SELECT DISTINCT claimed_by FROM webhook_deliveries WHERE status = 'pending' AND claimed_by IS NOT NULL`)
    .pluck()
    .all() as string[];
  let released = 0;
  for (const w of workers.filter(isGone)) {
    released += db
      .prepare(`UPDATE webhook_deliveries SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ? AND status = 'pending'`)
      .run(w).changes;
  }
  return released;
}
