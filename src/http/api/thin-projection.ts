/**
 * Thin chunks trimmed to the fields a `fields=` page asks for (contract §6),
 * made once per chunk and field set, and kept: a thin page is then runs of
 * items of a few projected chunks, written as a plain page is, instead of two
 * or three small copies per item on every request (a page of 1,000 thin
 * customers was 3,000 pieces put together per request).
 *
 * A projection is of one chunk, not of a page: any page, at any offset and
 * with any filter, asking for the same fields of the same snapshot shares it.
 * Snapshots never change, so an entry never goes stale.
 */
import type { ThinChunk } from '../../store/store.js';
import type { FieldMask } from './subset-query.js';

/**
 * A chunk's items trimmed to a field set, laid out as a Chunk's: joined by
 * commas, item k is `bytes[offsets[k], offsets[k + 1] - 1)`. With
 * `leadingComma`, the first item has a comma before it as well, so that a
 * page starting a run at any item sends it as one view (comma included)
 * rather than a one-byte piece and a view.
 */
export interface Projection {
  firstPos: number;
  offsets: Uint32Array;
  bytes: Buffer;
  leadingComma: boolean;
}

/** The key of a field set among projections: which highlighted fields it keeps. */
export function maskKeyOf(fields: FieldMask): string {
  let key = '';
  for (const k of fields.keep) key += k ? '1' : '0';
  return key;
}

/**
 * The kept highlighted fields of a mask as runs of consecutive field numbers
 * (`[from, to)` pairs): `fields=id_erp,nombre` is one copy per item, not two.
 */
export function keptRuns(mask: FieldMask): number[] {
  const runs: number[] = [];
  for (let j = 0; j < mask.keep.length; j++) {
    if (!mask.keep[j]) continue;
    if (runs.length > 0 && runs[runs.length - 1] === j) runs[runs.length - 1] = j + 1;
    else runs.push(j, j + 1);
  }
  return runs;
}

/**
 * The items of thin chunk `t` (`f` highlighted fields) keeping the fields of
 * `runs` (keptRuns) and the time. With `runs` null (every field kept) the
 * thin chunk's own bytes are used, with offsets read off its bounds.
 */
export function project(t: ThinChunk, f: number, runs: number[] | null): Projection {
  const { bounds, bytes } = t;
  const n = bounds.length / (f + 1);
  const offsets = new Uint32Array(n + 1);
  if (runs === null) {
    for (let k = 0; k < n; k++) offsets[k] = bounds[k * (f + 1)]!;
    offsets[n] = bytes.length + 1;
    return { firstPos: t.firstPos, offsets, bytes, leadingComma: false };
  }
  const itemEnd = (k: number) => (k + 1 < n ? bounds[(k + 1) * (f + 1)]! - 1 : bytes.length);
  let size = 0;
  for (let k = 0, b = 0; k < n; k++, b += f + 1) {
    for (let r = 0; r < runs.length; r += 2) size += bounds[b + runs[r + 1]!]! - bounds[b + runs[r]!]!;
    size += 1 + itemEnd(k) - bounds[b + f]!; // a comma, and the time
  }
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  const put = (from: number, to: number) => {
    bytes.copy(out, at, from, to);
    at += to - from;
  };
  for (let k = 0, b = 0; k < n; k++, b += f + 1) {
    out[at++] = 0x2c;
    offsets[k] = at;
    for (let r = 0; r < runs.length; r += 2) put(bounds[b + runs[r]!]!, bounds[b + runs[r + 1]!]!);
    put(bounds[b + f]!, itemEnd(k));
  }
  offsets[n] = at + 1;
  return { firstPos: t.firstPos, offsets, bytes: out, leadingComma: true };
}

/** The projection of thin chunk `t` on a field set: through `projections` (kept, or made and kept) when there is one, else made. */
export function projectionOf(projections: ProjectionCache | null, snapshotId: number, maskKey: string, t: ThinChunk, f: number, runs: number[] | null): Projection {
  return projections ? projections.get(snapshotId, maskKey, t, f, runs) : project(t, f, runs);
}

/** A kept projection, and whether a page used it since eviction last passed over it. */
interface Slot {
  projection: Projection;
  size: number;
  used: boolean;
  /** The table it is in, under `tableKey`, at `chunkNo`. */
  table: Map<number, Slot>;
  tableKey: string;
  chunkNo: number;
}

/**
 * Projections of recent chunks and field sets, evicted by CLOCK past the
 * budget. Kept in a table per snapshot and field set, looked up by chunk
 * number: a page asks for its ~50 chunks' projections after finding the
 * table once (the last one is remembered), where a string key per chunk and
 * a move to the end of an LRU per hit were 10% of a thin page's time.
 */
export class ProjectionCache {
  private readonly tables = new Map<string, Map<number, Slot>>();
  /** Slots in the order CLOCK passes over them, from `head` on. */
  private queue: Slot[] = [];
  private head = 0;
  private bytes = 0;
  private last: { snapshotId: number; maskKey: string; table: Map<number, Slot> } | null = null;

  /**
   * `budgetBytes`: what the kept projections may take, their share of
   * CHUNK_CACHE_MB (read-cache-budget.ts; thin items of `id_erp,nombre` are
   * ~100 bytes: 100,000 customers ≈ 10 MB).
   */
  constructor(private readonly budgetBytes: number) {}

  get cachedBytes(): number {
    return this.bytes;
  }

  /** The projection of chunk `chunkNo` for the field set `maskKey` when it is kept; undefined otherwise. */
  peek(snapshotId: number, maskKey: string, chunkNo: number): Projection | undefined {
    const slot = this.table(snapshotId, maskKey, false)?.get(chunkNo);
    if (!slot) return undefined;
    slot.used = true;
    return slot.projection;
  }

  /** The projection of thin chunk `t` of snapshot `snapshotId` for the field set `maskKey`, made on a miss. */
  get(snapshotId: number, maskKey: string, t: ThinChunk, f: number, runs: number[] | null): Projection {
    const hit = this.peek(snapshotId, maskKey, t.chunkNo);
    if (hit) return hit;
    const projection = project(t, f, runs);
    // Counted whole even when it shares the thin chunk's bytes (every field kept): it keeps them alive.
    const size = projection.offsets.byteLength + projection.bytes.length;
    if (size <= this.budgetBytes) {
      const table = this.table(snapshotId, maskKey, true)!;
      const slot: Slot = { projection, size, used: false, table, tableKey: tableKey(snapshotId, maskKey), chunkNo: t.chunkNo };
      table.set(t.chunkNo, slot);
      this.queue.push(slot);
      this.bytes += size;
      this.fit();
    }
    return projection;
  }

  private table(snapshotId: number, maskKey: string, create: boolean): Map<number, Slot> | undefined {
    const last = this.last;
    if (last && last.snapshotId === snapshotId && last.maskKey === maskKey) return last.table;
    const key = tableKey(snapshotId, maskKey);
    let table = this.tables.get(key);
    if (!table) {
      if (!create) return undefined;
      table = new Map();
      this.tables.set(key, table);
    }
    this.last = { snapshotId, maskKey, table };
    return table;
  }

  /** Second chance: a used slot goes round again, unused; an unused one is evicted. */
  private fit() {
    while (this.bytes > this.budgetBytes) {
      const slot = this.queue[this.head++]!;
      if (slot.used) {
        slot.used = false;
        this.queue.push(slot);
      } else {
        slot.table.delete(slot.chunkNo);
        this.bytes -= slot.size;
        if (slot.table.size === 0) {
          this.tables.delete(slot.tableKey);
          if (this.last?.table === slot.table) this.last = null;
        }
      }
      if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
    }
  }
}

const tableKey = (snapshotId: number, maskKey: string) => `${snapshotId}:${maskKey}`;
