/**
 * CachedChunkSource's entries: the keys they are kept under, and what they
 * cost in memory, counted against its share of CHUNK_CACHE_MB
 * (read-cache-budget.ts).
 */
import type { Chunk, ChunkSegment, SnapshotMeta, ThinChunk } from '../../store/store.js';
import { RecordIndex } from '../../store/record-index.js';
import type { SnapshotIndex } from '../../store/snapshot-index.js';

/** A Buffer is one item kept alone (`itemKey`): a filtered page's match whose chunk is not kept. */
export type Cached = Chunk | ChunkSegment | ThinChunk | SnapshotIndex | RecordIndex | Buffer;

/**
 * What an item kept alone costs beside its bytes: its Buffer object, its key
 * and the cache's slot (an estimate; the objects around a chunk or an index
 * are small beside it, but not beside a 1 KB item).
 */
export const ITEM_OVERHEAD_BYTES = 200;

/** An entry's bytes: its buffers and arrays (the objects around them are small beside a chunk or an index). */
export function sizeOf(entry: Cached): number {
  if (Buffer.isBuffer(entry)) return entry.length + ITEM_OVERHEAD_BYTES;
  if (entry instanceof RecordIndex) return entry.byteLength;
  if ('deflate' in entry) return entry.deflate.length;
  if ('byteLength' in entry) return entry.byteLength;
  return entry.bytes.length + ('bounds' in entry ? entry.bounds.byteLength : entry.offsets.byteLength);
}

/**
 * A meta's memory, estimated: its object, ids and strings (~300 bytes), its
 * chunk starts, ~50 bytes a timeline entry (an object of two numbers and its
 * slot) and ~40 bytes a column name besides its characters.
 */
export function metaSize(meta: SnapshotMeta): number {
  let columns = 0;
  for (const c of meta.columns) columns += 40 + c.length;
  return 300 + meta.chunkStarts.byteLength + meta.timeline.length * 50 + columns;
}

/** A snapshot's chunk. */
export const chunkKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}`;
/** A chunk's gzip segment. */
export const segmentKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}:z`;
/** A chunk's thin chunk (items without `data`). */
export const thinKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}:t`;
/** A filter index (`eq:estado`, `q`, …) of a snapshot. */
export const indexKey = (snapshotId: number, name: string) => `${snapshotId}:ix:${name}`;
/** An item kept alone, by its position in the snapshot. */
export const itemKey = (snapshotId: number, pos: number) => `${snapshotId}:${pos}:i`;
/** A block of a filter's matches gathered into one buffer (gathered-page.ts); `filterKey` is Filters.key. */
export const blockKey = (snapshotId: number, filterKey: string, block: number) => `${snapshotId}:g${block}:${filterKey}`;
/** A snapshot's RecordIndex. */
export const recordIndexKey = (snapshotId: number) => `${snapshotId}:rx`;
