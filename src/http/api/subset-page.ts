/**
 * Pages of a subset (contract §6): the positions a filter matches, found by
 * intersecting the snapshot's sorted position lists (store/snapshot-index.ts),
 * and pages written from bytes the import prepared: whole items as views of
 * their chunks (a run of consecutive positions is one view), items trimmed by
 * `fields` from the pieces of their thin items (no `data`), and tombstones of
 * live records from their thin items' id and time.
 */
import { KIND_SPECS } from '../../domain/kinds.js';
import type { SnapshotMeta, Chunk } from '../../store/store.js';
import {
  intersectAll,
  positionsInRange,
  postingsOf,
  postingsWithPrefix,
  unionDisjoint,
  type PostingIndex,
  type RangeIndex,
} from '../../store/snapshot-index.js';
import { chunkIndexOf, type ChunkSource } from './snapshot-reader.js';
import type { FieldMask, Filters } from './subset-query.js';
import type { RenderedTombstone } from './merged-page.js';

/** How many filters' matches are kept at most, whatever their bytes (4 a position) within the budget. */
const MATCHES_KEPT = 256;

/**
 * The matches of recent filters, per snapshot: a client walking a filtered
 * list with `next_offset` finds them computed. Snapshots never change, so an
 * entry never goes stale.
 */
export class MatchCache {
  private readonly lru = new Map<string, Promise<Uint32Array>>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;

  /** `budgetBytes`: the filter matches' share of CHUNK_CACHE_MB (read-cache-budget.ts). */
  constructor(readonly budgetBytes: number) {}

  /** Bytes of the matches held now (those still being computed count once they are known). */
  get cachedBytes(): number {
    return this.bytes;
  }

  matches(source: ChunkSource, meta: SnapshotMeta, filters: Filters): Promise<Uint32Array> {
    const key = `${meta.id}\n${filters.key}`;
    let hit = this.lru.get(key);
    if (hit) {
      this.lru.delete(key);
      this.lru.set(key, hit);
      return hit;
    }
    hit = matchingPositions(source, meta, filters);
    this.lru.set(key, hit);
    hit.then(
      (m) => {
        if (this.lru.get(key) !== hit) return;
        // Larger than the whole share: used by this request, kept by none (rather than emptying the cache for it).
        if (m.byteLength > this.budgetBytes) return void this.lru.delete(key);
        this.sizes.set(key, m.byteLength);
        this.bytes += m.byteLength;
        this.trim();
      },
      () => this.lru.delete(key),
    );
    this.trim();
    return hit;
  }

  private trim() {
    while (this.lru.size > MATCHES_KEPT || this.bytes > this.budgetBytes) {
      const oldest = this.lru.keys().next().value!;
      this.lru.delete(oldest);
      this.bytes -= this.sizes.get(oldest) ?? 0;
      this.sizes.delete(oldest);
    }
  }
}

async function postingIndex(source: ChunkSource, meta: SnapshotMeta, name: string): Promise<PostingIndex> {
  const ix = await source.index(meta, name);
  if (ix?.type !== 'postings') throw new Error(`snapshot ${meta.id} has no index ${name}`);
  return ix;
}

async function rangeIndex(source: ChunkSource, meta: SnapshotMeta, name: string): Promise<RangeIndex> {
  const ix = await source.index(meta, name);
  if (ix?.type !== 'range') throw new Error(`snapshot ${meta.id} has no index ${name}`);
  return ix;
}

/** The positions matching every filter, ascending. */
export async function matchingPositions(source: ChunkSource, meta: SnapshotMeta, filters: Filters): Promise<Uint32Array> {
  const lists = await Promise.all([
    ...filters.equal.map(async (f) => {
      const ix = await postingIndex(source, meta, `eq:${f.field}`);
      // Served values are JSON: a value is looked up by its JSON text, null as `null`.
      return unionDisjoint(f.values.map((v) => postingsOf(ix, Buffer.from(v === null ? 'null' : JSON.stringify(v)))));
    }),
    ...(['fecha', 'precio'] as const).map(async (field) => {
      const r = filters[field];
      return r && positionsInRange(await rangeIndex(source, meta, `range:${field}`), r.min, r.max);
    }),
    (async () => {
      if (!filters.q) return null;
      const ix = await postingIndex(source, meta, 'q');
      return intersectAll(filters.q.map((w) => postingsWithPrefix(ix, Buffer.from(w, 'utf8'))));
    })(),
  ]);
  const out = intersectAll(lists.filter((l): l is Uint32Array => l !== null));
  // Kept in MatchCache: a view would keep a whole index alive, uncounted.
  return out.byteLength === out.buffer.byteLength ? out : out.slice();
}

/** A page's entry: a live position, or a removed record's tombstone. */
export type PageEntry = number | RenderedTombstone;

const COMMA = 0x2c;
const REMOVED = Buffer.from(',"eliminado":true');

/**
 * Writes a page's items: small pieces are copied into shared buffers, large
 * ones (runs of whole items) go out as views of their chunks.
 */
class PageWriter {
  readonly pieces: Buffer[] = [];
  private buf = Buffer.allocUnsafe(16 * 1024);
  private start = 0;
  private len = 0;
  private first = true;

  separator() {
    if (!this.first) this.byte(COMMA);
    this.first = false;
  }

  byte(b: number) {
    this.ensure(1);
    this.buf[this.len++] = b;
  }

  copy(src: Buffer, from: number, to: number) {
    this.ensure(to - from);
    src.copy(this.buf, this.len, from, to);
    this.len += to - from;
  }

  view(v: Buffer) {
    this.flushCopies();
    this.pieces.push(v);
  }

  finish(): Buffer[] {
    this.flushCopies();
    return this.pieces;
  }

  private flushCopies() {
    if (this.len > this.start) this.pieces.push(this.buf.subarray(this.start, this.len));
    this.start = this.len;
  }

  private ensure(n: number) {
    if (this.len + n <= this.buf.length) return;
    this.flushCopies();
    this.buf = Buffer.allocUnsafe(Math.max(16 * 1024, n));
    this.start = 0;
    this.len = 0;
  }
}

/**
 * The bytes of a page's entries joined by commas. A position is its item
 * (trimmed to `fields`) when `isItem(pos)`, else the tombstone of its record
 * (the convergence rule of filtered change feeds).
 */
export async function renderEntries(
  source: ChunkSource,
  meta: SnapshotMeta,
  entries: readonly PageEntry[],
  fields: FieldMask | null,
  isItem: (pos: number) => boolean = () => true,
): Promise<Buffer[]> {
  // Which chunks the page touches, and whether it needs their items, their thin items, or both.
  const full = new Set<number>();
  const thin = new Set<number>();
  for (const e of entries) {
    if (typeof e !== 'number') continue;
    const c = chunkIndexOf(meta.chunkStarts, e);
    const item = isItem(e);
    if (item && (fields === null || fields.data)) full.add(c);
    if (!item || fields !== null) thin.add(c);
  }
  const [chunks, thinChunks] = await Promise.all([loadRuns(full, (a, b) => source.chunks(meta, a, b)), loadRuns(thin, (a, b) => source.thinChunks(meta, a, b))]);
  const f = KIND_SPECS[meta.kind].fields.length;

  const out = new PageWriter();
  // An open run of whole items: consecutive positions of one chunk.
  let run: { chunk: Chunk; from: number; to: number } | null = null;
  const closeRun = () => {
    if (!run) return;
    out.separator();
    out.view(run.chunk.bytes.subarray(run.chunk.offsets[run.from]!, run.chunk.offsets[run.to]! - 1));
    run = null;
  };
  for (const e of entries) {
    if (typeof e !== 'number') {
      closeRun();
      out.separator();
      out.copy(e.json, 0, e.json.length);
      continue;
    }
    const c = chunkIndexOf(meta.chunkStarts, e);
    if (isItem(e) && fields === null) {
      const chunk = chunks.get(c)!;
      const k = e - chunk.firstPos;
      if (run && run.chunk === chunk && run.to === k) run.to = k + 1;
      else {
        closeRun();
        run = { chunk, from: k, to: k + 1 };
      }
      continue;
    }
    closeRun();
    out.separator();
    const t = thinChunks.get(c)!;
    const k = e - t.firstPos;
    const b = k * (f + 1);
    const itemEnd = b + f + 1 < t.bounds.length ? t.bounds[b + f + 1]! - 1 : t.bytes.length;
    if (!isItem(e)) {
      // {"id_erp":…,"eliminado":true,"actualizado_at":"…"}
      out.copy(t.bytes, t.bounds[b]!, t.bounds[b + 1]!);
      out.copy(REMOVED, 0, REMOVED.length);
      out.copy(t.bytes, t.bounds[b + f]!, itemEnd);
      continue;
    }
    const mask = fields!;
    if (!mask.data) {
      if (mask.keep.every(Boolean)) out.copy(t.bytes, t.bounds[b]!, itemEnd);
      else {
        for (let j = 0; j < f; j++) if (mask.keep[j]) out.copy(t.bytes, t.bounds[b + j]!, t.bounds[b + j + 1]!);
        out.copy(t.bytes, t.bounds[b + f]!, itemEnd);
      }
      continue;
    }
    // Fields and data: the item's own bytes, cut where its thin item says its fields start.
    const chunk = chunks.get(c)!;
    const ck = e - chunk.firstPos;
    const s = chunk.offsets[ck]!;
    const end = chunk.offsets[ck + 1]! - 1;
    const base = t.bounds[b]!;
    for (let j = 0; j < f; j++) if (mask.keep[j]) out.copy(chunk.bytes, s + t.bounds[b + j]! - base, s + t.bounds[b + j + 1]! - base);
    out.copy(chunk.bytes, s + t.bounds[b + f]! - base, end); // `,"data":{…}` and the time
  }
  closeRun();
  return out.finish();
}

/** Reads the chunks numbered in `wanted`, in runs of consecutive numbers. */
async function loadRuns<T extends { chunkNo: number }>(wanted: Set<number>, read: (from: number, to: number) => Promise<T[]>): Promise<Map<number, T>> {
  const out = new Map<number, T>();
  if (wanted.size === 0) return out;
  const sorted = [...wanted].sort((a, b) => a - b);
  const reads: Promise<T[]>[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    reads.push(read(sorted[i]!, sorted[j]!));
    i = j + 1;
  }
  for (const list of await Promise.all(reads)) for (const c of list) out.set(c.chunkNo, c);
  return out;
}
