/**
 * Webhook endpoints, deliveries and attempts for the PostgreSQL adapter.
 * Deliveries are claimed with `FOR UPDATE SKIP LOCKED` and a lease
 * (`claimed_until`): several instances never take the same delivery, and one
 * whose instance died is taken again when its lease ends (or at once, when
 * the dead process ran on the same host: `releaseDeliveries`).
 */
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
import type { Db } from './postgres-connection.js';
import type { AuditEvent } from '../../domain/audit.js';
import { insertAudit } from './postgres-audit.js';

export async function createEndpoint(
  db: Db,
  input: { companyId: number; url: string; eventTypes: EventType[]; secret: string },
  audit?: AuditEvent,
): Promise<WebhookEndpoint> {
  return db.tx(async (c) => {
    const r = (await c.one<EndpointRow>(
      'INSERT INTO webhook_endpoints (company_id, url, event_types, secret, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [input.companyId, input.url, JSON.stringify(input.eventTypes), input.secret, Date.now()],
    ))!;
    if (audit) await insertAudit(c, audit, { webhook_id: Number(r.id) });
    return toEndpoint(r);
  });
}

export async function endpointById(db: Db, id: number): Promise<WebhookEndpoint | null> {
  const r = await db.one<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id]);
  return r ? toEndpoint(r) : null;
}

export async function listEndpoints(db: Db, companyId: number): Promise<WebhookEndpoint[]> {
  return (await db.rows<EndpointRow>('SELECT * FROM webhook_endpoints WHERE company_id = $1 ORDER BY id', [companyId])).map(toEndpoint);
}

export async function anyEnabledEndpoint(db: Db): Promise<boolean> {
  return (await db.one('SELECT 1 FROM webhook_endpoints WHERE disabled_at IS NULL LIMIT 1')) !== undefined;
}

export async function setEndpointEnabled(db: Db, id: number, enabled: boolean, audit?: AuditEvent): Promise<WebhookEndpoint | null> {
  const now = Date.now();
  await db.tx(async (c) => {
    let changed: number;
    if (enabled) {
      changed = await c.run(
        'UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL WHERE id = $1 AND disabled_at IS NOT NULL',
        [id],
      );
      if (changed > 0) {
        await c.run(
          `UPDATE webhook_deliveries SET window_started_at = $1, next_attempt_at = $1 WHERE endpoint_id = $2 AND status = 'pending'`,
          [now, id],
        );
      }
    } else {
      changed = await c.run(`UPDATE webhook_endpoints SET disabled_at = $1, disabled_reason = 'manual' WHERE id = $2 AND disabled_at IS NULL`, [
        now,
        id,
      ]);
    }
    if (changed > 0 && audit) await insertAudit(c, audit);
  });
  return endpointById(db, id);
}

export async function deleteEndpoint(db: Db, id: number, audit?: AuditEvent): Promise<boolean> {
  return db.tx(async (c) => {
    await c.run('DELETE FROM webhook_attempts WHERE endpoint_id = $1', [id]);
    await c.run('DELETE FROM webhook_deliveries WHERE endpoint_id = $1', [id]);
    const deleted = (await c.run('DELETE FROM webhook_endpoints WHERE id = $1', [id])) > 0;
    if (deleted && audit) await insertAudit(c, audit);
    return deleted;
  });
}

export async function queueDelivery(
  db: Db,
  endpointId: number,
  event: { publicId: string; type: string; body: string },
  claim?: { worker: string; leaseMs: number },
): Promise<WebhookDelivery> {
  const now = Date.now();
  const r = await db.one<DeliveryRow>(
    `INSERT INTO webhook_deliveries (endpoint_id, company_id, event_id, event_type, body, status, created_at, window_started_at,
       next_attempt_at, claimed_by, claimed_until)
     SELECT id, company_id, $1, $2, $3, 'pending', $4, $4, $4, $5, $6 FROM webhook_endpoints WHERE id = $7
     RETURNING *`,
    [event.publicId, event.type, event.body, now, claim?.worker ?? null, claim ? now + claim.leaseMs : null, endpointId],
  );
  if (!r) throw new Error(`There is no webhook endpoint ${endpointId}.`);
  return toDelivery(r);
}

export async function redeliver(db: Db, deliveryId: number): Promise<WebhookDelivery | null> {
  const now = Date.now();
  // A delivery being attempted right now keeps its claim: its result is recorded, and it is then due again at once.
  const r = await db.one<DeliveryRow>(
    `UPDATE webhook_deliveries SET status = 'pending', window_started_at = $1, next_attempt_at = $1, finished_at = NULL
     WHERE id = $2 RETURNING *`,
    [now, deliveryId],
  );
  return r ? toDelivery(r) : null;
}

export async function deliveryById(db: Db, id: number): Promise<WebhookDelivery | null> {
  const r = await db.one<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1', [id]);
  return r ? toDelivery(r) : null;
}

export async function listDeliveries(db: Db, endpointId: number, limit: number): Promise<WebhookDelivery[]> {
  const rows = await db.rows<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2', [endpointId, limit]);
  return rows.map(toDelivery);
}

export async function listAttempts(db: Db, endpointId: number, limit: number): Promise<WebhookAttempt[]> {
  const rows = await db.rows<AttemptRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2`,
    [endpointId, limit],
  );
  return rows.map(toAttempt);
}

export async function claimDeliveries(
  db: Db,
  worker: string,
  limit: number,
  leaseMs: number,
  skipEndpoints: readonly number[],
  now: number,
): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  // A row another instance is claiming is skipped (SKIP LOCKED); one it claimed already fails the
  // lease recheck on the locked version, so no delivery is ever taken twice.
  const rows = await db.rows<DeliveryRow & { url: string; secret: string }>(
    `UPDATE webhook_deliveries d SET claimed_by = $1, claimed_until = $2
     FROM webhook_endpoints e
     WHERE e.id = d.endpoint_id AND d.id IN (
       SELECT q.id FROM webhook_deliveries q
       WHERE q.status = 'pending' AND q.next_attempt_at <= $3 AND (q.claimed_until IS NULL OR q.claimed_until < $3)
         AND q.endpoint_id <> ALL($4::bigint[])
         AND EXISTS (SELECT 1 FROM webhook_endpoints x WHERE x.id = q.endpoint_id AND x.disabled_at IS NULL)
       ORDER BY q.next_attempt_at, q.id LIMIT $5
       FOR UPDATE SKIP LOCKED)
     RETURNING d.*, e.url, e.secret`,
    [worker, now + leaseMs, now, skipEndpoints, limit],
  );
  return rows.map(toClaimed);
}

export async function finishDelivery(db: Db, deliveryId: number, worker: string, result: AttemptResult): Promise<boolean> {
  return db.tx(async (c) => {
    const d = await c.one<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1 AND claimed_by = $2 FOR UPDATE', [deliveryId, worker]);
    if (!d) return false;
    await c.run(
      `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, at, duration_ms, status_code, ok, error, response_body)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [d.id, d.endpoint_id, d.event_id, d.event_type, result.at, result.durationMs, result.statusCode, result.ok, result.error, result.responseBody],
    );
    const end = result.at + result.durationMs;
    // "Send again" while this attempt ran moved the window past its start: the delivery stays due.
    const resent = d.window_started_at > result.at;
    const status = resent ? 'pending' : result.ok ? 'delivered' : result.retryAt === null ? 'failed' : 'pending';
    await c.run(
      `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, claimed_by = NULL, claimed_until = NULL,
         next_attempt_at = $2, finished_at = $3, last_status_code = $4, last_error = $5
       WHERE id = $6`,
      [
        status,
        resent ? d.next_attempt_at : status === 'pending' ? result.retryAt : null,
        status === 'pending' ? null : end,
        result.statusCode,
        result.error,
        d.id,
      ],
    );
    if (result.ok) {
      await c.run('UPDATE webhook_endpoints SET last_success_at = greatest(coalesce(last_success_at, 0), $1) WHERE id = $2', [end, d.endpoint_id]);
    }
    if (status === 'failed') {
      // Every attempt failed for the whole retry period, and nothing else reached it meanwhile.
      await c.run(
        `UPDATE webhook_endpoints SET disabled_at = $1, disabled_reason = 'failing'
         WHERE id = $2 AND disabled_at IS NULL AND (last_success_at IS NULL OR last_success_at < $3)`,
        [end, d.endpoint_id, d.window_started_at],
      );
    }
    return true;
  });
}

export async function releaseDeliveries(db: Db, isGone: (worker: string) => boolean): Promise<number> {
  const workers = await db.rows<{ claimed_by: string }>(
    `SELECT DISTINCT claimed_by FROM webhook_deliveries WHERE status = 'pending' AND claimed_by IS NOT NULL`,
  );
  let released = 0;
  for (const { claimed_by: w } of workers) {
    if (!isGone(w)) continue;
    released += await db.run(
      `UPDATE webhook_deliveries SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND status = 'pending'`,
      [w],
    );
  }
  return released;
}
