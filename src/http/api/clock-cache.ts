/**
 * The byte budget under CachedChunkSource: entries (chunks, segments, thin
 * chunks, indexes, items kept alone, filters' gathered blocks) under string
 * keys, counted with their keys, evicted by CLOCK when they and what is held
 * beside them (`outsideBytes`, the snapshot metas) pass the budget.
 */
import { ClockMap } from '../../domain/clock-map.js';
import { sizeOf, type Cached } from './cache-sizes.js';
import { RecentAsks } from './recent-asks.js';

/** Keys offered and not kept, remembered at most (a bound, see RecentAsks). */
const MAX_OFFERED = 65_536;

/** An entry and its bytes with its key's. */
interface Slot {
  entry: Cached;
  bytes: number;
}

/**
 * An entry's bytes with its key's (two a character, at most): a filter's
 * gathered block is keyed by the filter's text, which a client chooses, and
 * can be longer than the block.
 */
function slotBytes(key: string, entry: Cached): number {
  return sizeOf(entry) + 2 * key.length;
}

export class ClockCache {
  private readonly slots = new ClockMap<string, Slot>();
  private entryBytes = 0;
  /** Bytes counted in the budget but held elsewhere (CachedChunkSource's metas). */
  private outside = 0;
  /** Keys offered while the cache was full and not kept: the next offer of one keeps it. */
  private readonly offered = new RecentAsks<string>(MAX_OFFERED);
  /** Entries found, and entries read from the store by their owners (who count them). */
  readonly counts = { hits: 0, misses: 0 };

  constructor(readonly budgetBytes: number) {}

  /**
   * The entry under `key`, marked as used. CLOCK (domain/clock-map.ts)
   * rather than strict LRU: a hit only sets a flag, where moving the entry
   * to the end cost a Map delete and set on every detail (5% of a warm
   * detail's time) and left garbage in V8's old generation.
   */
  hit<T extends Cached>(key: string): T | undefined {
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    this.counts.hits++;
    return slot.entry as T;
  }

  /** Whether `key` is held (not a use). */
  has(key: string): boolean {
    return this.slots.has(key);
  }

  /** Keeps `entry` unless it (with its key) is larger than the whole budget or `key` is held already. */
  remember(key: string, entry: Cached) {
    const bytes = slotBytes(key, entry);
    if (bytes > this.budgetBytes || this.slots.has(key)) return;
    this.slots.set(key, { entry, bytes });
    this.entryBytes += bytes;
    this.fit();
  }

  /**
   * Keeps `entry` when it fits beside what is held, evicting nothing, or
   * when `key` was asked for before (`offer` or `noteAsk`) and not kept
   * since; otherwise only remembers the ask. Whether it was kept.
   *
   * Why: once the cache is full, keeping every read evicts an entry for each
   * one, so what is asked for once (a client walking a large company, the
   * Zipf tail over many companies) pushes out what is asked for again; and an
   * evicted entry, old enough to be in V8's old generation, holds its bytes
   * until a full collection. Measured (tenants bench, CHUNK_CACHE_MB=32): hit
   * rates 1-2 points higher; on SQLite at a tenth of the scale, 11-23 MB less
   * RSS; at full scale and on PostgreSQL, the same RSS.
   */
  offer(key: string, entry: Cached): boolean {
    if (this.slots.has(key)) return true;
    const asked = this.offered.forget(key);
    if (!asked && !this.hasRoomFor(slotBytes(key, entry))) {
      this.offered.again(key);
      return false;
    }
    this.remember(key, entry);
    // Not kept when larger than the whole budget.
    return this.slots.has(key);
  }

  /** Whether `key` was asked for since it was last kept or forgotten: `offer` would keep it now. */
  askedBefore(key: string): boolean {
    return this.offered.has(key);
  }

  /** Remembers an ask for `key` that read something smaller than its entry (a detail's item alone). */
  noteAsk(key: string) {
    this.offered.again(key);
  }

  /** Sets the bytes held beside the entries, and evicts entries until both fit. */
  setOutsideBytes(bytes: number) {
    this.outside = bytes;
    this.fit();
  }

  /** The entries' bytes and the outside bytes: at most the budget. */
  get bytes(): number {
    return this.entryBytes + this.outside;
  }

  get size(): number {
    return this.slots.size;
  }

  /** Whether entries of `bytes` more would fit beside what is held, evicting nothing. */
  hasRoomFor(bytes: number): boolean {
    return this.bytes + bytes <= this.budgetBytes;
  }

  /** Entries out, as CLOCK chooses them, until all fits the budget. */
  private fit() {
    while (this.entryBytes + this.outside > this.budgetBytes) {
      const evicted = this.slots.evict();
      if (!evicted) return;
      this.entryBytes -= evicted[1].bytes;
    }
  }
}
