/**
 * Makes the gzip segments of a published snapshot (see ChunkSegment in
 * store.ts): data changes only when an import is applied, so each chunk is
 * compressed once, here, instead of on every first gzip download. Run by a
 * serving process's import worker after publication (ImportWorker's
 * `makeSegments`), so neither readers nor `mirador import` wait for it; a
 * chunk without a segment is made when read, exactly as here, so a pass cut
 * short costs speed, never correctness.
 */
import { constants, crc32, deflateRaw } from 'node:zlib';
import { promisify } from 'node:util';
import type { Chunk, ChunkSegment, Store } from '../store/store.js';

const deflateRawAsync = promisify(deflateRaw);

/**
 * Chunks read, compressed and written per batch (~4 MiB of items at ~64 KiB
 * per chunk): with one batch being read while one is compressed and the one
 * before is written, about 10 MiB are held at any time, whatever the
 * snapshot's size.
 */
const BATCH_CHUNKS = 64;

/**
 * How much of the previous chunk a segment is compressed against (its
 * `contextLength`, comma included). Compressed alone, each 64 KiB chunk
 * starts with an empty window and 100,000 customers came out 22% larger than
 * one continuous stream (51.2 against 41.9 MiB); against the last 8 KiB of
 * the previous chunk (about two items), 4% larger. The price: a segment is
 * only usable where the page holds that much of the previous chunk, so a page
 * starting in the last 8 KiB of a chunk compresses the next one itself.
 * Measured on 10,666 customers × 150 columns: 2 KiB +14%, 4 KiB +6%, 8 KiB
 * +4%, 16 KiB +2%, 32 KiB +1%.
 */
export const SEGMENT_CONTEXT_BYTES = 8 * 1024;

const COMMA = Buffer.from(',');

/**
 * A chunk's segment: its bytes through raw deflate at level 6, ended with a
 * sync flush (byte-aligned, not final), with their CRC-32 and length. With
 * `previous` (the chunk before it), the end of that chunk and the comma
 * between them are the dictionary (see SEGMENT_CONTEXT_BYTES). zlib's async
 * API runs on the thread pool, so a batch compresses on every core.
 *
 * @example
 * const segment = await deflateSegment(chunk.chunkNo, chunk.bytes, previousChunk?.bytes);
 */
export async function deflateSegment(chunkNo: number, bytes: Buffer, previous?: Buffer): Promise<ChunkSegment> {
  const dictionary = previous
    ? Buffer.concat([previous.subarray(Math.max(0, previous.length - (SEGMENT_CONTEXT_BYTES - 1))), COMMA])
    : undefined;
  const deflate = await deflateRawAsync(bytes, { level: 6, finishFlush: constants.Z_SYNC_FLUSH, ...(dictionary ? { dictionary } : {}) });
  return { chunkNo, rawLength: bytes.length, contextLength: dictionary?.length ?? 0, crc32: crc32(bytes), deflate };
}

export interface SegmentStats {
  chunks: number;
  /** Whether every chunk got its segment (false: stopped midway). */
  complete: boolean;
  rawBytes: number;
  deflateBytes: number;
  ms: number;
}

/**
 * Compresses and stores the segments of every chunk of `snapshotId` that has
 * none (a chunk shared with the snapshot before it usually has its segment
 * already: chunk-reuse.ts), in bounded batches. `shouldStop` is asked between
 * batches (a worker asked to stop leaves the rest undone: reads make those
 * segments themselves).
 */
export async function writeChunkSegments(
  store: Store,
  snapshotId: number,
  options: { shouldStop?: () => boolean } = {},
): Promise<SegmentStats> {
  const started = performance.now();
  const stats: SegmentStats = { chunks: 0, complete: false, rawBytes: 0, deflateBytes: 0, ms: 0 };
  const batches = missingBatches(await store.chunksWithoutSegments(snapshotId));
  // Each batch is read with the chunk before it, the context of its first segment.
  const read = (b: number): Promise<Chunk[]> | null =>
    b < batches.length ? store.readChunks(snapshotId, Math.max(0, batches[b]!.from - 1), batches[b]!.to) : null;
  let next = read(0);
  let writing: Promise<void> = Promise.resolve();
  let made = 0;
  try {
    for (let b = 0; next && !options.shouldStop?.(); b++) {
      const got = await next;
      const { from } = batches[b]!;
      const before = from > 0 ? got[0] : undefined;
      const chunks = from > 0 ? got.slice(1) : got;
      const compressing = Promise.all(chunks.map((c, k) => deflateSegment(c.chunkNo, c.bytes, (k === 0 ? before : chunks[k - 1])?.bytes)));
      // While this batch compresses on the thread pool, the next one is read and the one before written.
      next = read(b + 1);
      await writing;
      const segments = await compressing;
      writing = store.writeSegments(snapshotId, segments);
      for (const s of segments) {
        made++;
        stats.rawBytes += s.rawLength;
        stats.deflateBytes += s.deflate.length;
      }
    }
    await writing;
  } finally {
    // Whatever stopped the loop, nothing is left rejecting unobserved.
    await Promise.allSettled([next, writing]);
  }
  stats.chunks = made;
  stats.complete = made === batches.reduce((n, b) => n + b.to - b.from + 1, 0);
  stats.ms = performance.now() - started;
  return stats;
}

/** Runs of consecutive chunk numbers, at most BATCH_CHUNKS long. */
function missingBatches(chunkNos: readonly number[]): { from: number; to: number }[] {
  const out: { from: number; to: number }[] = [];
  for (const n of chunkNos) {
    const last = out[out.length - 1];
    if (last && last.to === n - 1 && n - last.from < BATCH_CHUNKS) last.to = n;
    else out.push({ from: n, to: n });
  }
  return out;
}
