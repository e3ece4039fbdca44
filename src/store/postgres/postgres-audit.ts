/** The audit trail and the shared sign-in failures, for the PostgreSQL adapter. */
import type { AuditEvent } from '../../domain/audit.js';
import { afterFailure, type ThrottlePolicy } from '../../domain/sign-in-policy.js';
import type { AuditEntry, AuditQuery } from '../store.js';
import { toAuditEntry, toThrottleState, type AuditRow, type SignInFailureRow } from '../row-mappers.js';
import type { Conn, Db } from './postgres-connection.js';

/** Appends `event` (on `q`: the pool, or a transaction's connection), with `extra` merged into its details. */
export async function insertAudit(q: Db | Conn, event: AuditEvent, extra: Record<string, unknown> = {}): Promise<void> {
  await q.run('INSERT INTO audit_log (company_id, at, actor, ip, action, details) VALUES ($1, $2, $3, $4, $5, $6)', [
    event.companyId,
    Date.now(),
    event.actor,
    event.ip,
    event.action,
    JSON.stringify({ ...event.details, ...extra }),
  ]);
}

export async function listAudit(db: Db, companyId: number, query: AuditQuery): Promise<AuditEntry[]> {
  const rows = await db.rows<AuditRow>(
    `SELECT * FROM audit_log
     WHERE company_id = $1 AND ($2::text[] IS NULL OR action = ANY($2)) AND ($3::bigint IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4`,
    [companyId, query.actions && query.actions.length > 0 ? query.actions : null, query.before ?? null, query.limit],
  );
  return rows.map(toAuditEntry);
}

export function sweepAudit(db: Db, before: number): Promise<number> {
  return db.run('DELETE FROM audit_log WHERE at < $1', [before]);
}

/**
 * The row is locked while the next state is computed, so failures counted at
 * once by several instances all count. The first failure of an email inserts
 * the row; two first failures at once meet on the primary key, and the loser
 * retries, then finding the row.
 */
export async function signInFailed(db: Db, email: string, now: number, policy: ThrottlePolicy): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.tx(async (c) => {
        const row = await c.one<SignInFailureRow>(
          'SELECT failures, first_at, locked_until, expires_at FROM sign_in_failures WHERE email = $1 FOR UPDATE',
          [email],
        );
        const next = afterFailure(row ? toThrottleState(row) : null, now, policy);
        const values = [email, next.failures, next.firstAt, next.lockedUntil, next.expiresAt];
        if (row) {
          await c.run('UPDATE sign_in_failures SET failures = $2, first_at = $3, locked_until = $4, expires_at = $5 WHERE email = $1', values);
        } else {
          await c.run('INSERT INTO sign_in_failures (email, failures, first_at, locked_until, expires_at) VALUES ($1, $2, $3, $4, $5)', values);
        }
        return next.lockedUntil;
      });
    } catch (err) {
      if ((err as { code?: unknown }).code !== '23505' || attempt > 0) throw err;
    }
  }
}

export async function signInLockedUntil(db: Db, email: string): Promise<number> {
  return (await db.one<{ locked_until: number }>('SELECT locked_until FROM sign_in_failures WHERE email = $1', [email]))?.locked_until ?? 0;
}

export async function signInSucceeded(db: Db, email: string): Promise<void> {
  await db.run('DELETE FROM sign_in_failures WHERE email = $1', [email]);
}

export function sweepSignInFailures(db: Db, now: number): Promise<number> {
  return db.run('DELETE FROM sign_in_failures WHERE expires_at < $1', [now]);
}
