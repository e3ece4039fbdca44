/**
 * The filter indexes of a large import, built in bounded memory: once the
 * values gathered (index-builder.ts) pass a budget, each index's values so
 * far are grouped and sorted, as a whole build would, and written to a
 * temporary file as a sorted run; at the end each index's runs are merged
 * into its blob (snapshot-index.ts formats), one index at a time. Without
 * it a 1 GiB customers file held ~700 MB of index values at once.
 *
 * Runs cover consecutive ranges of positions, in order, and an item's values
 * are all in one run; so where runs share a key, its positions are their
 * positions one run after the other, and the merge only concatenates them.
 * Runs are in the order a whole build sorts its groups (hash then bytes, or
 * bytes; values then positions), so the merged blob is the blob a whole
 * build makes, byte for byte.
 */
import { word, type Groups, type ValueList } from './index-sort.js';
import type { RunFile, RunRef, SectionWriter } from './run-file.js';
import { postingsHeader, rangeHeader } from './snapshot-index.js';

/**
 * Writes grouped values as a run: per group, in `order` (or in the groups'
 * own order), its hash, key length, posting count, key bytes and postings.
 */
export function writePostingRun(file: RunFile, list: ValueList, groups: Groups, order: Uint32Array | null): RunRef {
  const out = file.runs;
  const from = out.length;
  const d = groups.first.length;
  let dictBytes = 0;
  for (let i = 0; i < d; i++) {
    const g = order ? order[i]! : i;
    const first = groups.first[g]!;
    const s = list.starts.a[first]!;
    const e = list.end(first);
    const postingsFrom = groups.starts[g]!;
    const postingsTo = groups.starts[g + 1]!;
    out.u32(groups.hashes[g]!);
    out.u32(e - s);
    out.u32(postingsTo - postingsFrom);
    out.bytes(list.bytes, s, e);
    // Most groups hold one or a few positions: written one by one, without a view of them.
    for (let k = postingsFrom; k < postingsTo; k++) out.u32(groups.postings[k]!);
    dictBytes += e - s;
  }
  return { from, to: out.length, count: d, postings: groups.postings.length, dictBytes };
}

/** Writes `values[i]` at `positions[i]` as a run, in `order` (by value, then position). */
export function writeRangeRun(file: RunFile, values: readonly number[], positions: readonly number[], order: readonly number[]): RunRef {
  const out = file.runs;
  const from = out.length;
  for (const i of order) {
    out.f64(values[i]!);
    out.u32(positions[i]!);
  }
  return { from, to: out.length, count: order.length, postings: order.length, dictBytes: 0 };
}

/** A binary heap of run numbers, least first by `before`. */
class RunHeap {
  private readonly a: number[] = [];

  constructor(private readonly before: (x: number, y: number) => boolean) {}

  get size(): number {
    return this.a.length;
  }

  get top(): number {
    return this.a[0]!;
  }

  push(r: number): void {
    const a = this.a;
    let i = a.push(r) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const up = a[parent]!;
      if (!this.before(r, up)) break;
      a[i] = up;
      i = parent;
    }
    a[i] = r;
  }

  pop(): number {
    const a = this.a;
    const out = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      // The last run sinks from the top to where it belongs.
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && this.before(a[l + 1]!, a[l]!) ? l + 1 : l;
        if (!this.before(a[c]!, last)) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return out;
  }
}

/**
 * Merges posting runs into one blob, read back in parts: by hash then key
 * bytes when `hashed` (eq indexes), by key bytes otherwise (`q`). Each part
 * is a new Buffer of `partBytes`: the whole blob is never in memory.
 */
export function mergePostingRuns(file: RunFile, refs: readonly RunRef[], hashed: boolean, partBytes: number): Generator<Buffer> {
  const readers = refs.map((ref) => file.reader(ref));
  // Each run's next group: its hash, posting count, and key, as where it sits in its reader's
  // buffer (valid until that reader is read again, which is only once the group is taken) and
  // its first four bytes as a number, which orders most pairs of keys without a byte loop.
  const heads = readers.map((reader) => ({ hash: 0, count: 0, buf: reader.buf, at: 0, length: 0, prefix: 0 }));
  const advance = (r: number): boolean => {
    const reader = readers[r]!;
    if (reader.done) return false;
    const head = heads[r]!;
    head.hash = reader.u32();
    const length = reader.u32();
    head.count = reader.u32();
    head.at = reader.skip(length);
    head.buf = reader.buf;
    head.length = length;
    head.prefix = word(head.buf, head.at, head.at + length, 0);
    return true;
  };
  const before = (x: number, y: number): boolean => {
    const a = heads[x]!;
    const b = heads[y]!;
    if (hashed && a.hash !== b.hash) return a.hash < b.hash;
    if (a.prefix !== b.prefix) return a.prefix < b.prefix;
    const c = compareBytes(a.buf, a.at, a.length, b.buf, b.at, b.length);
    return c < 0 || (c === 0 && x < y);
  };
  const heap = new RunHeap(before);

  let maxGroups = 0;
  let n = 0;
  let maxDict = 0;
  for (const ref of refs) {
    maxGroups += ref.count;
    n += ref.postings;
    maxDict += ref.dictBytes;
  }
  const [hashes, keyStarts, groupStarts, postings, dict] = file.sections([
    hashed ? 4 * maxGroups : 0,
    4 * (maxGroups + 1),
    4 * (maxGroups + 1),
    4 * n,
    maxDict,
  ]) as [SectionWriter, SectionWriter, SectionWriter, SectionWriter, SectionWriter];
  // The key being merged, to tell the runs that hold it too.
  let key = Buffer.allocUnsafe(256);
  let keyLength = 0;
  let keyPrefix = 0;

  readers.forEach((_, r) => {
    if (advance(r)) heap.push(r);
  });
  let d = 0;
  let p = 0;
  while (heap.size > 0) {
    const first = heads[heap.top]!;
    const hash = first.hash;
    if (first.length > key.length) key = Buffer.allocUnsafe(2 * first.length);
    keyLength = first.length;
    for (let i = 0; i < keyLength; i++) key[i] = first.buf[first.at + i]!;
    keyPrefix = first.prefix;
    if (hashed) hashes.u32(hash);
    keyStarts.u32(dict.length);
    groupStarts.u32(p);
    dict.bytes(key, 0, keyLength);
    d++;
    // Every run holding this key, in run order (heap ties go to the earlier run): positions stay ascending.
    while (heap.size > 0) {
      const head = heads[heap.top]!;
      if ((hashed && head.hash !== hash) || head.prefix !== keyPrefix || compareBytes(head.buf, head.at, head.length, key, 0, keyLength) !== 0) break;
      const r = heap.pop();
      readers[r]!.pipeTo(postings, 4 * head.count);
      p += head.count;
      if (advance(r)) heap.push(r);
    }
  }
  keyStarts.u32(dict.length);
  groupStarts.u32(p);
  const header = postingsHeader(hashed, d, p, dict.length);
  return file.parts(header, hashed ? [hashes, keyStarts, groupStarts, postings, dict] : [keyStarts, groupStarts, postings, dict], partBytes);
}

/**
 * Byte order of two keys, as `Buffer.compare` (negative, zero, positive):
 * keys are short (words, names, codes), where a loop costs less than the
 * native call and its view of each key.
 */
function compareBytes(a: Buffer, aAt: number, aLength: number, b: Buffer, bAt: number, bLength: number): number {
  const n = aLength < bLength ? aLength : bLength;
  for (let i = 0; i < n; i++) {
    const diff = a[aAt + i]! - b[bAt + i]!;
    if (diff !== 0) return diff;
  }
  return aLength - bLength;
}

/** Merges range runs into one blob, by value, then position; read back in parts as `mergePostingRuns`. */
export function mergeRangeRuns(file: RunFile, refs: readonly RunRef[], partBytes: number): Generator<Buffer> {
  const readers = refs.map((ref) => file.reader(ref));
  const heads = refs.map(() => ({ value: 0, pos: 0 }));
  const advance = (r: number): boolean => {
    const reader = readers[r]!;
    if (reader.done) return false;
    heads[r]!.value = reader.f64();
    heads[r]!.pos = reader.u32();
    return true;
  };
  const heap = new RunHeap((x, y) => heads[x]!.value < heads[y]!.value || (heads[x]!.value === heads[y]!.value && x < y));
  const n = refs.reduce((sum, ref) => sum + ref.count, 0);
  const [values, positions] = file.sections([8 * n, 4 * n]) as [SectionWriter, SectionWriter];
  readers.forEach((_, r) => {
    if (advance(r)) heap.push(r);
  });
  while (heap.size > 0) {
    const r = heap.pop();
    values.f64(heads[r]!.value);
    positions.u32(heads[r]!.pos);
    if (advance(r)) heap.push(r);
  }
  return file.parts(rangeHeader(n), [values, positions], partBytes);
}
