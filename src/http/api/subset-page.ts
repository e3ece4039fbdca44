/**
 * Pages of a subset (contract §6): the positions a filter matches, found by
 * intersecting the snapshot's sorted position lists (store/snapshot-index.ts),
 * and pages written from bytes the import prepared: whole items as views of
 * their chunks (a run of consecutive positions is one view), items trimmed by
 * `fields` from the pieces of their thin items (no `data`), and tombstones of
 * live records from their thin items' id and time.
 */
import { KIND_SPECS } from '../../domain/kinds.js';
import type { SnapshotMeta, Chunk, ThinChunk } from '../../store/store.js';
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
import { keptRuns, maskKeyOf, projectionOf, type Projection, type ProjectionCache } from './thin-projection.js';
import { addRun, ChunkWalk, loadChunks, loadItems, loadRuns, runsOf } from './page-chunks.js';
import { PageWriter, VIEW_ITEM_FROM_BYTES, VIEW_RUN_FROM_BYTES } from './page-writer.js';

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
    const found = matchingPositions(source, meta, filters);
    hit = found.then((f) => f.positions);
    this.lru.set(key, hit);
    found.then(
      ({ positions: m, indexView }) => {
        if (this.lru.get(key) !== hit) return;
        // A list of an index as it is, found again by a binary search: kept by none (a copy would cost more than that).
        if (indexView) return void this.lru.delete(key);
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

/**
 * The positions matching every filter, ascending. `indexView`: they are one
 * value's list in an equality index, as the index holds it (one filter, and
 * one of its values matching anything): a view of the index, not a copy.
 */
export async function matchingPositions(
  source: ChunkSource,
  meta: SnapshotMeta,
  filters: Filters,
): Promise<{ positions: Uint32Array; indexView: boolean }> {
  const indexBuffers = new Set<ArrayBufferLike>();
  const lists = await Promise.all([
    ...filters.equal.map(async (f) => {
      const ix = await postingIndex(source, meta, `eq:${f.field}`);
      indexBuffers.add(ix.postings.buffer);
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
  if (indexBuffers.has(out.buffer)) return { positions: out, indexView: true };
  // Kept in MatchCache: a view would keep a whole index (or a larger array) alive, uncounted.
  return { positions: out.byteLength === out.buffer.byteLength ? out : out.slice(), indexView: false };
}

/** A page's entry: a live position, or a removed record's tombstone. */
export type PageEntry = number | RenderedTombstone;

const REMOVED = Buffer.from(',"eliminado":true');

/**
 * The bytes of a page's entries joined by commas. A position is its item
 * (trimmed to `fields`) when `isItem(pos)`, else the tombstone of its record
 * (the convergence rule of filtered change feeds). Positions are in list
 * order (ascending).
 */
export async function renderEntries(
  source: ChunkSource,
  meta: SnapshotMeta,
  entries: ArrayLike<PageEntry>,
  fields: FieldMask | null,
  isItem: ((pos: number) => boolean) | null = null,
  projections: ProjectionCache | null = null,
): Promise<Buffer[]> {
  // Which chunks the page touches, and whether it needs their items, their thin items, or both.
  let full: number[] = [];
  let thin: number[] = [];
  const walk = new ChunkWalk(meta);
  let sorted = true;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (typeof e !== 'number') continue;
    const c = walk.of(e);
    const item = isItem === null || isItem(e);
    if (item && (fields === null || fields.data)) sorted = addRun(full, c) && sorted;
    if (!item || fields !== null) sorted = addRun(thin, c) && sorted;
  }
  if (!sorted) {
    // Not in list order: the chunks are gathered the slow way.
    const f = new Set<number>();
    const t = new Set<number>();
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (typeof e !== 'number') continue;
      const c = chunkIndexOf(meta.chunkStarts, e);
      const item = isItem === null || isItem(e);
      if (item && (fields === null || fields.data)) f.add(c);
      if (!item || fields !== null) t.add(c);
    }
    [full, thin] = [runsOf(f), runsOf(t)];
  }
  // Items without data come from their chunk's projection on the fields asked for (thin-projection.ts).
  const projected = fields !== null && !fields.data;
  const maskKey = fields ? maskKeyOf(fields) : '';
  // When every entry is an item, a chunk whose projection is kept needs no thin chunk.
  const kept = new Map<number, Projection>();
  if (projected && projections && isItem === null) {
    const missing: number[] = [];
    for (let r = 0; r < thin.length; r += 2) {
      for (let c = thin[r]!; c <= thin[r + 1]!; c++) {
        const p = projections.peek(meta.id, maskKey, c);
        if (p) kept.set(c, p);
        else addRun(missing, c);
      }
    }
    thin = missing;
  }
  const wantsItem = (pos: number) => (isItem === null || isItem(pos)) && (fields === null || fields.data);
  const [{ chunks, items }, thinChunks] = await Promise.all([
    sorted ? loadItems(source, meta, full, entries, wantsItem) : { chunks: await loadChunks(source, meta, full), items: null },
    loadRuns(thin, (a, b) => source.cachedThinChunks(meta, a, b), (a, b) => source.thinChunks(meta, a, b)),
  ]);
  const f = KIND_SPECS[meta.kind].fields.length;
  const runs = fields && !fields.keep.every(Boolean) ? keptRuns(fields) : null;

  const out = new PageWriter();
  // An open run of whole items: consecutive positions of one chunk or projection.
  let run: Chunk | Projection | null = null;
  let runFrom = 0;
  let runTo = 0;
  /** Whether the run's source has a comma before its first item (a trimmed projection; never a chunk). */
  let runLeadingComma = false;
  const closeRun = () => {
    if (!run) return;
    const viewFrom = runTo - runFrom > 1 ? VIEW_RUN_FROM_BYTES : VIEW_ITEM_FROM_BYTES;
    out.entry(run.bytes, run.offsets[runFrom]!, run.offsets[runTo]! - 1, runFrom > 0 || runLeadingComma, viewFrom);
    run = null;
  };
  // The chunk, thin chunk and projection of the last position, looked up again only when it changes.
  let lastC = -1;
  let chunk: Chunk | undefined;
  let t: ThinChunk | undefined;
  let projection: Projection | undefined;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (typeof e !== 'number') {
      closeRun();
      out.separator();
      out.copy(e.json, 0, e.json.length);
      continue;
    }
    const c = walk.of(e);
    if (c !== lastC) {
      lastC = c;
      chunk = chunks.get(c);
      t = thinChunks.get(c);
      projection = undefined;
    }
    const item = isItem === null || isItem(e);
    if (item && fields === null && chunk === undefined) {
      // A match read alone (loadItems).
      closeRun();
      const alone = items!.get(e)!;
      out.entry(alone, 0, alone.length, false, VIEW_ITEM_FROM_BYTES);
      continue;
    }
    if (item && (fields === null || projected)) {
      if (fields !== null) projection ??= kept.get(c) ?? projectionOf(projections, meta.id, maskKey, t!, f, runs);
      const src = fields === null ? chunk! : projection!;
      const k = e - src.firstPos;
      if (run === src && runTo === k) runTo = k + 1;
      else {
        closeRun();
        run = src;
        runFrom = k;
        runTo = k + 1;
        runLeadingComma = fields !== null && projection!.leadingComma;
      }
      continue;
    }
    closeRun();
    out.separator();
    const bounds = t!.bounds;
    const b = (e - t!.firstPos) * (f + 1);
    const itemEnd = b + f + 1 < bounds.length ? bounds[b + f + 1]! - 1 : t!.bytes.length;
    if (!item) {
      // {"id_erp":…,"eliminado":true,"actualizado_at":"…"}
      out.copy(t!.bytes, bounds[b]!, bounds[b + 1]!);
      out.copy(REMOVED, 0, REMOVED.length);
      out.copy(t!.bytes, bounds[b + f]!, itemEnd);
      continue;
    }
    // Fields and data: the item's own bytes, cut where its thin item says its fields start.
    let cb: Buffer;
    let base: number;
    let end: number;
    if (chunk) {
      const ck = e - chunk.firstPos;
      cb = chunk.bytes;
      base = chunk.offsets[ck]! - bounds[b]!;
      end = chunk.offsets[ck + 1]! - 1;
    } else {
      cb = items!.get(e)!;
      base = -bounds[b]!;
      end = cb.length;
    }
    if (runs === null) out.copy(cb, base + bounds[b]!, end);
    else {
      for (let r = 0; r < runs.length; r += 2) out.copy(cb, base + bounds[b + runs[r]!]!, base + bounds[b + runs[r + 1]!]!);
      out.copy(cb, base + bounds[b + f]!, end); // `,"data":{…}` and the time
    }
  }
  closeRun();
  return out.finish();
}
