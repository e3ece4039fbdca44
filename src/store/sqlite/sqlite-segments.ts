/**
 * Gzip segments in the SQLite adapter (see ChunkSegment in store.ts): written
 * by a serving process's import worker, after publication; read on the
 * request path for gzip list pages.
 */
import type { Database } from 'better-sqlite3';
import { SEGMENT_CLAIM_EXPIRES_MS, type ChunkSegment } from '../store.js';
import { cachedStatement } from './sqlite-statements.js';

export function writeSegments(db: Database, snapshotId: number, segments: readonly ChunkSegment[]): void {
  if (segments.length === 0) return;
  db.transaction(() => {
    // A snapshot swept meanwhile gets no orphan segments: the check and the writes are one transaction.
    const exists = cachedStatement(db, `SELECT 1 FROM snapshots WHERE id = ? AND state IN ('live', 'superseded')`).get(snapshotId);
    if (!exists) return;
    // Each segment goes where the snapshot's map says its chunk's segment is: a chunk shared with
    // an earlier snapshot, after the same chunk as there, shares that snapshot's segment row
    // (chunk-reuse.ts), which may not have been made yet.
    const insert = cachedStatement(
      db,
      `INSERT INTO chunk_segments (snapshot_id, chunk_no, raw_length, context_length, crc32, deflate)
       SELECT m.seg_snapshot, m.seg_chunk, ?, ?, ?, ? FROM chunk_map m WHERE m.snapshot_id = ? AND m.chunk_no = ?
       ON CONFLICT (snapshot_id, chunk_no) DO UPDATE SET raw_length = excluded.raw_length,
         context_length = excluded.context_length, crc32 = excluded.crc32, deflate = excluded.deflate`,
    );
    for (const s of segments) insert.run(s.rawLength, s.contextLength, s.crc32, s.deflate, snapshotId, s.chunkNo);
    // IMMEDIATE: begun as a read, the transaction could not become a write once another
    // process (another server's pass, an import) had committed meanwhile (SQLITE_BUSY at once,
    // without the busy timeout), which cut passes short when two servers shared the file.
  }).immediate();
}

/** One statement: the pick and the mark cannot interleave with another connection's. */
export function claimSegmentPass(db: Database, now: number): number | null {
  const row = cachedStatement(
    db,
    `UPDATE snapshots SET segments_claimed_at = ?
     WHERE id = (SELECT id FROM snapshots WHERE state = 'live' AND segments_done_at IS NULL
                   AND (segments_claimed_at IS NULL OR segments_claimed_at < ?)
                 ORDER BY id LIMIT 1)
     RETURNING id`,
  ).get(now, now - SEGMENT_CLAIM_EXPIRES_MS) as { id: number } | undefined;
  return row?.id ?? null;
}

export function finishSegmentPass(db: Database, snapshotId: number): void {
  cachedStatement(db, `UPDATE snapshots SET segments_done_at = ? WHERE id = ?`).run(Date.now(), snapshotId);
}

export function releaseSegmentPass(db: Database, snapshotId: number): void {
  cachedStatement(db, `UPDATE snapshots SET segments_claimed_at = NULL WHERE id = ?`).run(snapshotId);
}

export function readSegments(db: Database, snapshotId: number, from: number, to: number): ChunkSegment[] {
  const rows = cachedStatement(
    db,
    `SELECT m.chunk_no, g.raw_length, g.context_length, g.crc32, g.deflate FROM chunk_map m
     JOIN chunk_segments g ON g.snapshot_id = m.seg_snapshot AND g.chunk_no = m.seg_chunk
     WHERE m.snapshot_id = ? AND m.chunk_no BETWEEN ? AND ? ORDER BY m.chunk_no`,
  ).all(snapshotId, from, to) as SegmentRow[];
  return rows.map(toSegment);
}

/** The snapshot's chunks whose segment is not made yet (a shared chunk may have its segment already). */
export function chunksWithoutSegments(db: Database, snapshotId: number): number[] {
  return cachedStatement(
    db,
    `SELECT m.chunk_no FROM chunk_map m WHERE m.snapshot_id = ? AND NOT EXISTS (
       SELECT 1 FROM chunk_segments g WHERE g.snapshot_id = m.seg_snapshot AND g.chunk_no = m.seg_chunk)
     ORDER BY m.chunk_no`,
  )
    .pluck()
    .all(snapshotId) as number[];
}

interface SegmentRow {
  chunk_no: number;
  raw_length: number;
  context_length: number;
  crc32: number;
  deflate: Buffer;
}

function toSegment(r: SegmentRow): ChunkSegment {
  return { chunkNo: r.chunk_no, rawLength: r.raw_length, contextLength: r.context_length, crc32: r.crc32, deflate: r.deflate };
}
