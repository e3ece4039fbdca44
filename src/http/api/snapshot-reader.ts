/**
 * Reads pages and items out of snapshots. Snapshots and chunks are immutable,
 * so both are cached in process with no invalidation: a chunk can never go
 * stale, it can only stop being asked for.
 */
import type { Chunk, SnapshotMeta, Store } from '../../store/store.js';

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

export interface ChunkSource {
  meta(snapshotId: number): Promise<SnapshotMeta | null>;
  /** Chunks `from..to` inclusive. */
  chunks(meta: SnapshotMeta, from: number, to: number): Promise<Chunk[]>;
  /** The published snapshot's meta when it is in memory; undefined otherwise. */
  cachedMeta(snapshotId: number): SnapshotMeta | undefined;
  /** Chunks `from..to` inclusive when all are in memory; undefined otherwise. */
  cachedChunks(meta: SnapshotMeta, from: number, to: number): Chunk[] | undefined;
}

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

/** A byte-budgeted LRU of chunks over a Store, with concurrent misses coalesced. */
export class CachedChunkSource implements ChunkSource {
  private readonly metas = new Map<number, SnapshotMeta>();
  private readonly lru = new Map<string, Chunk>();
  private readonly loading = new Map<string, Promise<Chunk[]>>();
  private bytes = 0;

  constructor(
    private readonly store: Store,
    private readonly budgetBytes: number,
  ) {}

  async meta(snapshotId: number): Promise<SnapshotMeta | null> {
    const hit = this.metas.get(snapshotId);
    if (hit) return hit;
    const meta = await this.store.snapshotMeta(snapshotId);
    // Cached only once published: a staged snapshot's meta still lacks its publication time.
    if (meta && meta.publishedAt !== null) {
      // Metas are small; a few hundred cover every live and recently superseded snapshot.
      if (this.metas.size >= 512) this.metas.delete(this.metas.keys().next().value!);
      this.metas.set(snapshotId, meta);
    }
    return meta;
  }

  cachedMeta(snapshotId: number): SnapshotMeta | undefined {
    return this.metas.get(snapshotId);
  }

  cachedChunks(meta: SnapshotMeta, from: number, to: number): Chunk[] | undefined {
    const out: Chunk[] = [];
    for (let i = from; i <= to; i++) {
      const key = `${meta.id}:${i}`;
      const hit = this.lru.get(key);
      if (!hit) return undefined;
      this.lru.delete(key);
      this.lru.set(key, hit);
      out.push(hit);
    }
    return out;
  }

  async chunks(meta: SnapshotMeta, from: number, to: number): Promise<Chunk[]> {
    const out: Chunk[] = [];
    let missFrom = -1;
    for (let i = from; i <= to; i++) {
      const key = `${meta.id}:${i}`;
      const hit = this.lru.get(key);
      if (hit) {
        // Refresh recency: Map keeps insertion order.
        this.lru.delete(key);
        this.lru.set(key, hit);
        out.push(hit);
      } else {
        missFrom = missFrom < 0 ? i : missFrom;
        out.push(undefined as unknown as Chunk);
      }
    }
    if (missFrom < 0) return out;
    const loaded = await this.load(meta.id, missFrom, to);
    for (const c of loaded) out[c.chunkNo - from] = c;
    return out;
  }

  private load(snapshotId: number, from: number, to: number): Promise<Chunk[]> {
    const key = `${snapshotId}:${from}-${to}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.store.readChunks(snapshotId, from, to).then((chunks) => {
        for (const c of chunks) this.remember(`${snapshotId}:${c.chunkNo}`, c);
        return chunks;
      });
      pending.finally(() => this.loading.delete(key)).catch(() => {});
      this.loading.set(key, pending);
    }
    return pending;
  }

  private remember(key: string, chunk: Chunk) {
    if (chunk.bytes.length > this.budgetBytes || this.lru.has(key)) return;
    this.lru.set(key, chunk);
    this.bytes += chunk.bytes.length;
    while (this.bytes > this.budgetBytes) {
      const [oldKey, old] = this.lru.entries().next().value!;
      this.lru.delete(oldKey);
      this.bytes -= old.bytes.length;
    }
  }
}
