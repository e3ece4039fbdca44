/**
 * What a detail reads: its record (position, hash, time) and its item's
 * bytes, from the read path's cache (clock-cache.ts) when they are there, and
 * otherwise as little of the store as answers it. CachedChunkSource owns one
 * and passes its chunk reads in, so that whole chunks are read and kept one
 * way only.
 */
import type { Chunk, RecordRef, SnapshotMeta, Store } from '../../store/store.js';
import { RecordIndexBuilder, type RecordIndex } from '../../store/record-index.js';
import { CHUNK_TARGET_BYTES } from '../../store/chunk-builder.js';
import { chunkIndexOf, timeAt } from './snapshot-reader.js';
import type { ClockCache } from './clock-cache.js';
import { chunkKey, itemKey, recordIndexKey } from './cache-sizes.js';

/** Records read per query when a snapshot's RecordIndex is loaded (a turn of the event loop between two). */
const RECORD_PAGE = 4096;
/** Snapshots whose lookups are counted at once (see `noteMiss`); a bound, not a tuning. */
const MAX_COUNTED_SNAPSHOTS = 4096;

/** Whole chunks, as CachedChunkSource reads and keeps them. */
export interface ChunkReads {
  /** Chunk `no` read at once and kept, when the store reads synchronously; undefined otherwise. */
  chunkNow(meta: SnapshotMeta, no: number): Chunk | undefined;
  /** Chunk `no`, read and kept (or found). */
  chunk(meta: SnapshotMeta, no: number): Promise<Chunk | undefined>;
}

/**
 * Until a snapshot has had enough lookups to pay for it, each is one indexed
 * read of the store (which keeps a few positions of its own,
 * store/live-cache.ts); after `count / 32` of them (at least
 * `recordIndexMinMisses`), its RecordIndex (every id's position and hash,
 * ~50 bytes a record) is read once, in pages, in the background, and kept in
 * the cache's budget: from then on a detail's record, and a 304, cost no read
 * at all, whichever ids are asked for.
 *
 * A chunk not in memory is read whole and kept at its first miss while the
 * cache has room for it: keeping it evicts nothing, and its other items are
 * then served without a read (a process filling its cache after a restart
 * reads each chunk once, not an item and then the chunk). Once the cache is
 * full, a chunk is not read whole for one item the first time: the store
 * sends only the item's bytes (~4 KB where the chunk is 64 KiB), and the
 * chunk is read and kept the second time one of its items misses. So details
 * spread over more chunks than the budget holds (a large company,
 * CHUNK_CACHE_MB small) read what they send and push out nothing for an id
 * asked once, and the chunks asked for again still end up in memory.
 */
export class DetailReads {
  /** Lookups that missed the RecordIndex, per snapshot, since its last load. */
  private readonly misses = new Map<number, number>();
  private readonly loadingRecords = new Map<number, Promise<RecordIndex | null>>();
  /** Snapshots whose RecordIndex is larger than the whole budget: never loaded. */
  private readonly tooLarge = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly cache: ClockCache,
    private readonly chunks: ChunkReads,
    private readonly recordIndexMinMisses: number,
  ) {}

  /**
   * A record of a published snapshot when it can be had without waiting: from
   * its RecordIndex, else from the store when it can answer at once
   * (`Store.cachedRecord`); null when the snapshot has no such id, undefined
   * when only a read that waits can tell.
   */
  cachedRecord(meta: SnapshotMeta, idErp: string): RecordRef | null | undefined {
    const index = this.cache.hit<RecordIndex>(recordIndexKey(meta.id));
    if (index) return refOf(meta, index, idErp);
    const found = this.store.cachedRecord(meta.id, idErp);
    if (found !== undefined) this.noteMiss(meta);
    return found;
  }

  /** A record of a published snapshot, or null when it has no such id. */
  async record(meta: SnapshotMeta, idErp: string): Promise<RecordRef | null> {
    const index = this.cache.hit<RecordIndex>(recordIndexKey(meta.id));
    if (index) return refOf(meta, index, idErp);
    this.noteMiss(meta);
    return this.store.findRecord(meta.id, idErp);
  }

  /** The snapshot's RecordIndex, read now if it is not in memory (tests and tools; details use `record`). */
  async recordIndex(meta: SnapshotMeta): Promise<RecordIndex | null> {
    return this.cache.hit<RecordIndex>(recordIndexKey(meta.id)) ?? this.loadRecordIndex(meta);
  }

  /** Whether the snapshot's RecordIndex is in memory now (does not count as a use). */
  holdsRecordIndex(meta: SnapshotMeta): boolean {
    return this.cache.has(recordIndexKey(meta.id));
  }

  /** The item at `pos` when it can be had without waiting: its chunk in memory, or a store that reads synchronously. */
  cachedItem(meta: SnapshotMeta, pos: number): Buffer | undefined {
    const no = chunkIndexOf(meta.chunkStarts, pos);
    const chunk = this.cache.hit<Chunk>(chunkKey(meta.id, no));
    if (chunk) return itemOf(chunk, pos);
    // Kept alone by a filtered page (CachedChunkSource.items): the same bytes, no read.
    const alone = this.cache.hit<Buffer>(itemKey(meta.id, pos));
    if (alone) return alone;
    if (!this.store.readItemNow) return undefined;
    if (this.admit(meta.id, no)) {
      const read = this.chunks.chunkNow(meta, no);
      return read && itemOf(read, pos);
    }
    this.cache.counts.misses++;
    return this.store.readItemNow(meta.id, no, pos - meta.chunkStarts[no]!) ?? undefined;
  }

  async item(meta: SnapshotMeta, pos: number): Promise<Buffer> {
    const no = chunkIndexOf(meta.chunkStarts, pos);
    const chunk = this.cache.hit<Chunk>(chunkKey(meta.id, no));
    if (chunk) return itemOf(chunk, pos);
    // Kept alone by a filtered page (CachedChunkSource.items): the same bytes, no read.
    const alone = this.cache.hit<Buffer>(itemKey(meta.id, pos));
    if (alone) return alone;
    if (!this.admit(meta.id, no)) {
      this.cache.counts.misses++;
      const item = await this.store.readItem(meta.id, no, pos - meta.chunkStarts[no]!);
      if (item) return item;
    }
    const read = await this.chunks.chunk(meta, no);
    if (!read) throw new Error(`snapshot ${meta.id} has no chunk ${no}`);
    return itemOf(read, pos);
  }

  /** Whether a detail's miss on chunk `no` should read the whole chunk: any while the cache has room, else the second such miss. */
  private admit(snapshotId: number, no: number): boolean {
    const key = chunkKey(snapshotId, no);
    // Two chunks' worth: a chunk passes its target by up to an item, and keeping one must evict nothing.
    const whole = this.cache.hasRoomFor(2 * CHUNK_TARGET_BYTES) || this.cache.askedBefore(key);
    // An ask in the cache's own record either way: a chunk read whole is then kept by `offer` even if
    // reads that ended while it waited (PostgreSQL) filled the cache; an item read alone makes the next miss whole.
    this.cache.noteAsk(key);
    return whole;
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

  /** Reads every record of the snapshot, a page at a time, into a RecordIndex kept in the cache (once, however many ask). */
  private loadRecordIndex(meta: SnapshotMeta): Promise<RecordIndex | null> {
    let p = this.loadingRecords.get(meta.id);
    if (!p) {
      p = (async () => {
        // Each page is taken in as it comes (RecordIndexBuilder): no row object outlives its turn.
        const builder = new RecordIndexBuilder(meta.count);
        for (let after: string | null = null; ; ) {
          const page = await this.store.readRecordPage(meta.id, after, RECORD_PAGE);
          if (!builder.add(page)) return null;
          if (page.length < RECORD_PAGE) break;
          after = page[page.length - 1]!.idErp;
          // SQLite answers synchronously: let requests in between pages.
          await new Promise((resolve) => setImmediate(resolve));
        }
        // A swept snapshot has no records left: nothing to keep.
        if (builder.size !== meta.count) return null;
        const index = builder.finish();
        if (index.byteLength > this.cache.budgetBytes) {
          if (this.tooLarge.size >= MAX_COUNTED_SNAPSHOTS) this.tooLarge.clear();
          this.tooLarge.add(meta.id);
        } else this.cache.remember(recordIndexKey(meta.id), index);
        return index;
      })();
      p.finally(() => this.loadingRecords.delete(meta.id)).catch(() => {});
      this.loadingRecords.set(meta.id, p);
    }
    return p;
  }
}


/** The bytes of the item at `pos` in `chunk`, which holds it. */
function itemOf(chunk: Chunk, pos: number): Buffer {
  const k = pos - chunk.firstPos;
  return chunk.bytes.subarray(chunk.offsets[k]!, chunk.offsets[k + 1]! - 1);
}

/** The record `idErp` of the snapshot, from its index; its time is the timeline's at its position (list order is by time). */
function refOf(meta: SnapshotMeta, index: RecordIndex, idErp: string): RecordRef | null {
  const k = index.find(idErp);
  if (k < 0) return null;
  const pos = index.position(k);
  return { pos, hash: index.hash(k), actualizadoAt: timeAt(meta, pos) };
}
