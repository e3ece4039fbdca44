/**
 * The in-process cache of the read path (CHUNK_CACHE_MB): chunks, their gzip
 * segments, thin chunks, filter indexes and record indexes of immutable
 * snapshots, over a Store, with no invalidation (a snapshot never changes, it
 * can only stop being asked for). The functions that cut pages out of chunks
 * are snapshot-reader.ts's.
 */
import type { Chunk, ChunkSegment, RecordRef, RecordRow, SnapshotMeta, Store, ThinChunk } from '../../store/store.js';
import { ChunkBuilder, itemBodies } from '../../store/chunk-builder.js';
import { RecordIndex } from '../../store/record-index.js';
import { decodeIndex, type SnapshotIndex } from '../../store/snapshot-index.js';
import type { ChunkSource } from '../../snapshots/chunk-source.js';
import { chunkIndexOf, timeAt } from './snapshot-reader.js';
import { metaSize, sizeOf, type Cached } from './cache-sizes.js';

/** Records read per query when a snapshot's RecordIndex is loaded (a turn of the event loop between two). */
const RECORD_PAGE = 4096;
/** Snapshots whose lookups are counted at once (see `noteMiss`); a bound, not a tuning. */
const MAX_COUNTED_SNAPSHOTS = 4096;

/**
 * A byte-budgeted LRU of chunks and of their gzip segments over a Store, with
 * concurrent misses coalesced. Both share one budget (CHUNK_CACHE_MB): a
 * snapshot's segments are about a ninth of its chunks, and a client
 * downloading with gzip needs only the segments.
 *
 * Details look records up here too. Until a snapshot has had enough lookups
 * to pay for it, each is one indexed read of the store (which keeps a few
 * positions of its own, store/live-cache.ts); after `count / 32` of them (at
 * least 16), its RecordIndex (every id's position and hash, ~50 bytes a
 * record) is read once, in pages, in the background, and kept in the same
 * LRU and budget as the chunks: from then on a detail's record, and a 304,
 * cost no read at all, whichever ids are asked for.
 */
export class CachedChunkSource implements ChunkSource {
  private readonly metas = new Map<number, SnapshotMeta>();
  /** Chunks under `id:no`, segments under `id:no:z`, thin chunks under `id:no:t`, indexes under `id:ix:name`, record indexes under `id:rx`. */
  private readonly lru = new Map<string, Slot>();
  /** Lookups that missed the RecordIndex, per snapshot, since its last load. */
  private readonly misses = new Map<number, number>();
  private readonly loadingRecords = new Map<number, Promise<RecordIndex | null>>();
  /** Snapshots whose RecordIndex is larger than the whole budget: never loaded. */
  private readonly tooLarge = new Set<number>();
  private readonly loadingThin = new Map<string, Promise<ThinChunk[]>>();
  private readonly loadingIndex = new Map<string, Promise<SnapshotIndex | null>>();
  /** Snapshots written before indexes existed, indexed in memory once (see `legacy`). */
  private readonly legacyBuilds = new Map<number, Promise<Legacy>>();
  private readonly loading = new Map<string, Promise<Chunk[]>>();
  private readonly loadingSegments = new Map<string, Promise<ChunkSegment[]>>();
  /** Chunks a detail has missed once (read as the item alone): the next detail that misses one reads it whole. */
  private readonly touched = new Set<string>();
  /** Bytes of the LRU's entries, and of the metas (kept apart, counted in the same budget). */
  private bytes = 0;
  private metaBytes = 0;
  /** What `stats()` reports (GET /metrics, metrics.ts). */
  private readonly counts = { hits: 0, misses: 0, metaHits: 0, metaMisses: 0 };

  constructor(
    private readonly store: Store,
    private readonly budgetBytes: number,
    /** Lookups after which a snapshot's RecordIndex is loaded: max(minMisses, count / 32). Tests set 0. */
    private readonly recordIndexMinMisses = 16,
  ) {}

  /**
   * A record of a published snapshot when it can be had without waiting: from
   * its RecordIndex, else from the store when it can answer at once
   * (`Store.cachedRecord`); null when the snapshot has no such id, undefined
   * when only a read that waits can tell.
   */
  cachedRecord(meta: SnapshotMeta, idErp: string): RecordRef | null | undefined {
    const index = this.hit<RecordIndex>(recordIndexKey(meta.id));
    if (index) return refOf(meta, index, idErp);
    const found = this.store.cachedRecord(meta.id, idErp);
    if (found !== undefined) this.noteMiss(meta);
    return found;
  }

  /** A record of a published snapshot, or null when it has no such id. */
  async record(meta: SnapshotMeta, idErp: string): Promise<RecordRef | null> {
    const index = this.hit<RecordIndex>(recordIndexKey(meta.id));
    if (index) return refOf(meta, index, idErp);
    this.noteMiss(meta);
    return this.store.findRecord(meta.id, idErp);
  }

  /** The snapshot's RecordIndex, read now if it is not in memory (tests and tools; details use `record`). */
  async recordIndex(meta: SnapshotMeta): Promise<RecordIndex | null> {
    return this.hit<RecordIndex>(recordIndexKey(meta.id)) ?? this.loadRecordIndex(meta);
  }

  /** Whether the snapshot's RecordIndex is in memory now (does not count as a use). */
  holdsRecordIndex(meta: SnapshotMeta): boolean {
    return this.lru.has(recordIndexKey(meta.id));
  }

  /** Bytes held (the LRU's entries and the snapshot metas), at most the budget. */
  get cachedBytes(): number {
    return this.bytes + this.metaBytes;
  }

  /** Counts a lookup the RecordIndex could not answer, and starts loading it once they are enough. */
  private noteMiss(meta: SnapshotMeta) {
    if (this.tooLarge.has(meta.id) || this.loadingRecords.has(meta.id)) return;
    const n = (this.misses.get(meta.id) ?? 0) + 1;
    if (n < Math.max(this.recordIndexMinMisses, meta.count >>> 5)) {
      if (this.misses.size >= MAX_COUNTED_SNAPSHOTS && !this.misses.has(meta.id)) this.misses.clear();
      this.misses.set(meta.id, n);
      return;
    }
    this.misses.delete(meta.id);
    void this.loadRecordIndex(meta);
  }

  /** Reads every record of the snapshot, a page at a time, into a RecordIndex kept in the LRU (once, however many ask). */
  private loadRecordIndex(meta: SnapshotMeta): Promise<RecordIndex | null> {
    let p = this.loadingRecords.get(meta.id);
    if (!p) {
      p = (async () => {
        const rows: RecordRow[] = [];
        for (let after: string | null = null; ; ) {
          const page = await this.store.readRecordPage(meta.id, after, RECORD_PAGE);
          for (const r of page) rows.push(r);
          if (page.length < RECORD_PAGE) break;
          after = page[page.length - 1]!.idErp;
          // SQLite answers synchronously: let requests in between pages.
          await new Promise((resolve) => setImmediate(resolve));
        }
        // A swept snapshot has no records left: nothing to keep.
        if (rows.length !== meta.count) return null;
        const index = RecordIndex.build(rows);
        if (index.byteLength > this.budgetBytes) {
          if (this.tooLarge.size >= MAX_COUNTED_SNAPSHOTS) this.tooLarge.clear();
          this.tooLarge.add(meta.id);
        } else this.remember(recordIndexKey(meta.id), index);
        return index;
      })();
      p.finally(() => this.loadingRecords.delete(meta.id)).catch(() => {});
      this.loadingRecords.set(meta.id, p);
    }
    return p;
  }

  /**
   * Entries (chunks, segments, thin chunks, indexes) found in memory, and read
   * from the store; snapshot metas apart (a small cache of their own). A lookup
   * that misses on the synchronous path and is then read counts once as a miss.
   */
  stats(): ChunkCacheStats {
    return { ...this.counts, bytes: this.cachedBytes, budgetBytes: this.budgetBytes, entries: this.lru.size };
  }

  async meta(snapshotId: number): Promise<SnapshotMeta | null> {
    const hit = this.cachedMeta(snapshotId);
    if (hit) {
      this.counts.metaHits++;
      return hit;
    }
    this.counts.metaMisses++;
    const meta = await this.store.snapshotMeta(snapshotId);
    // Cached only once published: a staged snapshot's meta still lacks its publication time.
    if (meta && meta.publishedAt !== null) {
      // Least recently used out: a thousand companies have 4,000 live snapshots, and the ones
      // asked for most must stay (oldest-inserted eviction hit about half the time there).
      this.rememberMeta(snapshotId, meta);
    }
    return meta;
  }

  /**
   * Metas take at most an eighth of the budget (thousands of small snapshots
   * fit in a few MB): past it, or past MAX_METAS, the least recently used go;
   * within it, they push chunks out, being worth more per byte.
   */
  private rememberMeta(snapshotId: number, meta: SnapshotMeta) {
    if (this.metas.has(snapshotId)) return;
    this.metas.set(snapshotId, meta);
    this.metaBytes += metaSize(meta);
    while (this.metas.size > MAX_METAS || this.metaBytes > this.budgetBytes / 8) {
      const [oldId, old] = this.metas.entries().next().value!;
      this.metas.delete(oldId);
      this.metaBytes -= metaSize(old);
    }
    this.evictOverBudget();
  }

  cachedMeta(snapshotId: number): SnapshotMeta | undefined {
    const hit = this.metas.get(snapshotId);
    if (hit) {
      this.metas.delete(snapshotId);
      this.metas.set(snapshotId, hit);
    }
    return hit;
  }

  /** In memory, or read at once (and kept) from a store that reads synchronously (`Store.readChunksNow`). */
  cachedChunks(meta: SnapshotMeta, from: number, to: number): Chunk[] | undefined {
    const out: Chunk[] = [];
    for (let i = from; i <= to; i++) {
      const hit = this.hit<Chunk>(chunkKey(meta.id, i));
      if (!hit) return this.chunksNow(meta, from, to);
      out.push(hit);
    }
    return out;
  }

  private chunksNow(meta: SnapshotMeta, from: number, to: number): Chunk[] | undefined {
    if (!this.store.readChunksNow) return undefined;
    const read = this.store.readChunksNow(meta.id, from, to);
    if (read.length !== to - from + 1) return undefined;
    this.counts.misses += read.length;
    for (const c of read) this.remember(chunkKey(meta.id, c.chunkNo), c);
    return read;
  }

  /**
   * A detail's item. A chunk not in memory is not read whole for one item the
   * first time: the store sends only the item's bytes (~4 KB where the chunk
   * is 64 KiB), and the chunk is read and kept the second time one of its
   * items misses. So details spread over more chunks than the budget holds
   * (a cold process, a large company, CHUNK_CACHE_MB small) read what they
   * send, and the chunks asked for again still end up in memory.
   */
  cachedItem(meta: SnapshotMeta, pos: number): Buffer | undefined {
    const no = chunkIndexOf(meta.chunkStarts, pos);
    const chunk = this.hit<Chunk>(chunkKey(meta.id, no));
    if (chunk) return itemOf(chunk, pos);
    if (!this.store.readItemNow) return undefined;
    if (this.admit(meta.id, no)) {
      const read = this.chunksNow(meta, no, no);
      return read && itemOf(read[0]!, pos);
    }
    this.counts.misses++;
    return this.store.readItemNow(meta.id, no, pos - meta.chunkStarts[no]!) ?? undefined;
  }

  async item(meta: SnapshotMeta, pos: number): Promise<Buffer> {
    const no = chunkIndexOf(meta.chunkStarts, pos);
    const chunk = this.hit<Chunk>(chunkKey(meta.id, no));
    if (chunk) return itemOf(chunk, pos);
    if (!this.admit(meta.id, no)) {
      this.counts.misses++;
      const item = await this.store.readItem(meta.id, no, pos - meta.chunkStarts[no]!);
      if (item) return item;
    }
    const [read] = await this.chunks(meta, no, no);
    if (!read) throw new Error(`snapshot ${meta.id} has no chunk ${no}`);
    return itemOf(read, pos);
  }

  /** Whether a detail's miss on chunk `no` should read the whole chunk: the second such miss does. */
  private admit(snapshotId: number, no: number): boolean {
    const key = chunkKey(snapshotId, no);
    if (this.touched.delete(key)) return true;
    // A bound, not a tuning: forgetting every first touch only delays the chunks' admission.
    if (this.touched.size >= MAX_TOUCHED) this.touched.clear();
    this.touched.add(key);
    return false;
  }

  async chunks(meta: SnapshotMeta, from: number, to: number): Promise<Chunk[]> {
    const out: Chunk[] = [];
    let missFrom = -1;
    for (let i = from; i <= to; i++) {
      const hit = this.hit<Chunk>(chunkKey(meta.id, i));
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
      const hit = this.hit<ChunkSegment>(segmentKey(meta.id, i));
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
      const hit = this.hit<ThinChunk>(thinKey(meta.id, i));
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
      const hit = this.hit<ThinChunk>(thinKey(meta.id, i));
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
    const key = `${meta.id}:ix:${name}`;
    const hit = this.hit<SnapshotIndex>(key);
    if (hit) return hit;
    let p = this.loadingIndex.get(key);
    if (!p) {
      this.counts.misses++;
      p = this.store.readIndex(meta.id, name).then((blob) => {
        const ix = blob && decodeIndex(blob);
        if (ix) this.remember(key, ix);
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
        return { thin, indexes: new Map(builder.indexes().map((ix) => [ix.name, decodeIndex(ix.bytes)])) };
      })();
      p.catch(() => this.legacyBuilds.delete(meta.id));
      if (this.legacyBuilds.size >= 8) this.legacyBuilds.delete(this.legacyBuilds.keys().next().value!);
      this.legacyBuilds.set(meta.id, p);
    }
    return p;
  }

  /**
   * The cached entry under `key`, marked as used. Eviction is CLOCK (second
   * chance) over the Map's insertion order rather than strict LRU: a hit only
   * sets a flag, where moving the entry to the end cost a Map delete and set
   * on every detail (5% of a warm detail's time).
   */
  private hit<T extends Cached>(key: string): T | undefined {
    const slot = this.lru.get(key);
    if (!slot) return undefined;
    this.counts.hits++;
    slot.used = true;
    return slot.entry as T;
  }

  /** Reads `from..to` of a snapshot once, however many ask meanwhile, and remembers each entry read under `keyOf`. */
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
        this.counts.misses += entries.length;
        for (const e of entries) this.remember(keyOf(e), e);
        return entries;
      });
      p.finally(() => pending.delete(key)).catch(() => {});
      pending.set(key, p);
    }
    return p;
  }

  private remember(key: string, entry: Cached) {
    if (sizeOf(entry) > this.budgetBytes || this.lru.has(key)) return;
    this.lru.set(key, { entry, used: false });
    this.bytes += sizeOf(entry);
    this.evictOverBudget();
  }

  /**
   * Entries out, oldest first, until the LRU and the metas fit the budget; one
   * used since it was last passed over goes to the end instead, unmarked (a
   * pass marks none, so the loop ends).
   */
  private evictOverBudget() {
    while (this.bytes + this.metaBytes > this.budgetBytes && this.lru.size > 0) {
      const [oldKey, old] = this.lru.entries().next().value!;
      this.lru.delete(oldKey);
      if (old.used) {
        old.used = false;
        this.lru.set(oldKey, old);
      } else this.bytes -= sizeOf(old.entry);
    }
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

/** An entry of the LRU, and whether it was used since eviction last passed over it. */
interface Slot {
  entry: Cached;
  used: boolean;
}

/** Chunks remembered as missed once by a detail (about 40 bytes each). */
const MAX_TOUCHED = 65_536;

/** The bytes of the item at `pos` in `chunk`, which holds it. */
function itemOf(chunk: Chunk, pos: number): Buffer {
  const k = pos - chunk.firstPos;
  return chunk.bytes.subarray(chunk.offsets[k]!, chunk.offsets[k + 1]! - 1);
}

/** Snapshot metas kept at most (a few hundred bytes each, more for a large snapshot's chunk starts). */
const MAX_METAS = 4096;

const chunkKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}`;
const segmentKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}:z`;
const thinKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}:t`;
const recordIndexKey = (snapshotId: number) => `${snapshotId}:rx`;

/** The record `idErp` of the snapshot, from its index; its time is the timeline's at its position (list order is by time). */
function refOf(meta: SnapshotMeta, index: RecordIndex, idErp: string): RecordRef | null {
  const k = index.find(idErp);
  if (k < 0) return null;
  const pos = index.position(k);
  return { pos, hash: index.hash(k), actualizadoAt: timeAt(meta, pos) };
}

interface Legacy {
  thin: ThinChunk[];
  indexes: Map<string, SnapshotIndex>;
}
