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

/** A chunk's items trimmed to a field set, laid out as a Chunk's: joined by commas, item k is `bytes[offsets[k], offsets[k + 1] - 1)`. */
export interface Projection {
  firstPos: number;
  offsets: Uint32Array;
  bytes: Buffer;
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
    return { firstPos: t.firstPos, offsets, bytes };
  }
  const itemEnd = (k: number) => (k + 1 < n ? bounds[(k + 1) * (f + 1)]! - 1 : bytes.length);
  let size = 0;
  for (let k = 0, b = 0; k < n; k++, b += f + 1) {
    for (let r = 0; r < runs.length; r += 2) size += bounds[b + runs[r + 1]!]! - bounds[b + runs[r]!]!;
    size += itemEnd(k) - bounds[b + f]! + 1; // the time, and a comma
  }
  const out = Buffer.allocUnsafeSlow(Math.max(0, size - 1));
  let at = 0;
  const put = (from: number, to: number) => {
    bytes.copy(out, at, from, to);
    at += to - from;
  };
  for (let k = 0, b = 0; k < n; k++, b += f + 1) {
    if (k > 0) out[at++] = 0x2c;
    offsets[k] = at;
    for (let r = 0; r < runs.length; r += 2) put(bounds[b + runs[r]!]!, bounds[b + runs[r + 1]!]!);
    put(bounds[b + f]!, itemEnd(k));
  }
  offsets[n] = at + 1;
  return { firstPos: t.firstPos, offsets, bytes: out };
}

/** Projections of recent chunks and field sets, least recently used out past the budget. */
export class ProjectionCache {
  private readonly lru = new Map<string, { projection: Projection; size: number }>();
  private bytes = 0;

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
    const key = `${snapshotId}:${chunkNo}:${maskKey}`;
    const hit = this.lru.get(key);
    if (!hit) return undefined;
    this.lru.delete(key);
    this.lru.set(key, hit);
    return hit.projection;
  }

  /** The projection of thin chunk `t` of snapshot `snapshotId` for the field set `maskKey`, made on a miss. */
  get(snapshotId: number, maskKey: string, t: ThinChunk, f: number, runs: number[] | null): Projection {
    const key = `${snapshotId}:${t.chunkNo}:${maskKey}`;
    const hit = this.lru.get(key);
    if (hit) {
      this.lru.delete(key);
      this.lru.set(key, hit);
      return hit.projection;
    }
    const projection = project(t, f, runs);
    // Counted whole even when it shares the thin chunk's bytes (every field kept): it keeps them alive.
    const size = projection.offsets.byteLength + projection.bytes.length;
    if (size <= this.budgetBytes) {
      this.lru.set(key, { projection, size });
      this.bytes += size;
      while (this.bytes > this.budgetBytes) {
        const [k, old] = this.lru.entries().next().value!;
        this.lru.delete(k);
        this.bytes -= old.size;
      }
    }
    return projection;
  }
}
