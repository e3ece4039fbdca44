/**
 * The in-process cache of the read path (CHUNK_CACHE_MB): chunks, their gzip
 * segments, thin chunks, filter indexes and record indexes of immutable
 * snapshots, over a Store, with no invalidation (a snapshot never changes, it
 * can only stop being asked for). The functions that cut pages out of chunks
 * are snapshot-reader.ts's.
 */
import type { Chunk, ChunkSegment, RecordRef, SnapshotMeta, Store, ThinChunk } from '../../store/store.js';
import { ChunkBuilder, itemBodies } from '../../store/chunk-builder.js';
import { ClockMap } from '../../domain/clock-map.js';
import type { RecordIndex } from '../../store/record-index.js';
import { decodeIndex, type SnapshotIndex } from '../../store/snapshot-index.js';
import type { ChunkSource } from '../../snapshots/chunk-source.js';
import { chunkIndexOf, timeAt } from './snapshot-reader.js';
import { chunkKey, indexKey, itemKey, metaSize, segmentKey, thinKey } from './cache-sizes.js';
import { ClockCache } from './clock-cache.js';
import { DetailReads } from './detail-reads.js';
import { CachedBlocks } from './gathered-blocks.js';

/**
 * A byte-budgeted cache (clock-cache.ts) of chunks and of their gzip segments
 * over a Store, with concurrent misses coalesced. Both share one budget
 * (CHUNK_CACHE_MB): a snapshot's segments are about a ninth of its chunks,
 * and a client downloading with gzip needs only the segments. Details look
 * records and items up through detail-reads.ts, in the same budget.
 */
export class CachedChunkSource implements ChunkSource {
  private readonly metas = new ClockMap<number, SnapshotMeta>();
  /** Every entry, under its key (cache-sizes.ts). */
  private readonly cache: ClockCache;
  private readonly details: DetailReads;
  private readonly loadingThin = new Map<string, Promise<ThinChunk[]>>();
  private readonly loadingIndex = new Map<string, Promise<SnapshotIndex | null>>();
  /** Snapshots written before indexes existed, indexed in memory once (see `legacy`). */
  private readonly legacyBuilds = new Map<number, Promise<Legacy>>();
  private readonly loading = new Map<string, Promise<Chunk[]>>();
  private readonly loadingSegments = new Map<string, Promise<ChunkSegment[]>>();
  /** A filter's gathered blocks, in the same cache and budget. */
  readonly blocks: CachedBlocks;
  /** Bytes of the metas (kept apart, counted in the same budget). */
  private metaBytes = 0;
  /** Metas found in memory and read from the store (`stats()`); entries are counted by the cache. */
  private readonly metaCounts = { metaHits: 0, metaMisses: 0 };

  constructor(
    private readonly store: Store,
    private readonly budgetBytes: number,
    /** Lookups after which a snapshot's RecordIndex is loaded: max(minMisses, count / 32). Tests set 0. */
    recordIndexMinMisses = 16,
  ) {
    this.cache = new ClockCache(budgetBytes);
    this.blocks = new CachedBlocks(this.cache);
    this.details = new DetailReads(
      store,
      this.cache,
      {
        chunkNow: (meta, no) => this.chunksNow(meta, no, no)?.[0],
        chunk: async (meta, no) => (await this.chunks(meta, no, no))[0],
      },
      recordIndexMinMisses,
    );
  }

  /** See DetailReads.cachedRecord: a record without waiting, null when there is none, undefined when only a read can tell. */
  cachedRecord(meta: SnapshotMeta, idErp: string): RecordRef | null | undefined {
    return this.details.cachedRecord(meta, idErp);
  }

  /** A record of a published snapshot, or null when it has no such id. */
  record(meta: SnapshotMeta, idErp: string): Promise<RecordRef | null> {
    return this.details.record(meta, idErp);
  }

  /** The snapshot's RecordIndex, read now if it is not in memory (tests and tools; details use `record`). */
  recordIndex(meta: SnapshotMeta): Promise<RecordIndex | null> {
    return this.details.recordIndex(meta);
  }

  /** Whether the snapshot's RecordIndex is in memory now (does not count as a use). */
  holdsRecordIndex(meta: SnapshotMeta): boolean {
    return this.details.holdsRecordIndex(meta);
  }

  /** Bytes held (the cache's entries and the snapshot metas), at most the budget. */
  get cachedBytes(): number {
    return this.cache.bytes;
  }

  /**
   * Entries (chunks, segments, thin chunks, indexes) found in memory, and read
   * from the store; snapshot metas apart (a small cache of their own). A lookup
   * that misses on the synchronous path and is then read counts once as a miss.
   */
  stats(): ChunkCacheStats {
    return { ...this.cache.counts, ...this.metaCounts, bytes: this.cachedBytes, budgetBytes: this.budgetBytes, entries: this.cache.size };
  }

  async meta(snapshotId: number): Promise<SnapshotMeta | null> {
    const hit = this.cachedMeta(snapshotId);
    if (hit) {
      this.metaCounts.metaHits++;
      return hit;
    }
    this.metaCounts.metaMisses++;
    const meta = await this.store.snapshotMeta(snapshotId);
    // Cached only once published: a staged snapshot's meta still lacks its publication time.
    if (meta && meta.publishedAt !== null) {
      // The least used out (CLOCK): a thousand companies have 4,000 live snapshots, and the ones
      // asked for most must stay (oldest-inserted eviction hit about half the time there).
      this.rememberMeta(snapshotId, meta);
    }
    return meta;
  }

  /**
   * Metas take at most an eighth of the budget (thousands of small snapshots
   * fit in a few MB): past it, or past MAX_METAS, the least used go (CLOCK);
   * within it, they push chunks out, being worth more per byte.
   */
  private rememberMeta(snapshotId: number, meta: SnapshotMeta) {
    if (this.metas.has(snapshotId)) return;
    this.metas.set(snapshotId, meta);
    this.metaBytes += metaSize(meta);
    while (this.metas.size > MAX_METAS || this.metaBytes > this.budgetBytes / 8) {
      this.metaBytes -= metaSize(this.metas.evict()![1]);
    }
    this.cache.setOutsideBytes(this.metaBytes);
  }

  cachedMeta(snapshotId: number): SnapshotMeta | undefined {
    return this.metas.get(snapshotId);
  }

  /** In memory, or read at once (and kept) from a store that reads synchronously (`Store.readChunksNow`). */
  cachedChunks(meta: SnapshotMeta, from: number, to: number): Chunk[] | undefined {
    const out: Chunk[] = [];
    for (let i = from; i <= to; i++) {
      const hit = this.cache.hit<Chunk>(chunkKey(meta.id, i));
      if (!hit) return this.chunksNow(meta, from, to);
      out.push(hit);
    }
    return out;
  }

  private chunksNow(meta: SnapshotMeta, from: number, to: number): Chunk[] | undefined {
    if (!this.store.readChunksNow) return undefined;
    const read = this.store.readChunksNow(meta.id, from, to);
    if (read.length !== to - from + 1) return undefined;
    this.cache.counts.misses += read.length;
    for (const c of read) this.cache.offer(chunkKey(meta.id, c.chunkNo), c);
    return read;
  }

  /** The item at `pos` without waiting, when it can be had so (DetailReads.cachedItem). */
  cachedItem(meta: SnapshotMeta, pos: number): Buffer | undefined {
    return this.details.cachedItem(meta, pos);
  }

  item(meta: SnapshotMeta, pos: number): Promise<Buffer> {
    return this.details.item(meta, pos);
  }

  heldChunk(meta: SnapshotMeta, no: number): Chunk | undefined {
    return this.cache.hit<Chunk>(chunkKey(meta.id, no));
  }

  /** Whether chunk `no` is in memory now, not counted as a use (tests and tools look with it). */
  holdsChunk(meta: SnapshotMeta, no: number): boolean {
    return this.cache.has(chunkKey(meta.id, no));
  }

  /**
   * Items kept alone, or read together from the store (one round trip) and
   * kept alone: ~1-2 KB each where their chunks are 64 KiB, so the matches of
   * a filter scattered over a large company stay in memory when its chunks
   * could not (CHUNK_CACHE_MB small against the data).
   */
  async items(meta: SnapshotMeta, positions: readonly number[]): Promise<Buffer[]> {
    const out = new Array<Buffer>(positions.length);
    let missing: number[] | null = null;
    for (let i = 0; i < positions.length; i++) {
      const hit = this.cache.hit<Buffer>(itemKey(meta.id, positions[i]!));
      if (hit) out[i] = hit;
      else (missing ??= []).push(i);
    }
    if (!missing) return out;
    const refs = missing.map((i) => {
      const pos = positions[i]!;
      const no = chunkIndexOf(meta.chunkStarts, pos);
      return { chunkNo: no, index: pos - meta.chunkStarts[no]! };
    });
    this.cache.counts.misses += missing.length;
    const read = await this.store.readItems(meta.id, refs);
    for (let j = 0; j < missing.length; j++) {
      const pos = positions[missing[j]!]!;
      const item = read[j];
      if (!item) throw new Error(`snapshot ${meta.id} has no item at position ${pos}`);
      out[missing[j]!] = item;
      this.cache.offer(itemKey(meta.id, pos), item);
    }
    return out;
  }

  async chunks(meta: SnapshotMeta, from: number, to: number): Promise<Chunk[]> {
    const out: Chunk[] = [];
    let missFrom = -1;
    for (let i = from; i <= to; i++) {
      const hit = this.cache.hit<Chunk>(chunkKey(meta.id, i));
      if (!hit && missFrom < 0) missFrom = i;
      out.push(hit as Chunk);
    }
    if (missFrom < 0) return out;
    const loaded = await this.coalesced(this.loading, meta.id, missFrom, to, () => this.store.readChunks(meta.id, missFrom, to), (c) =>
      chunkKey(meta.id, c.chunkNo),
    );
    for (const c of loaded) out[c.chunkNo - from] = c;
    return out;
  }

  async segments(meta: SnapshotMeta, from: number, to: number): Promise<(ChunkSegment | undefined)[]> {
    const out: (ChunkSegment | undefined)[] = [];
    let missFrom = -1;
    let missTo = -1;
    for (let i = from; i <= to; i++) {
      const hit = this.cache.hit<ChunkSegment>(segmentKey(meta.id, i));
      if (!hit) {
        if (missFrom < 0) missFrom = i;
        missTo = i;
      }
      out.push(hit);
    }
    // A segment found missing is not remembered as missing: it may be written moments later.
    if (missFrom < 0) return out;
    const loaded = await this.coalesced(this.loadingSegments, meta.id, missFrom, missTo, () => this.store.readSegments(meta.id, missFrom, missTo), (s) =>
      segmentKey(meta.id, s.chunkNo),
    );
    for (const s of loaded) out[s.chunkNo - from] = s;
    return out;
  }

  /** In memory only: a filtered page asks for many runs, and one that misses is read with the others by `thinChunks`. */
  cachedThinChunks(meta: SnapshotMeta, from: number, to: number): ThinChunk[] | undefined {
    if (!meta.indexed) return undefined;
    const out: ThinChunk[] = [];
    for (let i = from; i <= to; i++) {
      const hit = this.cache.hit<ThinChunk>(thinKey(meta.id, i));
      if (!hit) return undefined;
      out.push(hit);
    }
    return out;
  }

  async thinChunks(meta: SnapshotMeta, from: number, to: number): Promise<ThinChunk[]> {
    if (!meta.indexed) return (await this.legacy(meta)).thin.slice(from, to + 1);
    const out: ThinChunk[] = [];
    let missFrom = -1;
    for (let i = from; i <= to; i++) {
      const hit = this.cache.hit<ThinChunk>(thinKey(meta.id, i));
      if (!hit && missFrom < 0) missFrom = i;
      out.push(hit as ThinChunk);
    }
    if (missFrom < 0) return out;
    const loaded = await this.coalesced(this.loadingThin, meta.id, missFrom, to, () => this.store.readThinChunks(meta.id, missFrom, to), (c) =>
      thinKey(meta.id, c.chunkNo),
    );
    for (const c of loaded) out[c.chunkNo - from] = c;
    return out;
  }

  async index(meta: SnapshotMeta, name: string): Promise<SnapshotIndex | null> {
    if (!meta.indexed) return (await this.legacy(meta)).indexes.get(name) ?? null;
    const key = indexKey(meta.id, name);
    const hit = this.cache.hit<SnapshotIndex>(key);
    if (hit) return hit;
    let p = this.loadingIndex.get(key);
    if (!p) {
      this.cache.counts.misses++;
      p = this.store.readIndex(meta.id, name).then((blob) => {
        const ix = blob && decodeIndex(blob);
        if (ix) this.cache.remember(key, ix);
        return ix;
      });
      p.finally(() => this.loadingIndex.delete(key)).catch(() => {});
      this.loadingIndex.set(key, p);
    }
    return p;
  }

  /**
   * A snapshot written before this version has no thin chunks or indexes: they
   * are made here once, from its chunks, exactly as an import makes them, and
   * kept while the process runs (a few at most: the next import replaces it).
   */
  private legacy(meta: SnapshotMeta): Promise<Legacy> {
    let p = this.legacyBuilds.get(meta.id);
    if (!p) {
      p = (async () => {
        const builder = new ChunkBuilder({ kind: meta.kind });
        const thin: ThinChunk[] = [];
        const last = meta.chunkStarts.length - 1;
        for (let from = 0; from <= last; from += 64) {
          for (const chunk of await this.store.readChunks(meta.id, from, Math.min(last, from + 63))) {
            for (let k = 0; k < chunk.offsets.length - 1; k++) {
              const pos = chunk.firstPos + k;
              const at = timeAt(meta, pos);
              const [body] = itemBodies(chunk.offsets.subarray(k, k + 2), chunk.bytes, at);
              const made = builder.add(body!, at);
              if (made) thin.push(made.thin!);
            }
          }
        }
        const made = builder.flush();
        if (made) thin.push(made.thin!);
        return { thin, indexes: new Map([...builder.indexes()].map((ix) => [ix.name, decodeIndex(ix.bytes)])) };
      })();
      p.catch(() => this.legacyBuilds.delete(meta.id));
      if (this.legacyBuilds.size >= 8) this.legacyBuilds.delete(this.legacyBuilds.keys().next().value!);
      this.legacyBuilds.set(meta.id, p);
    }
    return p;
  }

  /** Reads `from..to` of a snapshot once, however many ask meanwhile, and offers each entry read to the cache under `keyOf`. */
  private coalesced<T extends Chunk | ChunkSegment | ThinChunk>(
    pending: Map<string, Promise<T[]>>,
    snapshotId: number,
    from: number,
    to: number,
    read: () => Promise<T[]>,
    keyOf: (entry: T) => string,
  ): Promise<T[]> {
    const key = `${snapshotId}:${from}-${to}`;
    let p = pending.get(key);
    if (!p) {
      p = read().then((entries) => {
        this.cache.counts.misses += entries.length;
        for (const e of entries) this.cache.offer(keyOf(e), e);
        return entries;
      });
      p.finally(() => pending.delete(key)).catch(() => {});
      pending.set(key, p);
    }
    return p;
  }
}

/** The chunk cache's counters since the process started, and what it holds now. */
export interface ChunkCacheStats {
  hits: number;
  misses: number;
  metaHits: number;
  metaMisses: number;
  bytes: number;
  budgetBytes: number;
  entries: number;
}

/** Snapshot metas kept at most (a few hundred bytes each, more for a large snapshot's chunk starts). */
const MAX_METAS = 4096;


interface Legacy {
  thin: ThinChunk[];
  indexes: Map<string, SnapshotIndex>;
}
