/**
 * The grouping and sorting behind the filter indexes, on typed arrays: an
 * import indexes hundreds of thousands of values, and a Map of strings (or a
 * sort with a comparator) per value cost it more than everything else the
 * writer does. Values are bytes in one arena; they are grouped by an FNV-1a
 * hash with a stable radix sort (equal values keep their position order),
 * checked byte by byte, and, where the order of values matters (search
 * terms, for prefixes), sorted by radix on their first 8 bytes, with a
 * comparator only within runs that share those.
 */

/** A growable Uint32Array. */
export class U32List {
  a = new Uint32Array(1024);
  n = 0;

  push(x: number): void {
    if (this.n === this.a.length) {
      const next = new Uint32Array(this.a.length * 2);
      next.set(this.a);
      this.a = next;
    }
    this.a[this.n++] = x;
  }

  view(): Uint32Array {
    return this.a.subarray(0, this.n);
  }
}

/** Values (byte strings) with a position each, in position order. */
export class ValueList {
  bytes = Buffer.allocUnsafe(64 * 1024);
  len = 0;
  readonly starts = new U32List();
  readonly hashes = new U32List();
  readonly positions = new U32List();

  /** Appends `src[from, to)` at `pos`. */
  add(src: Uint8Array, from: number, to: number, pos: number): void {
    const n = to - from;
    this.ensure(n);
    let h = 0x811c9dc5;
    const out = this.bytes;
    const start = this.len;
    let at = start;
    for (let i = from; i < to; i++) {
      const b = src[i]!;
      out[at++] = b;
      h = Math.imul(h ^ b, 0x01000193);
    }
    this.len = at;
    this.push(start, h >>> 0, pos);
  }

  /** Appends `text` as UTF-8 at `pos`, written straight into the arena (no Buffer per value). */
  addText(text: string, pos: number): void {
    this.ensure(text.length * 3);
    const start = this.len;
    this.len += this.bytes.write(text, start, 'utf8');
    this.commit(start, pos);
  }

  /** Makes room for `n` bytes written by the caller at `len`; see `commit`. */
  ensure(n: number): void {
    if (this.len + n <= this.bytes.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.len + n));
    this.bytes.copy(next, 0, 0, this.len);
    this.bytes = next;
  }

  /** Ends a value the caller wrote at `start .. len` (after `ensure`). */
  commit(start: number, pos: number): void {
    let h = 0x811c9dc5;
    for (let i = start; i < this.len; i++) h = Math.imul(h ^ this.bytes[i]!, 0x01000193);
    this.push(start, h >>> 0, pos);
  }

  private push(start: number, hash: number, pos: number) {
    this.starts.push(start);
    this.hashes.push(hash);
    this.positions.push(pos);
  }

  get count(): number {
    return this.positions.n;
  }

  /** Bytes the values take (their bytes, start, hash and position). */
  get usedBytes(): number {
    return this.len + 12 * this.positions.n;
  }

  /** Empties the list, keeping its buffers for the values to come. */
  clear(): void {
    this.len = 0;
    this.starts.n = 0;
    this.hashes.n = 0;
    this.positions.n = 0;
  }

  end(i: number): number {
    return i + 1 < this.starts.n ? this.starts.a[i + 1]! : this.len;
  }
}

/**
 * A stable order of `keys` (ascending), by counting passes over their digits;
 * starting from `order` when given. Digits of 16 bits take two passes, but
 * each pass walks 65,536 counters: below ~130,000 keys (a run of a spilled
 * build holds ~14,000 of each index) three passes of 11 bits cost less.
 */
export function radixOrder(keys: Uint32Array, order?: Uint32Array): Uint32Array {
  const n = keys.length;
  const bits = n < SMALL_RADIX_KEYS ? 11 : 16;
  const mask = (1 << bits) - 1;
  let src: Uint32Array = order ?? new Uint32Array(n);
  if (!order) for (let i = 0; i < n; i++) src[i] = i;
  let dst: Uint32Array = new Uint32Array(n);
  const counts = new Uint32Array(mask + 2);
  for (let shift = 0; shift < 32; shift += bits) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[((keys[src[i]!]! >>> shift) & mask) + 1]!++;
    for (let d = 1; d <= mask + 1; d++) counts[d]! += counts[d - 1]!;
    for (let i = 0; i < n; i++) {
      const k = src[i]!;
      dst[counts[(keys[k]! >>> shift) & mask]!++] = k;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/** Keys below which `radixOrder` counts 11-bit digits rather than 16-bit ones. */
const SMALL_RADIX_KEYS = 1 << 17;

function sameBytes(buf: Buffer, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let i = 0; i < aEnd - a; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}

/** Distinct values with their positions (ascending, without repeats): `first` indexes a representative in the list. */
export interface Groups {
  first: Uint32Array;
  hashes: Uint32Array;
  /** Group g's positions are `postings[starts[g] .. starts[g + 1])`. */
  starts: Uint32Array;
  postings: Uint32Array;
}

/**
 * Groups equal values, in order of their hashes, and values sharing a hash
 * in byte order: a total order, so that runs of a spilled build merge into
 * the same index (index-runs.ts).
 */
export function groupValues(list: ValueList): Groups {
  const n = list.count;
  const hashes = list.hashes.view();
  const positions = list.positions.view();
  const order = radixOrder(hashes);
  const first = new U32List();
  const groupHashes = new U32List();
  const groupStarts = new U32List();
  const postings = new Uint32Array(n);
  let p = 0;
  const emit = (members: ArrayLike<number>, from: number, to: number) => {
    first.push(members[from]!);
    groupHashes.push(hashes[members[from]!]!);
    groupStarts.push(p);
    let last = -1;
    for (let k = from; k < to; k++) {
      const pos = positions[members[k]!]!;
      if (pos !== last) postings[p++] = pos; // a word twice in one name: one posting
      last = pos;
    }
  };
  const starts = list.starts.a;
  const bytes = list.bytes;
  const endOf = (k: number) => (k + 1 < n ? starts[k + 1]! : list.len);
  for (let i = 0; i < n; ) {
    const h = hashes[order[i]!]!;
    let j = i + 1;
    let mixed = false;
    const r = order[i]!;
    const rs = starts[r]!;
    const re = endOf(r);
    while (j < n && hashes[order[j]!] === h) {
      const k = order[j]!;
      if (!mixed && !sameBytes(bytes, rs, re, starts[k]!, endOf(k))) mixed = true;
      j++;
    }
    if (!mixed) emit(order, i, j);
    else {
      // A hash shared by different values (rare): split the run by value, keeping position order.
      // Latin-1 maps bytes to code units in order, so the strings sort as the bytes do.
      const byValue = new Map<string, number[]>();
      for (let m = i; m < j; m++) {
        const k = order[m]!;
        const key = bytes.toString('latin1', starts[k]!, endOf(k));
        const g = byValue.get(key);
        if (g) g.push(k);
        else byValue.set(key, [k]);
      }
      const keys = [...byValue.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (const key of keys) emit(byValue.get(key)!, 0, byValue.get(key)!.length);
    }
    i = j;
  }
  groupStarts.push(p);
  return { first: first.view(), hashes: groupHashes.view(), starts: groupStarts.view(), postings: postings.subarray(0, p) };
}

/**
 * Big-endian 32-bit word of a value's bytes `buf[from, end)` from `at` (zero
 * past its end): values in byte order have their words at 0 in the same order,
 * or equal ones.
 */
export function word(buf: Buffer, from: number, end: number, at: number): number {
  let w = 0;
  for (let i = 0; i < 4; i++) w = (w << 8) | (from + at + i < end ? buf[from + at + i]! : 0);
  return w >>> 0;
}

/** The groups in byte order of their values. */
export function byteOrder(list: ValueList, groups: Groups): Uint32Array {
  const d = groups.first.length;
  const hi = new Uint32Array(d);
  const lo = new Uint32Array(d);
  for (let g = 0; g < d; g++) {
    const k = groups.first[g]!;
    const s = list.starts.a[k]!;
    const e = list.end(k);
    hi[g] = word(list.bytes, s, e, 0);
    lo[g] = word(list.bytes, s, e, 4);
  }
  const order = radixOrder(hi, radixOrder(lo));
  // Runs sharing their first 8 bytes are sorted on all of them.
  for (let i = 0; i < d; ) {
    let j = i + 1;
    while (j < d && hi[order[j]!] === hi[order[i]!] && lo[order[j]!] === lo[order[i]!]) j++;
    if (j - i > 1) {
      const run = Array.from(order.subarray(i, j)).sort((a, b) => {
        const ka = groups.first[a]!;
        const kb = groups.first[b]!;
        // source a against target b: the sign of a - b
        return list.bytes.compare(list.bytes, list.starts.a[kb]!, list.end(kb), list.starts.a[ka]!, list.end(ka));
      });
      order.set(run, i);
    }
    i = j;
  }
  return order;
}

export function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}
