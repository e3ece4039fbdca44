/** The audit trail and the shared sign-in failures, for the SQLite adapter. */
import type { Database } from 'better-sqlite3';
import type { AuditEvent } from '../../domain/audit.js';
import { afterFailure, type ThrottlePolicy } from '../../domain/sign-in-policy.js';
import type { AuditEntry, AuditQuery } from '../store.js';
import { toAuditEntry, toThrottleState, type AuditRow, type SignInFailureRow } from '../row-mappers.js';
import { cachedStatement } from './sqlite-statements.js';

/** Appends `event`, with `extra` merged into its details (ids known only inside the adapter). */
export function insertAudit(db: Database, event: AuditEvent, extra: Record<string, unknown> = {}): void {
  cachedStatement(db, 'INSERT INTO audit_log (company_id, at, actor, ip, action, details) VALUES (?, ?, ?, ?, ?, ?)').run(
    event.companyId,
    Date.now(),
    event.actor,
    event.ip,
    event.action,
    JSON.stringify({ ...event.details, ...extra }),
  );
}

export function listAudit(db: Database, companyId: number, query: AuditQuery): AuditEntry[] {
  const where = ['company_id = ?'];
  const values: unknown[] = [companyId];
  if (query.actions && query.actions.length > 0) {
    where.push(`action IN (${query.actions.map(() => '?').join(', ')})`);
    values.push(...query.actions);
  }
  if (query.before !== undefined) {
    where.push('id < ?');
    values.push(query.before);
  }
  const rows = db
    .prepare(`SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`)
    .all(...values, query.limit) as AuditRow[];
  return rows.map(toAuditEntry);
}

export function sweepAudit(db: Database, before: number): number {
  return db.prepare('DELETE FROM audit_log WHERE at < ?').run(before).changes;
}

/** Read and write in one IMMEDIATE transaction: two processes over the file count both failures. */
export function signInFailed(db: Database, email: string, now: number, policy: ThrottlePolicy): number {
  return db
    .transaction(() => {
      const row = db.prepare('SELECT failures, first_at, locked_until, expires_at FROM sign_in_failures WHERE email = ?').get(email) as
        | SignInFailureRow
        | undefined;
      const next = afterFailure(row ? toThrottleState(row) : null, now, policy);
      db.prepare(
        `INSERT INTO sign_in_failures (email, failures, first_at, locked_until, expires_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (email) DO UPDATE SET failures = excluded.failures, first_at = excluded.first_at,
           locked_until = excluded.locked_until, expires_at = excluded.expires_at`,
      ).run(email, next.failures, next.firstAt, next.lockedUntil, next.expiresAt);
      return next.lockedUntil;
    })
    .immediate();
}

export function signInLockedUntil(db: Database, email: string): number {
  return (db.prepare('SELECT locked_until FROM sign_in_failures WHERE email = ?').pluck().get(email) as number | undefined) ?? 0;
}

export function signInSucceeded(db: Database, email: string): void {
  db.prepare('DELETE FROM sign_in_failures WHERE email = ?').run(email);
}

export function sweepSignInFailures(db: Database, now: number): number {
  return db.prepare('DELETE FROM sign_in_failures WHERE expires_at < ?').run(now).changes;
}
