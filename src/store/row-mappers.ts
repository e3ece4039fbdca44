/**
 * Row ↔ object conversions, shared by both adapters: their tables have the
 * same columns, times are epoch-ms numbers in both (PostgreSQL's BIGINTs are
 * parsed as numbers, see postgres-connection.ts), and blobs arrive as Buffers.
 */
import type { Kind } from '../domain/kinds.js';
import { HASH_ALGORITHMS, type HashAlgorithm } from '../domain/item-renderer.js';
import type { CredentialScope } from '../domain/api-keys.js';
import type { AuditAction, AuditEntry } from '../domain/audit.js';
import type { ThrottleState } from '../domain/sign-in-policy.js';
import { decodeUint32s } from './chunk-builder.js';
import type { Company, Credential, ImportJob, ImportStatus, SnapshotMeta, User } from './store.js';

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

export interface CompanyRow { id: number; slug: string; name: string; created_at: number }
export const toCompany = (r: CompanyRow): Company => ({ id: r.id, slug: r.slug, name: r.name, createdAt: new Date(r.created_at) });

export interface CredentialRow {
  id: number; company_id: number; scope: CredentialScope; prefix: string; secret_hash: Buffer;
  label: string | null; created_at: number; last_used_at: number | null; revoked_at: number | null;
  expires_at: number | null;
}
export const toCredential = (r: CredentialRow): Credential => ({
  id: r.id,
  companyId: r.company_id,
  scope: r.scope,
  prefix: r.prefix,
  secretHash: r.secret_hash,
  label: r.label,
  createdAt: new Date(r.created_at),
  lastUsedAt: date(r.last_used_at),
  revokedAt: date(r.revoked_at),
  expiresAt: date(r.expires_at),
});

export interface AuditRow { id: number; company_id: number; at: number; actor: string; ip: string | null; action: AuditAction; details: string }
export const toAuditEntry = (r: AuditRow): AuditEntry => ({
  id: r.id, companyId: r.company_id, at: new Date(r.at), actor: r.actor, ip: r.ip, action: r.action, details: JSON.parse(r.details),
});

export interface SignInFailureRow { failures: number; first_at: number; locked_until: number; expires_at: number }
export const toThrottleState = (r: SignInFailureRow): ThrottleState => ({
  failures: r.failures, firstAt: r.first_at, lockedUntil: r.locked_until, expiresAt: r.expires_at,
});

export interface UserRow { id: number; company_id: number; email: string; password_hash: string; created_at: number }
export const toUser = (r: UserRow): User => ({
  id: r.id, companyId: r.company_id, email: r.email, passwordHash: r.password_hash, createdAt: new Date(r.created_at),
});

export interface ImportRow {
  id: number; company_id: number; kind: Kind; status: ImportStatus; filename: string; size_bytes: number;
  source: string; created_at: number; started_at: number | null; finished_at: number | null;
  rows_read: number; bytes_read: number; attempts: number; worker: string | null; heartbeat_at: number | null;
  report: string | null; error: string | null; snapshot_id: number | null; file_removed_at: number | null;
}
export const toImport = (r: ImportRow): ImportJob => ({
  id: r.id,
  companyId: r.company_id,
  kind: r.kind,
  status: r.status,
  filename: r.filename,
  sizeBytes: r.size_bytes,
  source: r.source,
  createdAt: new Date(r.created_at),
  startedAt: date(r.started_at),
  finishedAt: date(r.finished_at),
  rowsRead: r.rows_read,
  bytesRead: r.bytes_read,
  attempts: r.attempts,
  report: r.report === null ? null : JSON.parse(r.report),
  error: r.error,
  snapshotId: r.snapshot_id,
  fileRemovedAt: date(r.file_removed_at),
});

/** The `snapshots` columns a SnapshotMeta is read from. */
export const SNAPSHOT_META_COLUMNS =
  'id, public_id, company_id, kind, record_count, created_at, chunk_starts, timeline, columns, published_at, indexed';

export interface SnapshotRow {
  id: number; public_id: string; company_id: number; kind: Kind; record_count: number; created_at: number;
  chunk_starts: Buffer; timeline: string; columns: string; published_at: number | null; indexed: number | boolean;
}
export const toSnapshotMeta = (r: SnapshotRow): SnapshotMeta => ({
  id: r.id,
  publicId: r.public_id,
  companyId: r.company_id,
  kind: r.kind,
  count: r.record_count,
  createdAt: r.created_at,
  chunkStarts: decodeUint32s(r.chunk_starts),
  timeline: JSON.parse(r.timeline),
  columns: JSON.parse(r.columns),
  publishedAt: r.published_at,
  indexed: Boolean(r.indexed),
});

/** A stored `snapshots.hash_algorithm`; anything else is a database this version cannot read. */
export function toHashAlgorithm(stored: string): HashAlgorithm {
  if (!(HASH_ALGORITHMS as readonly string[]).includes(stored)) throw new Error(`Unknown record hash algorithm "${stored}" in snapshots.`);
  return stored as HashAlgorithm;
}
