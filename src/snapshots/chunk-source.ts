/**
 * Where the read path gets a snapshot's meta and chunks: the store behind an
 * in-process cache for real data (http/api/cached-chunk-source.ts,
 * CachedChunkSource), memory for the sandbox (sandbox/sandbox-snapshots.ts).
 * It lives below both so that the sandbox does not depend on the HTTP layer.
 */
import type { SnapshotIndex } from '../store/snapshot-index.js';
import type { Chunk, ChunkSegment, SnapshotMeta, ThinChunk } from '../store/store.js';

/** A filter's matches gathered into blocks of consecutive matches, each laid out as a chunk (http/api/gathered-page.ts). */
export interface GatheredBlocks {
  /** Block `block` of the filter when it is in memory (a use). */
  held(meta: SnapshotMeta, filterKey: string, block: number): Chunk | undefined;
  /** Whether a block not held was asked for before (recent asks are remembered, within a bound); records this ask. */
  askedBefore(meta: SnapshotMeta, filterKey: string, block: number): boolean;
  /** Keeps a gathered block in memory, within the source's budget. */
  keep(meta: SnapshotMeta, filterKey: string, block: number, chunk: Chunk): void;
}

export interface ChunkSource {
  meta(snapshotId: number): Promise<SnapshotMeta | null>;
  /** Chunks `from..to` inclusive. */
  chunks(meta: SnapshotMeta, from: number, to: number): Promise<Chunk[]>;
  /** The published snapshot's meta when it is in memory; undefined otherwise. */
  cachedMeta(snapshotId: number): SnapshotMeta | undefined;
  /** Chunks `from..to` inclusive when all are in memory; undefined otherwise. */
  cachedChunks(meta: SnapshotMeta, from: number, to: number): Chunk[] | undefined;
  /**
   * The bytes of the item at `pos` when they can be had without waiting;
   * undefined otherwise. A source that leaves this out is read through
   * `cachedChunks`.
   */
  cachedItem?(meta: SnapshotMeta, pos: number): Buffer | undefined;
  /** The bytes of the item at `pos` (a detail); a source that leaves this out is read through `chunks`. */
  item?(meta: SnapshotMeta, pos: number): Promise<Buffer>;
  /** Chunk `no` when it is in memory now (a use), without reading it; with `items`, or not at all. */
  heldChunk?(meta: SnapshotMeta, no: number): Chunk | undefined;
  /**
   * The items at `positions` (of chunks not in memory), in that order: a
   * filtered page reads the few items it sends of a chunk rather than the
   * chunk. A source that leaves this out is read through `chunks`.
   */
  items?(meta: SnapshotMeta, positions: readonly number[]): Promise<Buffer[]>;
  /**
   * Where a filter's matches gathered into blocks are kept
   * (http/api/gathered-page.ts); a source without it (the sandbox, all in
   * memory) renders filtered pages from its chunks.
   */
  readonly blocks?: GatheredBlocks;
  /**
   * The gzip segments of chunks `from..to`, by index from `from`; undefined
   * where a chunk has none. A source without segments (the sandbox) leaves
   * this out, and its gzip pages are compressed whole.
   */
  segments?(meta: SnapshotMeta, from: number, to: number): Promise<(ChunkSegment | undefined)[]>;
  /** Thin chunks `from..to` inclusive: the same positions as chunks `from..to`, without `data`. */
  thinChunks(meta: SnapshotMeta, from: number, to: number): Promise<ThinChunk[]>;
  /** Thin chunks `from..to` inclusive when all are in memory; undefined otherwise (then `thinChunks` reads them). */
  cachedThinChunks(meta: SnapshotMeta, from: number, to: number): ThinChunk[] | undefined;
  /** A filter index of the snapshot (`eq:estado`, `q`, `range:fecha`; see store/snapshot-index.ts); null when it has none. */
  index(meta: SnapshotMeta, name: string): Promise<SnapshotIndex | null>;
}
