/**
 * What a snapshot keeps for filters (contract §6), made once by the import
 * (index-builder.ts) and stored beside its chunks, one blob per index:
 *
 * - `eq:<field>`: per distinct value of a highlighted string field (its JSON
 *   text as served: `"abierto"`, `null`), the positions holding it, ascending.
 * - `q`: per search term (a folded word of `nombre`, or the whole folded
 *   `id_erp`, `codigo` or `cif`), the positions holding it; terms sorted by
 *   their UTF-8 bytes, so the terms a word is a prefix of are one run, and
 *   their positions one run of the postings.
 * - `range:<field>`: `fecha` (as YYYYMMDD) or `precio` values in ascending
 *   order with their positions; nulls left out.
 *
 * Both posting formats keep the groups back to back in one Uint32Array, so a
 * blob is decoded into typed-array views, with no per-value objects.
 */

import { fnv1a, type Groups, type ValueList } from './index-sort.js';

/** One blob of a snapshot's indexes. */
export interface IndexBlob {
  name: string;
  bytes: Buffer;
}

/**
 * A piece of an index blob, as the writers store it: the blob is its parts'
 * bytes in part order. An import never holds a large blob whole (a 1 GiB
 * customers file's `q` is ~56 MiB), nor does the database bind one.
 */
export interface IndexPart {
  name: string;
  part: number;
  bytes: Buffer;
}

/** Every part but an index's last holds this many bytes. */
export const INDEX_PART_BYTES = 1024 * 1024;

/** A stored index from its parts, in part order; null when there are none. */
export function joinParts(parts: readonly Buffer[]): Buffer | null {
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** The parts of a whole blob: views of it, no copy. */
export function* partsOf(blob: IndexBlob, partBytes = INDEX_PART_BYTES): Generator<IndexPart> {
  for (let part = 0, at = 0; part === 0 || at < blob.bytes.length; part++, at += partBytes) {
    yield { name: blob.name, part, bytes: blob.bytes.subarray(at, at + partBytes) };
  }
}

export interface PostingIndex {
  type: 'postings';
  /**
   * With these (eq indexes), keys are in order of their FNV-1a hashes, and
   * a key is found by its hash; without (`q`), keys are in byte order.
   */
  hashes?: Uint32Array;
  /** Key i is `dict[keyStarts[i] .. keyStarts[i + 1])`. */
  keyStarts: Uint32Array;
  /** Key i's positions are `postings[groupStarts[i] .. groupStarts[i + 1])`, ascending. */
  groupStarts: Uint32Array;
  postings: Uint32Array;
  dict: Buffer;
  byteLength: number;
}

export interface RangeIndex {
  type: 'range';
  /** Ascending (ties by position). */
  values: Float64Array;
  positions: Uint32Array;
  byteLength: number;
}

export type SnapshotIndex = PostingIndex | RangeIndex;

const POSTINGS_FORMAT = 1;
const RANGE_FORMAT = 2;
const HASHED_FORMAT = 3;
const HEADER_BYTES = 16;

if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) {
  // Blobs are typed arrays written as they lie in memory (little-endian on every supported CPU).
  throw new Error('Mirador needs a little-endian CPU.');
}

/**
 * The header of a postings blob: `d` keys (hashed for exact lookups, or in
 * byte order), `n` positions, `dictLength` bytes of keys. The sections
 * follow it: hashes (when hashed), key starts and group starts (d + 1 each),
 * postings, keys.
 */
export function postingsHeader(hashed: boolean, d: number, n: number, dictLength: number): Buffer {
  const out = Buffer.alloc(HEADER_BYTES);
  out.writeUInt32LE(hashed ? HASHED_FORMAT : POSTINGS_FORMAT, 0);
  out.writeUInt32LE(d, 4);
  out.writeUInt32LE(n, 8);
  out.writeUInt32LE(dictLength, 12);
  return out;
}

/** The header of a range blob of `n` values; their values (f64), then their positions (u32), follow it. */
export function rangeHeader(n: number): Buffer {
  const out = Buffer.alloc(HEADER_BYTES);
  out.writeUInt32LE(RANGE_FORMAT, 0);
  out.writeUInt32LE(n, 4);
  return out;
}

/**
 * Encodes grouped values (index-sort.ts): in `order` (byte order, for
 * prefixes), or with their hashes, in hash order (exact lookups only).
 */
export function encodeGroups(list: ValueList, groups: Groups, order: Uint32Array | null): Buffer {
  const d = groups.first.length;
  const n = groups.postings.length;
  let dictLength = 0;
  for (let g = 0; g < d; g++) dictLength += list.end(groups.first[g]!) - list.starts.a[groups.first[g]!]!;
  const hashed = order === null;
  const words = 4 + (hashed ? d : 0) + 2 * (d + 1) + n;
  const out = Buffer.alloc(4 * words + dictLength);
  postingsHeader(hashed, d, n, dictLength).copy(out, 0);
  const u32 = new Uint32Array(out.buffer, out.byteOffset, words);
  let at = HEADER_BYTES / 4;
  if (hashed) {
    u32.set(groups.hashes, at);
    at += d;
  }
  const keyStarts = at;
  const groupStarts = keyStarts + d + 1;
  const postings = groupStarts + d + 1;
  const dictAt = 4 * words;
  let k = 0;
  let p = 0;
  for (let i = 0; i < d; i++) {
    const g = hashed ? i : order[i]!;
    const first = groups.first[g]!;
    const s = list.starts.a[first]!;
    const e = list.end(first);
    u32[keyStarts + i] = k;
    list.bytes.copy(out, dictAt + k, s, e);
    k += e - s;
    u32[groupStarts + i] = p;
    const run = groups.postings.subarray(groups.starts[g]!, groups.starts[g + 1]!);
    u32.set(run, postings + p);
    p += run.length;
  }
  u32[keyStarts + d] = k;
  u32[groupStarts + d] = p;
  return out;
}

/** The order of `values[i]` at `positions[i]` by value, then position. */
export function rangeOrder(values: readonly number[], positions: readonly number[]): number[] {
  return Array.from({ length: values.length }, (_, i) => i).sort((a, b) => values[a]! - values[b]! || positions[a]! - positions[b]!);
}

/** Encodes `values[i]` at `positions[i]`, sorting them by value then position. */
export function encodeRange(values: readonly number[], positions: readonly number[]): Buffer {
  const n = values.length;
  const order = rangeOrder(values, positions);
  const out = Buffer.alloc(HEADER_BYTES + 12 * n);
  rangeHeader(n).copy(out, 0);
  const v = new Float64Array(out.buffer, out.byteOffset + HEADER_BYTES, n);
  const p = new Uint32Array(out.buffer, out.byteOffset + HEADER_BYTES + 8 * n, n);
  order.forEach((i, k) => {
    v[k] = values[i]!;
    p[k] = positions[i]!;
  });
  return out;
}

/**
 * Decodes a stored blob into views of its bytes: of the blob's own memory
 * when it is all of it (a blob read from SQLite, or joined from parts: a
 * large index is not copied twice), else of a copy, so that the typed arrays
 * are aligned and a larger buffer the blob is a slice of is not kept.
 */
export function decodeIndex(blob: Uint8Array): SnapshotIndex {
  let own: ArrayBuffer;
  if (blob.byteOffset === 0 && blob.buffer instanceof ArrayBuffer && blob.byteLength === blob.buffer.byteLength) own = blob.buffer;
  else {
    own = new ArrayBuffer(blob.byteLength);
    new Uint8Array(own).set(blob);
  }
  const head = new Uint32Array(own, 0, 4);
  if (head[0] === POSTINGS_FORMAT || head[0] === HASHED_FORMAT) {
    const d = head[1]!;
    const n = head[2]!;
    let at = HEADER_BYTES;
    const hashes = head[0] === HASHED_FORMAT ? new Uint32Array(own, at, d) : undefined;
    if (hashes) at += 4 * d;
    const keyStarts = new Uint32Array(own, at, d + 1);
    at += 4 * (d + 1);
    const groupStarts = new Uint32Array(own, at, d + 1);
    at += 4 * (d + 1);
    const postings = new Uint32Array(own, at, n);
    at += 4 * n;
    return { type: 'postings', hashes, keyStarts, groupStarts, postings, dict: Buffer.from(own, at, head[3]!), byteLength: own.byteLength };
  }
  if (head[0] === RANGE_FORMAT) {
    const n = head[1]!;
    const values = new Float64Array(own, HEADER_BYTES, n);
    const positions = new Uint32Array(own, HEADER_BYTES + 8 * n, n);
    return { type: 'range', values, positions, byteLength: own.byteLength };
  }
  throw new Error(`unknown snapshot index format ${head[0]}`);
}

const EMPTY = new Uint32Array(0);

/** First key i with key ≥ `key` (compared on at most `prefix` bytes of each key, when given). */
function lowerBound(ix: PostingIndex, key: Buffer, prefix?: boolean, strict?: boolean): number {
  let lo = 0;
  let hi = ix.keyStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const s = ix.keyStarts[mid]!;
    const e = prefix ? Math.min(ix.keyStarts[mid + 1]!, s + key.length) : ix.keyStarts[mid + 1]!;
    // key.compare(...) > 0: the key comes after this entry.
    const c = key.compare(ix.dict, s, e);
    if (strict ? c >= 0 : c > 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The positions whose value is exactly `key`, ascending (a view: do not write to it). */
export function postingsOf(ix: PostingIndex, key: Buffer): Uint32Array {
  if (ix.hashes) {
    const h = fnv1a(key);
    let lo = 0;
    let hi = ix.hashes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ix.hashes[mid]! < h) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < ix.hashes.length && ix.hashes[i] === h; i++) {
      if (key.compare(ix.dict, ix.keyStarts[i]!, ix.keyStarts[i + 1]!) === 0) return ix.postings.subarray(ix.groupStarts[i]!, ix.groupStarts[i + 1]!);
    }
    return EMPTY;
  }
  const i = lowerBound(ix, key);
  if (i >= ix.keyStarts.length - 1) return EMPTY;
  if (key.compare(ix.dict, ix.keyStarts[i]!, ix.keyStarts[i + 1]!) !== 0) return EMPTY;
  return ix.postings.subarray(ix.groupStarts[i]!, ix.groupStarts[i + 1]!);
}

/** The positions holding any key that starts with `prefix`, ascending and unique (a new array). */
export function postingsWithPrefix(ix: PostingIndex, prefix: Buffer): Uint32Array {
  const from = lowerBound(ix, prefix, true);
  const to = lowerBound(ix, prefix, true, true);
  if (from >= to) return EMPTY;
  const run = ix.postings.slice(ix.groupStarts[from]!, ix.groupStarts[to]!);
  return to - from === 1 ? run : sortedUnique(run);
}

/** Positions whose value is within [min, max], ascending (a new array). */
export function positionsInRange(ix: RangeIndex, min: number, max: number): Uint32Array {
  const first = (x: number, after: boolean) => {
    let lo = 0;
    let hi = ix.values.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (after ? ix.values[mid]! <= x : ix.values[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const from = first(min, false);
  const to = first(max, true);
  return from >= to ? EMPTY : ix.positions.slice(from, to).sort();
}

/** Sorts `a` in place and drops repeats; returns the unique prefix. */
export function sortedUnique(a: Uint32Array): Uint32Array {
  a.sort();
  let n = 0;
  for (let i = 0; i < a.length; i++) if (i === 0 || a[i] !== a[n - 1]) a[n++] = a[i]!;
  return a.subarray(0, n);
}

/** Positions in every list (each ascending); galloping when one is much shorter. */
export function intersectAll(lists: readonly Uint32Array[]): Uint32Array {
  if (lists.length === 0) throw new Error('intersectAll needs a list');
  const sorted = [...lists].sort((a, b) => a.length - b.length);
  let out = sorted[0]!;
  for (let k = 1; k < sorted.length && out.length > 0; k++) out = intersect(out, sorted[k]!);
  return out;
}

function intersect(small: Uint32Array, large: Uint32Array): Uint32Array {
  const out = new Uint32Array(small.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < small.length; i++) {
    const x = small[i]!;
    // Gallop from j, then binary search, to the first large[j] ≥ x.
    let lo = j;
    let hi = j;
    let step = 1;
    while (hi < large.length && large[hi]! < x) {
      lo = hi + 1;
      hi = lo + step;
      step *= 2;
    }
    hi = Math.min(hi, large.length);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (large[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    j = lo;
    if (j >= large.length) break;
    if (large[j] === x) out[n++] = x;
  }
  return out.subarray(0, n);
}

/**
 * Union of ascending lists with no value in two of them. Merged pairwise,
 * in rounds (n log k), rather than concatenated and sorted: a repeated filter
 * value that matches nothing (`estado=ANULADO&estado=X`) costs nothing, and
 * a TypedArray sort of 18,000 positions was a quarter of a filter's first ask.
 */
export function unionDisjoint(lists: readonly Uint32Array[]): Uint32Array {
  let round = lists.filter((l) => l.length > 0);
  if (round.length === 0) return new Uint32Array(0);
  while (round.length > 1) {
    const next: Uint32Array[] = [];
    for (let i = 0; i + 1 < round.length; i += 2) next.push(mergeDisjoint(round[i]!, round[i + 1]!));
    if (round.length % 2 === 1) next.push(round[round.length - 1]!);
    round = next;
  }
  return round[0]!;
}

function mergeDisjoint(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) out[n++] = a[i]! < b[j]! ? a[i++]! : b[j++]!;
  if (i < a.length) out.set(a.subarray(i), n);
  else out.set(b.subarray(j), n);
  return out;
}

/** First index of `a` (ascending) whose value is ≥ x. */
export function firstAtLeast(a: Uint32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
