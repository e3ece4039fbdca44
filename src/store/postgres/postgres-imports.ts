/**
 * The durable import queue for the PostgreSQL adapter. Uploads are kept as
 * 1 MiB BYTEA rows, so any instance can take an upload and any worker can
 * apply it (postgres-uploads.ts reads them back, packs and removes them).
 * Claiming is one statement with `FOR UPDATE SKIP LOCKED`: several workers in
 * several processes never take the same job, nor two jobs of one company and
 * kind.
 */
import type { Kind } from '../../domain/kinds.js';
import { UploadTooLargeError, type ImportJob, type NewImport } from '../store.js';
import type { Conn, Db } from './postgres-connection.js';
import { recordImportEnd } from './postgres-events.js';
import { toImport, type ImportRow } from '../row-mappers.js';
import type { AuditEvent } from '../../domain/audit.js';
import { insertAudit } from './postgres-audit.js';
import { copyImportFile } from './postgres-uploads.js';

const BLOB_BYTES = 1024 * 1024;
/** Blob inserts of one upload running at once (connections it holds from the pool). */
const BLOB_WRITES_IN_FLIGHT = 2;
/** Uploads cut off while being received are dropped after this long. */
const RECEIVING_EXPIRES_MS = 24 * 3600 * 1000;

export async function createImport(
  db: Db,
  input: NewImport,
  body: AsyncIterable<Buffer>,
  maxBytes: number,
  onCreated?: (id: number) => void,
  audit?: AuditEvent,
): Promise<ImportJob> {
  // The row is not claimable while `receiving`; each blob is its own short
  // statement, so a slow upload holds no transaction open.
  const { id } = (await db.one<{ id: number }>(
    `INSERT INTO imports (company_id, kind, status, filename, source, created_at)
     VALUES ($1, $2, 'receiving', $3, $4, $5) RETURNING id`,
    [input.companyId, input.kind, input.filename, input.source, Date.now()],
  ))!;
  onCreated?.(id);
  let seq = 0;
  let size = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // Blobs are inserted up to BLOB_WRITES_IN_FLIGHT at a time, each on a pooled connection of its
  // own: the server compresses and logs each (lz4, WAL) in its own backend, so two go on two cores
  // while the file is read on. One at a time, the server's work was the whole wait.
  const writing = new Set<Promise<void>>();
  // The first error of an insert, thrown where the upload is next read or ends.
  const failures: unknown[] = [];
  const flush = async () => {
    if (pendingBytes === 0) return;
    const bytes = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    const write: Promise<void> = db
      .run('INSERT INTO import_blobs (import_id, seq, bytes) VALUES ($1, $2, $3)', [id, seq++, bytes])
      .then(
        () => {},
        (err: unknown) => {
          failures.push(err);
        },
      )
      .finally(() => writing.delete(write));
    writing.add(write);
    if (writing.size >= BLOB_WRITES_IN_FLIGHT) await Promise.race(writing);
    if (failures.length > 0) throw failures[0];
  };
  try {
    for await (const part of body) {
      size += part.length;
      if (size > maxBytes) throw new UploadTooLargeError(maxBytes);
      pending.push(part);
      pendingBytes += part.length;
      if (pendingBytes >= BLOB_BYTES) await flush();
    }
    await flush();
    await Promise.all(writing);
    if (failures.length > 0) throw failures[0];
  } catch (err) {
    // No blob may land after the cleanup below.
    await Promise.all(writing);
    // Best effort: with the database gone, recoverImports drops the blobs later.
    await db
      .tx(async (c) => {
        await c.run('DELETE FROM import_blobs WHERE import_id = $1', [id]);
        await c.run('DELETE FROM imports WHERE id = $1', [id]);
      })
      .catch(() => {});
    throw err;
  }
  const r = await db.tx(async (c) => {
    const row = await c.one<ImportRow>(`UPDATE imports SET status = 'queued', size_bytes = $2 WHERE id = $1 RETURNING *`, [id, size]);
    if (audit) await insertAudit(c, audit, { import_id: id, size_bytes: size });
    return row;
  });
  return toImport(r!);
}

export async function copyImport(db: Db, id: number, source: string, audit?: AuditEvent): Promise<ImportJob | null> {
  // One transaction: the copy is queued complete or not at all. Unbounded,
  // since copying a large upload's blobs may outlast the statement timeout.
  // The original's row is held FOR SHARE: its file is neither packed nor
  // removed while it is copied (postgres-uploads.ts).
  const r = await db.tx(
    async (c) => {
      const original = await c.one<{ id: number }>(
        `SELECT id FROM imports WHERE id = $1 AND status <> 'receiving' AND file_removed_at IS NULL FOR SHARE`,
        [id],
      );
      if (!original) return null;
      const row = await c.one<ImportRow>(
        `INSERT INTO imports (company_id, kind, status, filename, size_bytes, source, created_at)
         SELECT company_id, kind, 'queued', filename, size_bytes, $2, $3 FROM imports WHERE id = $1 RETURNING *`,
        [id, source, Date.now()],
      );
      await copyImportFile(c, id, row!.id);
      if (audit) await insertAudit(c, audit, { import_id: row!.id });
      return row!;
    },
    { unbounded: true },
  );
  return r ? toImport(r) : null;
}

export async function importById(db: Db, id: number): Promise<ImportJob | null> {
  const r = await db.one<ImportRow>('SELECT * FROM imports WHERE id = $1', [id]);
  return r ? toImport(r) : null;
}

export async function listImports(db: Db, companyId: number, kind: Kind | undefined, limit: number): Promise<ImportJob[]> {
  const rows = kind
    ? await db.rows<ImportRow>('SELECT * FROM imports WHERE company_id = $1 AND kind = $2 ORDER BY id DESC LIMIT $3', [
        companyId,
        kind,
        limit,
      ])
    : await db.rows<ImportRow>('SELECT * FROM imports WHERE company_id = $1 ORDER BY id DESC LIMIT $2', [companyId, limit]);
  return rows.map(toImport);
}

export async function claimImport(db: Db, worker: string): Promise<ImportJob | null> {
  const now = Date.now();
  // Only the oldest queued job of a company and kind is a candidate, and only
  // when none of that company and kind is running or awaiting confirmation.
  // Two claimers racing for the same candidate: SKIP LOCKED passes over the
  // row the other holds, and a row that was claimed meanwhile fails the
  // `status = 'queued'` recheck on the locked version. A job claimed by a
  // transaction not yet visible here still reads as queued and older, so the
  // next job of its company and kind is not a candidate either.
  const r = await db.one<ImportRow>(
    `UPDATE imports SET status = 'running', worker = $1, started_at = $2, heartbeat_at = $2,
       attempts = attempts + 1, rows_read = 0, bytes_read = 0
     WHERE id = (
       SELECT q.id FROM imports q WHERE q.status = 'queued' AND NOT EXISTS (
         SELECT 1 FROM imports b WHERE b.company_id = q.company_id AND b.kind = q.kind
           AND (b.status IN ('running', 'awaiting_confirmation') OR (b.status = 'queued' AND b.id < q.id)))
       ORDER BY q.id LIMIT 1
       FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [worker, now],
  );
  return r ? toImport(r) : null;
}

export async function heartbeatImport(db: Db, id: number, p: { rowsRead: number; bytesRead: number }) {
  await db.run(
    `UPDATE imports SET heartbeat_at = $1, rows_read = $2, bytes_read = $3 WHERE id = $4 AND status = 'running'`,
    [Date.now(), p.rowsRead, p.bytesRead, id],
  );
}

/** The import's status, locked until the transaction that changes it ends: an import ends (and has its event) once. */
async function lockedStatus(c: Conn, id: number): Promise<string | undefined> {
  return (await c.one<{ status: string }>('SELECT status FROM imports WHERE id = $1 FOR UPDATE', [id]))?.status;
}

export async function failImport(db: Db, id: number, error: string, report: unknown) {
  await db.tx(async (c) => {
    const before = await lockedStatus(c, id);
    const now = Date.now();
    await c.run(`UPDATE imports SET status = 'failed', finished_at = $1, error = $2, report = $3 WHERE id = $4`, [
      now,
      error,
      JSON.stringify(report),
      id,
    ]);
    if (before !== undefined && before !== 'failed') await recordImportEnd(c, { importId: id, type: 'import.failed', snapshot: null, report, at: now });
  });
}

export async function holdImport(db: Db, id: number, snapshotId: number, report: unknown) {
  await db.tx(async (c) => {
    const before = await lockedStatus(c, id);
    const now = Date.now();
    await c.run(
      `UPDATE imports SET status = 'awaiting_confirmation', snapshot_id = $1, report = $2, finished_at = $3 WHERE id = $4`,
      [snapshotId, JSON.stringify(report), now, id],
    );
    if (before !== undefined && before !== 'awaiting_confirmation') {
      await recordImportEnd(c, { importId: id, type: 'import.held', snapshot: null, report, at: now });
    }
  });
}

/** Marks a held import rejected; returns the snapshot to discard, or null when it was not held. */
export async function rejectImport(db: Db, id: number, report: unknown, audit?: AuditEvent): Promise<number | null> {
  const r = await db.tx(async (c) => {
    const row = await c.one<{ snapshot_id: number | null }>(
      `UPDATE imports SET status = 'rejected', finished_at = $1, report = $2
       WHERE id = $3 AND status = 'awaiting_confirmation' RETURNING snapshot_id`,
      [Date.now(), JSON.stringify(report), id],
    );
    if (row && audit) await insertAudit(c, audit);
    return row;
  });
  return r?.snapshot_id ?? null;
}

export async function recoverImports(
  db: Db,
  isGone: (worker: string, heartbeatAt: number) => boolean,
  maxAttempts: number,
): Promise<number> {
  const running = await db.rows<{ id: number; worker: string; heartbeat_at: number; attempts: number }>(
    `SELECT id, worker, heartbeat_at, attempts FROM imports WHERE status = 'running'`,
  );
  let recovered = 0;
  for (const r of running) {
    if (!isGone(r.worker, r.heartbeat_at)) continue;
    // Each update only applies to the run that was judged gone: another
    // instance may have recovered (and a worker re-claimed) it meanwhile.
    const sameRun = `id = $1 AND status = 'running' AND worker = $2 AND heartbeat_at = $3`;
    const changed =
      r.attempts >= maxAttempts
        ? await db.tx(async (c) => {
            const now = Date.now();
            const n = await c.run(`UPDATE imports SET status = 'failed', finished_at = $4, error = $5, report = 'null' WHERE ${sameRun}`, [
              r.id,
              r.worker,
              r.heartbeat_at,
              now,
              `The import was interrupted ${r.attempts} times and was given up.`,
            ]);
            if (n > 0) await recordImportEnd(c, { importId: r.id, type: 'import.failed', snapshot: null, report: null, at: now });
            return n;
          })
        : await db.run(`UPDATE imports SET status = 'queued', worker = NULL, started_at = NULL WHERE ${sameRun}`, [
            r.id,
            r.worker,
            r.heartbeat_at,
          ]);
    recovered += changed;
  }
  // Uploads cut off while being received never become claimable: drop them.
  await db.run(
    `DELETE FROM import_blobs WHERE import_id IN (SELECT id FROM imports WHERE status = 'receiving' AND created_at < $1)`,
    [Date.now() - RECEIVING_EXPIRES_MS],
  );
  return recovered;
}
