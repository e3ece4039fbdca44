/**
 * Makes the gzip segments of a published snapshot (see ChunkSegment in
 * store.ts): data changes only when an import is applied, so each chunk is
 * compressed once, here, instead of on every first gzip download. Run by the
 * process that applied the import, after publication — readers never wait
 * for it, and a chunk without a segment is compressed when read, so a crash
 * midway costs speed, never correctness.
 */
import { constants, crc32, deflateRaw } from 'node:zlib';
import { promisify } from 'node:util';
import type { Chunk, ChunkSegment, Store } from '../store/store.js';

const deflateRawAsync = promisify(deflateRaw);

/**
 * Chunks read, compressed and written per batch (~2 MiB of items at ~64 KiB
 * per chunk): with one batch being read while the previous one is compressed
 * and written, a few MiB are held at any time, whatever the snapshot's size.
 */
const BATCH_CHUNKS = 32;

/**
 * A chunk's segment: its bytes through a fresh raw deflate at level 6, ended
 * with a sync flush (byte-aligned, not final), with their CRC-32 and length.
 * zlib's async API runs on the thread pool, so a batch compresses on every core.
 *
 * @example
 * const segment = await deflateSegment(chunk.chunkNo, chunk.bytes);
 */
export async function deflateSegment(chunkNo: number, bytes: Buffer): Promise<ChunkSegment> {
  const deflate = await deflateRawAsync(bytes, { level: 6, finishFlush: constants.Z_SYNC_FLUSH });
  return { chunkNo, rawLength: bytes.length, crc32: crc32(bytes), deflate };
}

export interface SegmentStats {
  chunks: number;
  rawBytes: number;
  deflateBytes: number;
  ms: number;
}

/**
 * Compresses and stores the segments of every chunk of `snapshotId`, in
 * bounded batches. `shouldStop` is asked between batches (a worker asked to
 * stop leaves the rest undone: reads compress those chunks themselves).
 */
export async function writeChunkSegments(
  store: Store,
  snapshotId: number,
  options: { shouldStop?: () => boolean } = {},
): Promise<SegmentStats> {
  const started = performance.now();
  const stats: SegmentStats = { chunks: 0, rawBytes: 0, deflateBytes: 0, ms: 0 };
  const meta = await store.snapshotMeta(snapshotId);
  const count = meta?.chunkStarts.length ?? 0;
  const read = (from: number): Promise<Chunk[]> | null =>
    from < count ? store.readChunks(snapshotId, from, Math.min(count, from + BATCH_CHUNKS) - 1) : null;
  let next = read(0);
  for (let from = 0; next && !options.shouldStop?.(); from += BATCH_CHUNKS) {
    const chunks = await next;
    const compressing = Promise.all(chunks.map((c) => deflateSegment(c.chunkNo, c.bytes)));
    // The next batch is read while this one compresses on the thread pool.
    next = read(from + BATCH_CHUNKS);
    const segments = await compressing;
    await store.writeSegments(snapshotId, segments);
    for (const s of segments) {
      stats.chunks++;
      stats.rawBytes += s.rawLength;
      stats.deflateBytes += s.deflate.length;
    }
  }
  // A read started before a stop is not left rejecting unobserved.
  await next?.catch(() => {});
  stats.ms = performance.now() - started;
  return stats;
}
