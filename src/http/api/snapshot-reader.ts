/**
 * Reads pages and items out of snapshots. Snapshots and chunks are immutable,
 * so both are cached in process with no invalidation: a chunk can never go
 * stale, it can only stop being asked for.
 */
import type { Chunk, ChunkSegment, SnapshotMeta, Store, ThinChunk } from '../../store/store.js';
import { ChunkBuilder, itemBodies } from '../../store/chunk-builder.js';
import { decodeIndex, type SnapshotIndex } from '../../store/snapshot-index.js';
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

/**
 * A byte-budgeted LRU of chunks and of their gzip segments over a Store, with
 * concurrent misses coalesced. Both share one budget (CHUNK_CACHE_MB): a
 * snapshot's segments are about a ninth of its chunks, and a client
 * downloading with gzip needs only the segments.
 */
export class CachedChunkSource implements ChunkSource {
  private readonly metas = new Map<number, SnapshotMeta>();
  /** Chunks under `id:no`, segments under `id:no:z`, thin chunks under `id:no:t`, indexes under `id:ix:name`. */
  private readonly lru = new Map<string, Cached>();
  private readonly loadingThin = new Map<string, Promise<ThinChunk[]>>();
  private readonly loadingIndex = new Map<string, Promise<SnapshotIndex | null>>();
  /** Snapshots written before indexes existed, indexed in memory once (see `legacy`). */
  private readonly legacyBuilds = new Map<number, Promise<Legacy>>();
  private readonly loading = new Map<string, Promise<Chunk[]>>();
  private readonly loadingSegments = new Map<string, Promise<ChunkSegment[]>>();
  private bytes = 0;
  /** What `stats()` reports (GET /metrics, metrics.ts). */
  private readonly counts = { hits: 0, misses: 0, metaHits: 0, metaMisses: 0 };

  constructor(
    private readonly store: Store,
    private readonly budgetBytes: number,
  ) {}

  /**
   * Entries (chunks, segments, thin chunks, indexes) found in memory, and read
   * from the store; snapshot metas apart (a small cache of their own). A lookup
   * that misses on the synchronous path and is then read counts once as a miss.
   */
  stats(): ChunkCacheStats {
    return { ...this.counts, bytes: this.bytes, budgetBytes: this.budgetBytes, entries: this.lru.size };
  }

  async meta(snapshotId: number): Promise<SnapshotMeta | null> {
    const hit = this.metas.get(snapshotId);
    if (hit) {
      this.counts.metaHits++;
      return hit;
    }
    this.counts.metaMisses++;
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
      const hit = this.hit<Chunk>(chunkKey(meta.id, i));
      if (!hit) return undefined;
      out.push(hit);
    }
    return out;
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

  /** The cached entry under `key`, made the most recent (Map keeps insertion order). */
  private hit<T extends Cached>(key: string): T | undefined {
    const entry = this.lru.get(key);
    if (entry) {
      this.counts.hits++;
      this.lru.delete(key);
      this.lru.set(key, entry);
    }
    return entry as T | undefined;
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
    this.lru.set(key, entry);
    this.bytes += sizeOf(entry);
    while (this.bytes > this.budgetBytes) {
      const [oldKey, old] = this.lru.entries().next().value!;
      this.lru.delete(oldKey);
      this.bytes -= sizeOf(old);
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

const chunkKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}`;
const segmentKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}:z`;
const thinKey = (snapshotId: number, chunkNo: number) => `${snapshotId}:${chunkNo}:t`;

type Cached = Chunk | ChunkSegment | ThinChunk | SnapshotIndex;

interface Legacy {
  thin: ThinChunk[];
  indexes: Map<string, SnapshotIndex>;
}

function sizeOf(entry: Cached): number {
  if ('deflate' in entry) return entry.deflate.length;
  if ('byteLength' in entry) return entry.byteLength;
  return 'bounds' in entry ? entry.bytes.length + entry.bounds.byteLength : entry.bytes.length;
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
