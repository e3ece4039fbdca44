/**
 * Gzip segments in the PostgreSQL adapter (see ChunkSegment in store.ts):
 * written by a serving process's import worker, after publication, with a
 * binary COPY; read on the request path for gzip list pages.
 */
import { SEGMENT_CLAIM_EXPIRES_MS, type ChunkSegment } from '../store.js';
import type { Db } from './postgres-connection.js';
import { copyIn, CopyEncoder } from './postgres-copy.js';
import { copyOut, int4, int8, sqlInt } from './postgres-copy-out.js';

export async function writeSegments(db: Db, snapshotId: number, segments: readonly ChunkSegment[]): Promise<void> {
  if (segments.length === 0) return;
  await db.tx(async (c) => {
    // FOR SHARE: a sweep removing this snapshot (DELETE takes the row) waits for this
    // transaction and then removes these segments too; one that came first leaves no row here.
    const snap = await c.one(`SELECT 1 FROM snapshots WHERE id = $1 AND state IN ('live', 'superseded') FOR SHARE`, [snapshotId]);
    if (!snap) return;
    // Segments can be made again and reads do without them: losing the last few in a crash is
    // harmless, so their commits do not wait for the WAL to reach the disk.
    await c.run('SET LOCAL synchronous_commit = off');
    // Each segment goes where the snapshot's map says its chunk's segment is: a chunk shared with
    // an earlier snapshot, after the same chunk as there, shares that snapshot's segment row
    // (chunk-reuse.ts), which may not have been made yet.
    const located = await c.rows<{ chunk_no: number; seg_snapshot: string; seg_chunk: number }>(
      'SELECT chunk_no, seg_snapshot, seg_chunk FROM chunk_map WHERE snapshot_id = $1 AND chunk_no = ANY($2::int[])',
      [snapshotId, segments.map((s) => s.chunkNo)],
    );
    const where = new Map(located.map((r) => [r.chunk_no, { snapshot: Number(r.seg_snapshot), chunk: r.seg_chunk }]));
    const placed = segments.filter((s) => where.has(s.chunkNo));
    if (placed.length === 0) return;
    await c.run(
      'DELETE FROM chunk_segments x USING unnest($1::bigint[], $2::int[]) AS l(snapshot_id, chunk_no) WHERE x.snapshot_id = l.snapshot_id AND x.chunk_no = l.chunk_no',
      [placed.map((s) => where.get(s.chunkNo)!.snapshot), placed.map((s) => where.get(s.chunkNo)!.chunk)],
    );
    async function* encoded() {
      const enc = new CopyEncoder(4 * 1024);
      for (const s of placed) {
        const at = where.get(s.chunkNo)!;
        enc.row(6).int8(at.snapshot).int4(at.chunk).int4(s.rawLength).int4(s.contextLength).int8(s.crc32).bytesFollow(s.deflate.length);
        yield enc.take();
        yield s.deflate;
      }
      yield enc.take(true);
    }
    await copyIn(c, 'chunk_segments', ['snapshot_id', 'chunk_no', 'raw_length', 'context_length', 'crc32', 'deflate'], encoded());
  });
}

/** SKIP LOCKED: instances claiming at the same moment take different snapshots, never the same one twice. */
export async function claimSegmentPass(db: Db, now: number): Promise<number | null> {
  const row = await db.one<{ id: string }>(
    `UPDATE snapshots SET segments_claimed_at = $1
     WHERE id = (SELECT id FROM snapshots WHERE state = 'live' AND segments_done_at IS NULL
                   AND (segments_claimed_at IS NULL OR segments_claimed_at < $2)
                 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id`,
    [now, now - SEGMENT_CLAIM_EXPIRES_MS],
  );
  return row ? Number(row.id) : null;
}

export async function finishSegmentPass(db: Db, snapshotId: number): Promise<void> {
  await db.run(`UPDATE snapshots SET segments_done_at = $2 WHERE id = $1`, [snapshotId, Date.now()]);
}

export async function releaseSegmentPass(db: Db, snapshotId: number): Promise<void> {
  await db.run(`UPDATE snapshots SET segments_claimed_at = NULL WHERE id = $1`, [snapshotId]);
}

export async function readSegments(db: Db, snapshotId: number, from: number, to: number): Promise<ChunkSegment[]> {
  // By COPY, not as hex text (postgres-copy-out.ts).
  const rows = await copyOut(
    db,
    `SELECT m.chunk_no, g.raw_length, g.context_length, g.crc32, g.deflate FROM chunk_map m
     JOIN chunk_segments g ON g.snapshot_id = m.seg_snapshot AND g.chunk_no = m.seg_chunk
     WHERE m.snapshot_id = ${sqlInt(snapshotId)} AND m.chunk_no BETWEEN ${sqlInt(from)} AND ${sqlInt(to)} ORDER BY m.chunk_no`,
  );
  return rows.map((r) => ({
    chunkNo: int4(r[0]!),
    rawLength: int4(r[1]!),
    contextLength: int4(r[2]!),
    crc32: int8(r[3]!),
    deflate: r[4]!,
  }));
}

/** The snapshot's chunks whose segment is not made yet (a shared chunk may have its segment already). */
export async function chunksWithoutSegments(db: Db, snapshotId: number): Promise<number[]> {
  const rows = await db.rows<{ chunk_no: number }>(
    `SELECT m.chunk_no FROM chunk_map m WHERE m.snapshot_id = $1 AND NOT EXISTS (
       SELECT 1 FROM chunk_segments g WHERE g.snapshot_id = m.seg_snapshot AND g.chunk_no = m.seg_chunk)
     ORDER BY m.chunk_no`,
    [snapshotId],
  );
  return rows.map((r) => r.chunk_no);
}
