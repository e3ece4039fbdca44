/**
 * Reads pages and items out of snapshots. Snapshots and chunks are immutable,
 * so both are cached in process with no invalidation (cached-chunk-source.ts):
 * a chunk can never go stale, it can only stop being asked for.
 */
import type { Chunk, ChunkSegment, SnapshotMeta } from '../../store/store.js';
import { deflateSegment, SEGMENT_CONTEXT_BYTES } from '../../snapshots/chunk-segments.js';
import type { ChunkSource } from '../../snapshots/chunk-source.js';
import type { BodyPart } from './gzip-segments.js';

const COMMA = Buffer.from(',');

/** Index of the chunk holding `pos` (chunkStarts is ascending, starts at 0). */
export function chunkIndexOf(chunkStarts: Uint32Array, pos: number): number {
  let lo = 0;
  let hi = chunkStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (chunkStarts[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** First position whose `actualizado_at` is ≥ `since` (count when none). */
export function firstPositionSince(meta: SnapshotMeta, since: number): number {
  const t = meta.timeline;
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid]!.at < since) lo = mid + 1;
    else hi = mid;
  }
  return lo < t.length ? t[lo]!.firstPos : meta.count;
}

/**
 * The bytes of items [start, end) joined by commas, as zero-copy views of the
 * chunks that hold them. `chunks` are consecutive and cover the range.
 */
export function sliceItems(chunks: readonly Chunk[], start: number, end: number): Buffer[] {
  const pieces: Buffer[] = [];
  for (const c of chunks) {
    const count = c.offsets.length - 1;
    const a = Math.max(start, c.firstPos) - c.firstPos;
    const b = Math.min(end, c.firstPos + count) - c.firstPos;
    if (a >= b) continue;
    if (pieces.length > 0) pieces.push(COMMA);
    pieces.push(c.bytes.subarray(c.offsets[a]!, c.offsets[b]! - 1));
  }
  return pieces;
}

// Defined below the HTTP layer, so the sandbox can implement it (issue 24); kept importable from here.
export type { ChunkSource } from '../../snapshots/chunk-source.js';

/** Reads a page: the item bytes of positions [start, end). */
export async function readItems(source: ChunkSource, meta: SnapshotMeta, start: number, end: number): Promise<Buffer[]> {
  if (start >= end) return [];
  const from = chunkIndexOf(meta.chunkStarts, start);
  const to = chunkIndexOf(meta.chunkStarts, end - 1);
  return sliceItems(await source.chunks(meta, from, to), start, end);
}

/** `readItems` when every chunk it needs is in memory; undefined otherwise. */
export function cachedItems(source: ChunkSource, meta: SnapshotMeta, start: number, end: number): Buffer[] | undefined {
  if (start >= end) return [];
  const chunks = source.cachedChunks(meta, chunkIndexOf(meta.chunkStarts, start), chunkIndexOf(meta.chunkStarts, end - 1));
  return chunks && sliceItems(chunks, start, end);
}

/** The item at `pos`, read as its source reads single items (a detail). */
export async function readItem(source: ChunkSource, meta: SnapshotMeta, pos: number): Promise<Buffer[]> {
  return source.item ? [await source.item(meta, pos)] : readItems(source, meta, pos, pos + 1);
}

/** `readItem` when it can be answered without waiting; undefined otherwise. */
export function cachedItem(source: ChunkSource, meta: SnapshotMeta, pos: number): Buffer[] | undefined {
  if (!source.cachedItem) return cachedItems(source, meta, pos, pos + 1);
  const item = source.cachedItem(meta, pos);
  return item && [item];
}

/**
 * A page's body as parts for a gzip body (gzip-segments.ts): `head`, the
 * items of positions [start, end) joined by commas, `tail`. A chunk the page
 * holds whole goes out as its segment where the segment's context (the end
 * of the chunk before it, see ChunkSegment.contextLength) precedes it in the
 * page; partial chunks at the edges, and whole chunks without that context,
 * are their bytes, compressed when the body is assembled.
 *
 * Which chunks go out as segments depends only on the page's bounds and the
 * chunks' lengths, never on which segments happen to be stored: one missing
 * (not made yet, or an import process stopped midway) is made here, exactly
 * as the import makes it. So a page's gzip bytes are the same whenever and
 * wherever they are made, as its strong ETag promises.
 */
export async function readBodyParts(
  source: ChunkSource,
  meta: SnapshotMeta,
  start: number,
  end: number,
  head: Buffer,
  tail: Buffer,
): Promise<BodyPart[]> {
  if (start >= end) return [{ raw: head }, { raw: tail }];
  const from = chunkIndexOf(meta.chunkStarts, start);
  const to = chunkIndexOf(meta.chunkStarts, end - 1);
  const whole = (i: number) => meta.chunkStarts[i]! >= start && (meta.chunkStarts[i + 1] ?? meta.count) <= end;
  // A page starting mid-chunk needs that chunk's bytes anyway, and they say how much of it precedes the next one.
  const [stored = [], first] = await Promise.all([
    source.segments?.(meta, from, to),
    whole(from) ? undefined : source.chunks(meta, from, from).then((c) => c[0]!),
  ]);
  /**
   * Whether chunk i goes out as a segment. The snapshot's first chunk has no
   * context; any other needs the end of the chunk before it in the page: a
   * whole chunk before it always holds it (contexts are at most 8 KiB), a
   * partial first chunk only if enough of it is in the page.
   */
  const asSegment = (i: number): boolean => {
    if (!whole(i)) return false;
    if (i === 0) return true;
    if (i === from) return false;
    if (i > from + 1 || !first) return true;
    const held = first.bytes.length - first.offsets[start - first.firstPos]!;
    return held >= Math.min(first.bytes.length, SEGMENT_CONTEXT_BYTES - 1);
  };
  const chunks = new Map<number, Chunk>();
  if (first) chunks.set(from, first);
  const segments = new Map<number, ChunkSegment>();
  for (let i = from; i <= to; i++) {
    const s = stored[i - from];
    if (s && asSegment(i)) segments.set(i, s);
  }
  // The chunks still needed, read in runs of consecutive ones: the far edge; and, rarely, a
  // chunk whose segment is missing, with the chunk before it (its context).
  const needs = (i: number) => !chunks.has(i) && (!segments.has(i) || (i < to && asSegment(i + 1) && !segments.has(i + 1)));
  const reads: Promise<Chunk[]>[] = [];
  for (let i = from; i <= to; i++) {
    if (!needs(i)) continue;
    let j = i;
    while (j < to && needs(j + 1)) j++;
    reads.push(source.chunks(meta, i, j));
    i = j;
  }
  for (const run of await Promise.all(reads)) for (const c of run) chunks.set(c.chunkNo, c);
  const made: Promise<void>[] = [];
  for (let i = from; i <= to; i++) {
    if (!asSegment(i) || segments.has(i)) continue;
    made.push(deflateSegment(i, chunks.get(i)!.bytes, chunks.get(i - 1)?.bytes).then((s) => void segments.set(i, s)));
  }
  await Promise.all(made);
  const parts: BodyPart[] = [{ raw: head }];
  for (let i = from; i <= to; i++) {
    if (i > from) parts.push({ raw: COMMA });
    const segment = segments.get(i);
    if (segment) parts.push({ segment });
    else for (const raw of sliceItems([chunks.get(i)!], start, end)) parts.push({ raw });
  }
  parts.push({ raw: tail });
  return parts;
}

/** The `actualizado_at` of position `pos`. */
export function timeAt(meta: SnapshotMeta, pos: number): number {
  const t = meta.timeline;
  let lo = 0;
  let hi = t.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (t[mid]!.firstPos <= pos) lo = mid;
    else hi = mid - 1;
  }
  return t[lo]!.at;
}
