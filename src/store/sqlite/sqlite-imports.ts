/**
 * The durable import queue for the SQLite adapter. Uploads are kept as 1 MiB blobs
 * (sqlite-uploads.ts reads them back, packs and removes them).
 *
 * Transactions that write begin IMMEDIATE: one begun as a read cannot become a
 * write once another process (the server's worker writing a heartbeat, say) has
 * committed meanwhile, and fails at once with SQLITE_BUSY whatever the busy
 * timeout (an import held by its deletion guard failed so in CI).
 */
import type { Database } from 'better-sqlite3';
import type { Kind } from '../../domain/kinds.js';
import { UploadTooLargeError, type ImportJob, type NewImport } from '../store.js';
import { toImport, type ImportRow } from '../row-mappers.js';
import { recordImportEnd } from './sqlite-events.js';
import type { AuditEvent } from '../../domain/audit.js';
import { insertAudit } from './sqlite-audit.js';
import { copyImportFile } from './sqlite-uploads.js';

const BLOB_BYTES = 1024 * 1024;

export async function createImport(
  db: Database,
  input: NewImport,
  body: AsyncIterable<Buffer>,
  maxBytes: number,
  onCreated?: (id: number) => void,
  audit?: AuditEvent,
): Promise<ImportJob> {
  // The row is not claimable while `receiving`, and each blob is its own short
  // transaction, so a slow upload never holds the write lock.
  const id = Number(
    db
      .prepare(
        `INSERT INTO imports (company_id, kind, status, filename, source, created_at)
         VALUES (?, ?, 'receiving', ?, ?, ?)`,
      )
      .run(input.companyId, input.kind, input.filename, input.source, Date.now()).lastInsertRowid,
  );
  onCreated?.(id);
  const insertBlob = db.prepare('INSERT INTO import_blobs (import_id, seq, bytes) VALUES (?, ?, ?)');
  let seq = 0;
  let size = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pendingBytes === 0) return;
    insertBlob.run(id, seq++, Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  try {
    for await (const part of body) {
      size += part.length;
      if (size > maxBytes) throw new UploadTooLargeError(maxBytes);
      pending.push(part);
      pendingBytes += part.length;
      if (pendingBytes >= BLOB_BYTES) flush();
    }
    flush();
  } catch (err) {
    db.transaction(() => {
      db.prepare('DELETE FROM import_blobs WHERE import_id = ?').run(id);
      db.prepare('DELETE FROM imports WHERE id = ?').run(id);
    }).immediate();
    throw err;
  }
  db.transaction(() => {
    db.prepare(`UPDATE imports SET status = 'queued', size_bytes = ? WHERE id = ?`).run(size, id);
    if (audit) insertAudit(db, audit, { import_id: id, size_bytes: size });
  }).immediate();
  return importById(db, id)!;
}

export function copyImport(db: Database, id: number, source: string, audit?: AuditEvent): ImportJob | null {
  // One transaction: the copy is queued complete or not at all. A blob copy
  // of a large file holds the write lock for a moment; re-applying is rare.
  const newId = db.transaction(() => {
    const r = db
      .prepare(
        `INSERT INTO imports (company_id, kind, status, filename, size_bytes, source, created_at)
         SELECT company_id, kind, 'queued', filename, size_bytes, ?, ? FROM imports
         WHERE id = ? AND status <> 'receiving' AND file_removed_at IS NULL`,
      )
      .run(source, Date.now(), id);
    if (r.changes === 0) return null;
    const copy = Number(r.lastInsertRowid);
    copyImportFile(db, id, copy);
    if (audit) insertAudit(db, audit, { import_id: copy });
    return copy;
  }).immediate();
  return newId === null ? null : importById(db, newId);
}

export function importById(db: Database, id: number): ImportJob | null {
  const r = db.prepare('SELECT * FROM imports WHERE id = ?').get(id) as ImportRow | undefined;
  return r ? toImport(r) : null;
}

export function listImports(db: Database, companyId: number, kind: Kind | undefined, limit: number): ImportJob[] {
  const rows = (
    kind
      ? db.prepare('SELECT * FROM imports WHERE company_id = ? AND kind = ? ORDER BY id DESC LIMIT ?').all(companyId, kind, limit)
      : db.prepare('SELECT * FROM imports WHERE company_id = ? ORDER BY id DESC LIMIT ?').all(companyId, limit)
  ) as ImportRow[];
  return rows.map(toImport);
}

export function claimImport(db: Database, worker: string): ImportJob | null {
  const now = Date.now();
  // One statement: SQLite runs it under the write lock, so two workers can never claim the same row.
  const r = db
    .prepare(
      `UPDATE imports SET status = 'running', worker = ?, started_at = ?, heartbeat_at = ?, attempts = attempts + 1,
         rows_read = 0, bytes_read = 0
       WHERE id = (
         SELECT q.id FROM imports q WHERE q.status = 'queued' AND NOT EXISTS (
           SELECT 1 FROM imports b WHERE b.company_id = q.company_id AND b.kind = q.kind
             AND (b.status IN ('running', 'awaiting_confirmation') OR (b.status = 'queued' AND b.id < q.id)))
         ORDER BY q.id LIMIT 1)
       RETURNING *`,
    )
    .get(worker, now, now) as ImportRow | undefined;
  return r ? toImport(r) : null;
}

export function heartbeatImport(db: Database, id: number, p: { rowsRead: number; bytesRead: number }) {
  db.prepare(`UPDATE imports SET heartbeat_at = ?, rows_read = ?, bytes_read = ? WHERE id = ? AND status = 'running'`)
    .run(Date.now(), p.rowsRead, p.bytesRead, id);
}

/** The import's status, read inside the transaction that changes it: an import ends (and has its event) once. */
function statusOf(db: Database, id: number): string | undefined {
  return db.prepare('SELECT status FROM imports WHERE id = ?').pluck().get(id) as string | undefined;
}

export function failImport(db: Database, id: number, error: string, report: unknown) {
  db.transaction(() => {
    const before = statusOf(db, id);
    const now = Date.now();
    db.prepare(`UPDATE imports SET status = 'failed', finished_at = ?, error = ?, report = ? WHERE id = ?`)
      .run(now, error, JSON.stringify(report), id);
    if (before !== undefined && before !== 'failed') recordImportEnd(db, { importId: id, type: 'import.failed', snapshot: null, report, at: now });
  }).immediate();
}

export function holdImport(db: Database, id: number, snapshotId: number, report: unknown) {
  db.transaction(() => {
    const before = statusOf(db, id);
    const now = Date.now();
    db.prepare(`UPDATE imports SET status = 'awaiting_confirmation', snapshot_id = ?, report = ?, finished_at = ? WHERE id = ?`)
      .run(snapshotId, JSON.stringify(report), now, id);
    if (before !== undefined && before !== 'awaiting_confirmation') {
      recordImportEnd(db, { importId: id, type: 'import.held', snapshot: null, report, at: now });
    }
  }).immediate();
}

export function rejectImport(db: Database, id: number, report: unknown, discard: (snapshotId: number) => void, audit?: AuditEvent) {
  db.transaction(() => {
    const row = db.prepare(`SELECT snapshot_id FROM imports WHERE id = ? AND status = 'awaiting_confirmation'`).get(id) as
      | { snapshot_id: number | null }
      | undefined;
    if (!row) return;
    db.prepare(`UPDATE imports SET status = 'rejected', finished_at = ?, report = ? WHERE id = ?`).run(Date.now(), JSON.stringify(report), id);
    if (row.snapshot_id !== null) discard(row.snapshot_id);
    if (audit) insertAudit(db, audit);
  }).immediate();
}

export function recoverImports(
  db: Database,
  isGone: (worker: string, heartbeatAt: number) => boolean,
  maxAttempts: number,
): number {
  const running = db
    .prepare(`SELECT id, worker, heartbeat_at, attempts FROM imports WHERE status = 'running'`)
    .all() as { id: number; worker: string; heartbeat_at: number; attempts: number }[];
  let recovered = 0;
  for (const r of running) {
    if (!isGone(r.worker, r.heartbeat_at)) continue;
    recovered++;
    if (r.attempts >= maxAttempts) {
      failImport(db, r.id, `The import was interrupted ${r.attempts} times and was given up.`, null);
    } else {
      db.prepare(`UPDATE imports SET status = 'queued', worker = NULL, started_at = NULL WHERE id = ? AND status = 'running'`)
        .run(r.id);
    }
  }
  // Uploads cut off while being received never become claimable: drop them.
  db.prepare(`DELETE FROM import_blobs WHERE import_id IN (SELECT id FROM imports WHERE status = 'receiving' AND created_at < ?)`)
    .run(Date.now() - 24 * 3600 * 1000);
  return recovered;
}
