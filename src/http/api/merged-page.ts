/**
 * Pages of `include_deleted=true` lists: live items and tombstones merged in
 * list order (actualizado_at, then id_erp in byte order). Both sequences are
 * already sorted, so the page at any offset is found by a binary search on
 * how many tombstones precede it (the k-th element of two sorted lists), then
 * by walking both forward: O(log n + limit) reads, whatever the offset.
 */
import type { Chunk, SnapshotMeta } from '../../store/store.js';
import type { RenderedTombstone } from '../../snapshots/tombstones.js';
import { chunkIndexOf, firstPositionSince, type ChunkSource } from './snapshot-reader.js';
import type { PageEntry } from './subset-page.js';

// Rendered below the HTTP layer, so the sandbox can render its own (issue 24); kept importable from here.
export { renderTombstones, type RenderedTombstone } from '../../snapshots/tombstones.js';

const ID_PREFIX = Buffer.from('{"id_erp":"');

/** Live items by position, with their sort keys, reading chunks on demand. */
class LiveItems {
  private readonly chunks = new Map<number, Chunk>();

  constructor(
    private readonly source: ChunkSource,
    private readonly meta: SnapshotMeta,
  ) {}

  /** Makes positions [from, to) readable with as few reads as possible. */
  async load(from: number, to: number): Promise<void> {
    if (from >= to) return;
    const first = chunkIndexOf(this.meta.chunkStarts, from);
    const last = chunkIndexOf(this.meta.chunkStarts, to - 1);
    let missing = -1;
    for (let i = first; i <= last; i++) if (!this.chunks.has(i)) missing = missing < 0 ? i : missing;
    if (missing < 0) return;
    for (const c of await this.source.chunks(this.meta, missing, last)) this.chunks.set(c.chunkNo, c);
  }

  item(pos: number): Buffer {
    const c = this.chunks.get(chunkIndexOf(this.meta.chunkStarts, pos))!;
    const k = pos - c.firstPos;
    return c.bytes.subarray(c.offsets[k]!, c.offsets[k + 1]! - 1);
  }

  at(pos: number): number {
    const t = this.meta.timeline;
    let lo = 0;
    let hi = t.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (t[mid]!.firstPos <= pos) lo = mid;
      else hi = mid - 1;
    }
    return t[lo]!.at;
  }

  /** The item's id_erp as UTF-8 bytes: every item starts with it. */
  id(pos: number): Buffer {
    const bytes = this.item(pos);
    let end = ID_PREFIX.length;
    while (bytes[end] !== 0x22) end += bytes[end] === 0x5c ? 2 : 1;
    return Buffer.from(JSON.parse(bytes.toString('utf8', ID_PREFIX.length - 1, end + 1)) as string, 'utf8');
  }

  /** < 0 when the live item at `pos` comes before tombstone `t`. */
  async compare(pos: number, t: RenderedTombstone): Promise<number> {
    const byTime = this.at(pos) - t.at;
    if (byTime !== 0) return byTime;
    await this.load(pos, pos + 1);
    return Buffer.compare(this.id(pos), t.id);
  }
}

/** First tombstone with `at >= since`. */
function firstTombstoneSince(tombstones: readonly RenderedTombstone[], since: number): number {
  let lo = 0;
  let hi = tombstones.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (tombstones[mid]!.at < since) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface MergedPage {
  total: number;
  /** Live positions and tombstones, in list order (rendered by subset-page.ts's renderEntries). */
  entries: PageEntry[];
}

export async function mergedPage(
  source: ChunkSource,
  meta: SnapshotMeta | null,
  tombstones: readonly RenderedTombstone[],
  since: number | null,
  offset: number,
  limit: number,
): Promise<MergedPage> {
  const count = meta?.count ?? 0;
  const liveFirst = meta && since !== null ? firstPositionSince(meta, since) : 0;
  const tombFirst = since !== null ? firstTombstoneSince(tombstones, since) : 0;
  const n = count - liveFirst;
  const m = tombstones.length - tombFirst;
  const total = n + m;
  if (offset >= total) return { total, entries: [] };
  const live = meta ? new LiveItems(source, meta) : null;

  // Smallest t (tombstones among the first `offset` merged) whose next tombstone follows the last live item taken.
  let lo = Math.max(0, offset - n);
  let hi = Math.min(offset, m);
  while (lo < hi) {
    const t = (lo + hi) >>> 1;
    const s = offset - t;
    const follows = s === 0 || (await live!.compare(liveFirst + s - 1, tombstones[tombFirst + t]!)) < 0;
    if (follows) hi = t;
    else lo = t + 1;
  }
  let q = tombFirst + lo;
  let p = liveFirst + (offset - lo);
  await live?.load(p, Math.min(count, p + limit));

  const entries: PageEntry[] = [];
  while (entries.length < limit && (p < count || q < tombstones.length)) {
    const takeLive = q >= tombstones.length || (p < count && (await live!.compare(p, tombstones[q]!)) < 0);
    entries.push(takeLive ? p++ : tombstones[q++]!);
  }
  return { total, entries };
}
