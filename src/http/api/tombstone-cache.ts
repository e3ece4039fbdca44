/**
 * The tombstones of recent snapshots, rendered (`include_deleted=true` lists),
 * kept within their share of CHUNK_CACHE_MB (read-cache-budget.ts). A
 * snapshot's tombstones never change, so an entry never goes stale; a company
 * that deletes a few hundred records a night holds tens of thousands of them
 * over the retention's 90 days, so they are bounded by bytes, not by count.
 */
import type { Store } from '../../store/store.js';
import { renderTombstones, type RenderedTombstone } from './merged-page.js';

/**
 * What a rendered tombstone costs besides its bytes: the object and its two
 * Buffers on the V8 heap (measured with --expose-gc over 100,000 of them:
 * 265 bytes of heap each, and their ~90 bytes of JSON and id ~100 outside it).
 */
const TOMBSTONE_OVERHEAD_BYTES = 280;
/** Snapshots kept at most, whatever their bytes: one with no tombstones costs a Map entry. */
const SNAPSHOTS_KEPT = 4096;

export function tombstonesBytes(list: readonly RenderedTombstone[]): number {
  let bytes = 0;
  for (const t of list) bytes += TOMBSTONE_OVERHEAD_BYTES + t.id.length + t.json.length;
  return bytes;
}

export class TombstoneCache {
  private readonly lru = new Map<number, Promise<RenderedTombstone[]>>();
  private readonly sizes = new Map<number, number>();
  private bytes = 0;

  /** `budgetBytes`: the tombstones' share of CHUNK_CACHE_MB. */
  constructor(
    private readonly store: Store,
    readonly budgetBytes: number,
  ) {}

  /** Bytes of the tombstones held now (those still being read count once they are rendered). */
  get cachedBytes(): number {
    return this.bytes;
  }

  /** The snapshot's tombstones, oldest first, rendered once while they stay in the cache. */
  of(snapshotId: number): Promise<RenderedTombstone[]> {
    const hit = this.lru.get(snapshotId);
    if (hit) {
      this.lru.delete(snapshotId);
      this.lru.set(snapshotId, hit);
      return hit;
    }
    const read = this.store.readTombstones(snapshotId).then(renderTombstones);
    this.lru.set(snapshotId, read);
    this.trim();
    read.then(
      (list) => {
        if (this.lru.get(snapshotId) !== read) return;
        const size = tombstonesBytes(list);
        // Larger than the whole share: served to this request, kept by none.
        if (size > this.budgetBytes) return void this.lru.delete(snapshotId);
        this.sizes.set(snapshotId, size);
        this.bytes += size;
        this.trim();
      },
      () => {
        if (this.lru.get(snapshotId) === read) this.lru.delete(snapshotId);
      },
    );
    return read;
  }

  private trim() {
    while (this.lru.size > SNAPSHOTS_KEPT || this.bytes > this.budgetBytes) {
      const oldest = this.lru.keys().next().value!;
      this.lru.delete(oldest);
      this.bytes -= this.sizes.get(oldest) ?? 0;
      this.sizes.delete(oldest);
    }
  }
}
