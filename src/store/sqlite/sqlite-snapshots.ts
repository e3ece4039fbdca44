/**
 * Snapshots in the SQLite adapter: publishing, discarding, sweeping, and the
 * reads of the request path. Writing one is sqlite-snapshot-writer.ts.
 *
 * Transactions that write begin IMMEDIATE: one begun as a read cannot become a
 * write once another process (the server's worker writing a heartbeat, say) has
 * committed meanwhile, and fails at once with SQLITE_BUSY whatever the busy
 * timeout (an import held by its deletion guard failed so in CI).
 */
import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Kind } from '../../domain/kinds.js';
import { decodeUint32s } from '../chunk-builder.js';
import { joinParts } from '../snapshot-index.js';
import { cachedStatement } from './sqlite-statements.js';
import { recordImportEnd } from './sqlite-events.js';
import { SNAPSHOT_META_COLUMNS, toHashAlgorithm, toSnapshotMeta, type SnapshotRow } from '../row-mappers.js';
import { CURRENT_HASH, type HashAlgorithm } from '../../domain/item-renderer.js';
import {
  DEFAULT_TOMBSTONE_RETENTION_MS,
  type Chunk,
  type RecordRef,
  type RecordRow,
  type SnapshotMeta,
  type SnapshotRef,
  type ThinChunk,
  type Tombstone,
} from '../store.js';
import type { AuditEvent } from '../../domain/audit.js';
import { insertAudit } from './sqlite-audit.js';

export function newPublicId(): string {
  // 16 hex characters: unique enough across databases for ETags never to collide.
  return randomBytes(8).toString('hex');
}

export function publishSnapshot(
  db: Database,
  snapshotId: number,
  finish?: { importId: number; report: unknown },
  tombstoneRetentionMs = DEFAULT_TOMBSTONE_RETENTION_MS,
  audit?: AuditEvent,
) {
  db.transaction(() => {
    const snap = db.prepare('SELECT company_id, kind, state, import_at, public_id FROM snapshots WHERE id = ?').get(snapshotId) as
      | { company_id: number; kind: Kind; state: string; import_at: number | null; public_id: string }
      | undefined;
    if (!snap || snap.state !== 'staged') throw new Error(`snapshot ${snapshotId} is not staged`);
    const now = Date.now();
    const prev = db
      .prepare('SELECT snapshot_id FROM live_snapshots WHERE company_id = ? AND kind = ?')
      .pluck()
      .get(snap.company_id, snap.kind) as number | undefined;
    if (prev !== undefined) writeTombstones(db, prev, snapshotId, snap.import_at ?? now, now - tombstoneRetentionMs);
    db.prepare(
      `UPDATE snapshots SET state = 'superseded', superseded_at = ?
       WHERE id = (SELECT snapshot_id FROM live_snapshots WHERE company_id = ? AND kind = ?)`,
    ).run(now, snap.company_id, snap.kind);
    db.prepare(
      `INSERT INTO live_snapshots (company_id, kind, snapshot_id) VALUES (?, ?, ?)
       ON CONFLICT (company_id, kind) DO UPDATE SET snapshot_id = excluded.snapshot_id`,
    ).run(snap.company_id, snap.kind, snapshotId);
    db.prepare(`UPDATE snapshots SET state = 'live', published_at = ? WHERE id = ?`).run(now, snapshotId);
    if (finish) {
      db.prepare(
        `UPDATE imports SET status = 'succeeded', finished_at = ?, report = ?, snapshot_id = ?, error = NULL WHERE id = ?`,
      ).run(now, JSON.stringify(finish.report), snapshotId, finish.importId);
      // The outbox: the event commits with the publication, or neither happens.
      recordImportEnd(db, { importId: finish.importId, type: 'import.published', snapshot: snap.public_id, report: finish.report, at: now });
    }
    if (audit) insertAudit(db, audit);
  }).immediate();
}

/** Ends an import whose file changed nothing: the live snapshot stays, untouched (see Store.keepLiveSnapshot). */
export function keepLiveSnapshot(db: Database, snapshotId: number, finish: { importId: number; report: unknown }) {
  db.transaction(() => {
    const snap = db.prepare('SELECT state, public_id FROM snapshots WHERE id = ?').get(snapshotId) as
      | { state: string; public_id: string }
      | undefined;
    if (!snap || snap.state !== 'live') throw new Error(`snapshot ${snapshotId} is no longer live`);
    const now = Date.now();
    db.prepare(
      `UPDATE imports SET status = 'succeeded', finished_at = ?, report = ?, snapshot_id = ?, error = NULL WHERE id = ?`,
    ).run(now, JSON.stringify(finish.report), snapshotId, finish.importId);
    recordImportEnd(db, { importId: finish.importId, type: 'import.published', snapshot: snap.public_id, report: finish.report, at: now });
  }).immediate();
}

/**
 * The new snapshot's tombstones: the previous one's that are recent enough
 * and not back, plus the previous records the new snapshot lacks.
 */
function writeTombstones(db: Database, prev: number, next: number, removedAt: number, keepAfter: number) {
  db.prepare(
    `INSERT INTO snapshot_tombstones (snapshot_id, id_erp, deleted_at)
     SELECT ?, t.id_erp, t.deleted_at FROM snapshot_tombstones t
     WHERE t.snapshot_id = ? AND t.deleted_at >= ?
       AND NOT EXISTS (SELECT 1 FROM records r WHERE r.snapshot_id = ? AND r.id_erp = t.id_erp)`,
  ).run(next, prev, keepAfter, next);
  db.prepare(
    `INSERT INTO snapshot_tombstones (snapshot_id, id_erp, deleted_at)
     SELECT ?, p.id_erp, ? FROM records p
     WHERE p.snapshot_id = ? AND NOT EXISTS (SELECT 1 FROM records r WHERE r.snapshot_id = ? AND r.id_erp = p.id_erp)
     ON CONFLICT (snapshot_id, id_erp) DO UPDATE SET deleted_at = excluded.deleted_at`,
  ).run(next, removedAt, prev, next);
}

export function snapshotByPublicId(db: Database, companyId: number, kind: Kind, publicId: string): SnapshotRef | null {
  const r = db
    .prepare(
      `SELECT id, state, superseded_at FROM snapshots
       WHERE public_id = ? AND company_id = ? AND kind = ? AND state IN ('staged', 'live', 'superseded')`,
    )
    .get(publicId, companyId, kind) as { id: number; state: SnapshotRef['state']; superseded_at: number | null } | undefined;
  return r ? { id: r.id, state: r.state, supersededAt: r.superseded_at } : null;
}

export function readTombstones(db: Database, snapshotId: number): Tombstone[] {
  const rows = db
    .prepare('SELECT id_erp, deleted_at FROM snapshot_tombstones WHERE snapshot_id = ? ORDER BY deleted_at, id_erp')
    .all(snapshotId) as { id_erp: string; deleted_at: number }[];
  return rows.map((r) => ({ idErp: r.id_erp, deletedAt: r.deleted_at }));
}

export function discardSnapshot(db: Database, snapshotId: number) {
  db.transaction(() => {
    // A live snapshot is never removed, nor are its records and chunks.
    if (db.prepare(`DELETE FROM snapshots WHERE id = ? AND state <> 'live'`).run(snapshotId).changes === 0) return;
    // Stored chunks and segments may be shared with other snapshots (chunk-reuse.ts): those of
    // this one's map go once no map row names them any more.
    const sources = new Set([snapshotId, ...(db.prepare('SELECT DISTINCT src_snapshot FROM chunk_map WHERE snapshot_id = ?').pluck().all(snapshotId) as number[])]);
    const segments = new Set([snapshotId, ...(db.prepare('SELECT DISTINCT seg_snapshot FROM chunk_map WHERE snapshot_id = ?').pluck().all(snapshotId) as number[])]);
    db.prepare('DELETE FROM chunk_map WHERE snapshot_id = ?').run(snapshotId);
    for (const table of ['chunks', 'thin_chunks']) {
      const unnamed = cachedStatement(
        db,
        `DELETE FROM ${table} WHERE snapshot_id = ? AND NOT EXISTS (
           SELECT 1 FROM chunk_map m WHERE m.src_snapshot = ${table}.snapshot_id AND m.src_chunk = ${table}.chunk_no)`,
      );
      for (const id of sources) unnamed.run(id);
    }
    const unnamedSegments = cachedStatement(
      db,
      `DELETE FROM chunk_segments WHERE snapshot_id = ? AND NOT EXISTS (
         SELECT 1 FROM chunk_map m WHERE m.seg_snapshot = chunk_segments.snapshot_id AND m.seg_chunk = chunk_segments.chunk_no)`,
    );
    for (const id of segments) unnamedSegments.run(id);
    db.prepare('DELETE FROM snapshot_indexes WHERE snapshot_id = ?').run(snapshotId);
    db.prepare('DELETE FROM records WHERE snapshot_id = ?').run(snapshotId);
    db.prepare('DELETE FROM snapshot_tombstones WHERE snapshot_id = ?').run(snapshotId);
  }).immediate();
}

export function nextHashAlgorithm(db: Database, companyId: number, kind: Kind): HashAlgorithm {
  const stored = db
    .prepare(`SELECT s.hash_algorithm FROM live_snapshots l JOIN snapshots s ON s.id = l.snapshot_id WHERE l.company_id = ? AND l.kind = ?`)
    .pluck()
    .get(companyId, kind) as string | undefined;
  return stored === undefined ? CURRENT_HASH : toHashAlgorithm(stored);
}

export function snapshotMeta(db: Database, snapshotId: number): SnapshotMeta | null {
  const r = cachedStatement(
    db,
    `SELECT ${SNAPSHOT_META_COLUMNS}
     FROM snapshots WHERE id = ? AND state IN ('staged', 'live', 'superseded')`,
  ).get(snapshotId) as
    | SnapshotRow
    | undefined;
  return r ? toSnapshotMeta(r) : null;
}

export function readChunks(db: Database, snapshotId: number, from: number, to: number): Chunk[] {
  const rows = cachedStatement(
    db,
    `SELECT m.chunk_no, m.first_pos, c.offsets, c.bytes FROM chunk_map m
     JOIN chunks c ON c.snapshot_id = m.src_snapshot AND c.chunk_no = m.src_chunk
     WHERE m.snapshot_id = ? AND m.chunk_no BETWEEN ? AND ? ORDER BY m.chunk_no`,
  ).all(snapshotId, from, to) as { chunk_no: number; first_pos: number; offsets: Buffer; bytes: Buffer }[];
  return rows.map((r) => ({ chunkNo: r.chunk_no, firstPos: r.first_pos, offsets: decodeUint32s(r.offsets), bytes: r.bytes }));
}

/**
 * Item `index` of the snapshot's chunk `chunkNo`, without the rest of the chunk
 * in memory: its bounds come from the chunk's offsets (stored before the bytes,
 * so reading them leaves the bytes' overflow pages alone), then one `substr`.
 */
export function readItem(db: Database, snapshotId: number, chunkNo: number, index: number): Buffer | null {
  const offsets = cachedStatement(
    db,
    `SELECT c.offsets FROM chunk_map m JOIN chunks c ON c.snapshot_id = m.src_snapshot AND c.chunk_no = m.src_chunk
     WHERE m.snapshot_id = ? AND m.chunk_no = ?`,
  )
    .pluck()
    .get(snapshotId, chunkNo) as Buffer | undefined;
  if (!offsets || index < 0 || offsets.length < 4 * (index + 2)) return null;
  const start = offsets.readUInt32LE(4 * index);
  // Items are joined by commas: an item ends one byte before the next one starts.
  const length = offsets.readUInt32LE(4 * index + 4) - 1 - start;
  return cachedStatement(
    db,
    `SELECT substr(c.bytes, ?, ?) FROM chunk_map m JOIN chunks c ON c.snapshot_id = m.src_snapshot AND c.chunk_no = m.src_chunk
     WHERE m.snapshot_id = ? AND m.chunk_no = ?`,
  )
    .pluck()
    .get(start + 1, length, snapshotId, chunkNo) as Buffer;
}

export function readThinChunks(db: Database, snapshotId: number, from: number, to: number): ThinChunk[] {
  const rows = cachedStatement(
    db,
    `SELECT m.chunk_no, m.first_pos, t.bounds, t.bytes FROM chunk_map m
     JOIN thin_chunks t ON t.snapshot_id = m.src_snapshot AND t.chunk_no = m.src_chunk
     WHERE m.snapshot_id = ? AND m.chunk_no BETWEEN ? AND ? ORDER BY m.chunk_no`,
  ).all(snapshotId, from, to) as { chunk_no: number; first_pos: number; bounds: Buffer; bytes: Buffer }[];
  return rows.map((r) => ({ chunkNo: r.chunk_no, firstPos: r.first_pos, bounds: decodeUint32s(r.bounds), bytes: r.bytes }));
}

export function readIndex(db: Database, snapshotId: number, name: string): Buffer | null {
  const parts = cachedStatement(db, 'SELECT bytes FROM snapshot_indexes WHERE snapshot_id = ? AND name = ? ORDER BY part')
    .pluck()
    .all(snapshotId, name) as Buffer[];
  return joinParts(parts);
}

export function findRecord(db: Database, snapshotId: number, idErp: string): RecordRef | null {
  const r = cachedStatement(db, 'SELECT pos, hash, actualizado_at FROM records WHERE snapshot_id = ? AND id_erp = ?').get(
    snapshotId,
    idErp,
  ) as { pos: number; hash: Buffer; actualizado_at: number } | undefined;
  return r ? { pos: r.pos, hash: r.hash, actualizadoAt: r.actualizado_at } : null;
}

export function readRecordPage(db: Database, snapshotId: number, after: string | null, limit: number): RecordRow[] {
  const rows = (
    after === null
      ? cachedStatement(db, 'SELECT id_erp, pos, hash FROM records WHERE snapshot_id = ? ORDER BY id_erp LIMIT ?').raw().all(snapshotId, limit)
      : cachedStatement(db, 'SELECT id_erp, pos, hash FROM records WHERE snapshot_id = ? AND id_erp > ? ORDER BY id_erp LIMIT ?')
          .raw()
          .all(snapshotId, after, limit)
  ) as [string, number, Buffer][];
  return rows.map(([idErp, pos, hash]) => ({ idErp, pos, hash }));
}

/**
 * Grace period before an unpublished snapshot counts as abandoned, unless its import is
 * still being stored or queued (a prepared import, see imports/prepared-import.ts), running,
 * or awaiting confirmation.
 */
const ABANDONED_AFTER_MS = 10 * 60 * 1000;

export function sweepSnapshots(db: Database, supersededBefore: number): number {
  const ids = db
    .prepare(
      `SELECT id FROM snapshots s WHERE ((s.state = 'superseded' AND s.superseded_at < ?)
         OR (s.state IN ('staging', 'staged') AND s.created_at < ? AND NOT EXISTS (
           SELECT 1 FROM imports i WHERE i.id = s.import_id AND i.status IN ('receiving', 'queued', 'running', 'awaiting_confirmation'))))
         -- A snapshot being written may still map chunks of the one it is laid out against.
         AND NOT EXISTS (SELECT 1 FROM snapshots t WHERE t.base_snapshot_id = s.id AND t.state = 'staging')`,
    )
    .pluck()
    .all(supersededBefore, Date.now() - ABANDONED_AFTER_MS) as number[];
  for (const id of ids) discardSnapshot(db, id);
  // Housekeeping is also when the WAL gets copied into the database if nothing else did it
  // (connections serving requests never checkpoint): PASSIVE never waits for readers.
  db.pragma('wal_checkpoint(PASSIVE)');
  return ids.length;
}
