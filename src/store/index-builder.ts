/**
 * Makes a snapshot's filter indexes (snapshot-index.ts) and its thin items
 * while the chunk builder lays items out in list order: each item is read
 * once, at import, from the bytes just laid out. Only the head of an item
 * is read (its highlighted fields, before `"data"`): the values are found by
 * scanning JSON tokens, never parsed, except the few text values a `q` search
 * indexes, whose words are folded (search-words.ts).
 *
 * A thin item is its item without `data`: `{"id_erp":…,<fields>,"actualizado_at":"…"}`,
 * laid out in thin chunks holding the same positions as the item chunks, with
 * where each field starts (ThinChunk.bounds): a `fields=` page is put together
 * from those pieces.
 */
import { foldedWords, foldText, latinFolds, type LatinFolds } from '../domain/search-words.js';
import { KIND_SPECS, type FieldSpec, type Kind } from '../domain/kinds.js';
import { encodeGroups, encodeRange, INDEX_PART_BYTES, joinParts, partsOf, rangeOrder, type IndexBlob, type IndexPart } from './snapshot-index.js';
import { byteOrder, groupValues, ValueList } from './index-sort.js';
import { mergePostingRuns, mergeRangeRuns, writePostingRun, writeRangeRun } from './index-runs.js';
import { RunFile, type RunRef } from './run-file.js';
import type { ThinChunk } from './store.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
/** Every rendered body ends with this key (item-renderer.ts), before the time. */
const TIME_KEY_BYTES = Buffer.byteLength(',"actualizado_at":"');

/** Fields whose folded words a `q` search matches by prefix… */
const WORD_FIELDS = new Set(['nombre']);
/** …and those it matches as a whole, by prefix. */
const WHOLE_FIELDS = new Set(['id_erp', 'codigo', 'cif']);

/** ASCII letters and digits: the words of ASCII text (search-words.ts agrees on them). */
const WORD_BYTE = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) WORD_BYTE[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) WORD_BYTE[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) WORD_BYTE[c] = 1;

/**
 * Whether the bytes of a JSON string token fold byte by byte: no escapes, and
 * every character ASCII or a two-byte one that `folds` folds (most ERP
 * text, accents included); anything else is folded as a string.
 */
function foldsByByte(folds: LatinFolds, buf: Buffer, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const c = buf[k]!;
    if (c < 0x80) {
      if (c === BACKSLASH) return false;
      continue;
    }
    // A lead byte of U+0080–U+07FF (0xc2–0xdf), then a continuation byte.
    if (c < 0xc2 || c > 0xdf || k + 1 >= to) return false;
    const d = buf[k + 1]!;
    if ((d & 0xc0) !== 0x80) return false;
    const cp = ((c & 0x1f) << 6) | (d & 0x3f);
    if (cp > folds.last || folds.length[cp - folds.first] === 0) return false;
    k++;
  }
  return true;
}

/** Where a builder may write sorted runs (index-runs.ts), and how much it gathers before it does. */
export interface IndexSpill {
  dir: string;
  /** Bytes of values gathered (their bytes, hash, start and position) before a run is written. */
  budgetBytes?: number;
}

/**
 * 4 MiB: what a customers file gathers in ~14,000 rows (a 1 GiB file makes
 * ~100 runs of each index). Lists grow by doubling, so they hold up to twice
 * it; the whole import process is to stay under 300 MB (issue 4).
 */
export const DEFAULT_INDEX_BUDGET_BYTES = 4 * 1024 * 1024;

/** Items between two looks at what the builder holds. */
const BUDGET_CHECK_ITEMS = 256;

export class IndexBuilder {
  private readonly fields: readonly FieldSpec[];
  /** Each field's key as rendered (`{"id_erp":`, `,"nombre":`). */
  private readonly keys: Buffer[];
  private readonly equal: (ValueList | null)[];
  private readonly rangeValues: (number[] | null)[];
  private readonly rangePositions: (number[] | null)[];
  private terms = new ValueList();
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;

  // The open thin chunk.
  private thin = Buffer.allocUnsafeSlow(32 * 1024);
  private thinLength = 0;
  private bounds: number[] = [];

  // Sorted runs, once the values gathered pass the budget: per index, in position order.
  private runs: RunFile | null = null;
  private readonly runRefs = new Map<string, RunRef[]>();
  private uncounted = 0;

  constructor(
    readonly kind: Kind,
    private readonly spill: IndexSpill | null = null,
  ) {
    this.fields = KIND_SPECS[kind].fields;
    this.keys = this.fields.map((f, i) => Buffer.from((i === 0 ? '{' : ',') + JSON.stringify(f.name) + ':'));
    this.equal = this.fields.map((f) => (f.type === 'string' ? new ValueList() : null));
    this.rangeValues = this.fields.map((f) => (f.type === 'string' ? null : []));
    this.rangePositions = this.fields.map((f) => (f.type === 'string' ? null : []));
    this.starts = new Int32Array(this.fields.length + 1);
    this.ends = new Int32Array(this.fields.length);
  }

  /**
   * Indexes the items of a thin chunk laid out before (a chunk the snapshot
   * shares with the one before it), the first at `firstPos`. Their thin items
   * are that chunk's already: none is added to the open thin chunk.
   */
  addThinChunk(thin: ThinChunk, firstPos: number): void {
    const stride = this.fields.length + 1;
    const count = thin.bounds.length / stride;
    for (let k = 0; k < count; k++) {
      const start = thin.bounds[k * stride]!;
      const timeStart = thin.bounds[k * stride + stride - 1]!;
      // Thin items are joined by commas, like items.
      const end = k + 1 < count ? thin.bounds[(k + 1) * stride]! - 1 : thin.bytes.length;
      this.add(thin.bytes, start, timeStart + TIME_KEY_BYTES, end, firstPos + k, false);
    }
  }

  /**
   * Indexes the item at `pos`: `buf[start, end)`, whose body (before the
   * time) ends at `bodyEnd`, and adds its thin item to the open thin chunk
   * unless `thin` is false.
   */
  add(buf: Buffer, start: number, bodyEnd: number, end: number, pos: number, thin = true): void {
    // Between two items: a run holds every value of the items it covers.
    if (this.spill && ++this.uncounted >= BUDGET_CHECK_ITEMS) {
      this.uncounted = 0;
      if (this.gatheredBytes() > (this.spill.budgetBytes ?? DEFAULT_INDEX_BUDGET_BYTES)) this.writeRuns();
    }
    const n = this.fields.length;
    const tail = bodyEnd - TIME_KEY_BYTES;
    let at = start;
    // Bodies come from ItemRenderer; anything else (a test's hand-made body) is read only as far as it
    // has the item's shape, never past its end: the rest of its fields are left out of the indexes.
    let shaped = true;
    for (let j = 0; j < n; j++) {
      this.starts[j] = at;
      if (!shaped) continue;
      const key = this.keys[j]!;
      let k = 0;
      while (k < key.length && at + k < tail && buf[at + k] === key[k]) k++;
      if (k < key.length) {
        shaped = false;
        continue;
      }
      at += key.length;
      const from = at;
      if (buf[at] === QUOTE) {
        at++;
        while (at < tail && buf[at] !== QUOTE) at += buf[at] === BACKSLASH ? 2 : 1;
        at++;
      } else {
        while (at < tail && buf[at] !== COMMA) at++;
      }
      if (at > tail) {
        shaped = false;
        at = this.starts[j]!;
        this.starts[j] = at;
        continue;
      }
      this.ends[j] = at;
      this.index(j, buf, from, at, pos);
    }
    if (!shaped) for (let j = 0; j < n; j++) if (this.starts[j]! > at) this.starts[j] = at;
    this.starts[n] = at; // where `,"data":` starts
    if (!thin) return;
    // The thin item: the head, then the time.
    const headBytes = at - start;
    const need = headBytes + (end - tail) + 1;
    if (this.thinLength + need > this.thin.length) {
      const next = Buffer.allocUnsafeSlow(Math.max(this.thin.length * 2, this.thinLength + need));
      this.thin.copy(next, 0, 0, this.thinLength);
      this.thin = next;
    }
    const base = this.thinLength - start;
    for (let j = 0; j < n; j++) this.bounds.push(this.starts[j]! + base);
    this.bounds.push(at + base);
    buf.copy(this.thin, this.thinLength, start, at);
    this.thinLength += headBytes;
    buf.copy(this.thin, this.thinLength, tail, end);
    this.thinLength += end - tail;
    this.thin[this.thinLength++] = COMMA;
  }

  private index(j: number, buf: Buffer, from: number, to: number, pos: number) {
    const field = this.fields[j]!;
    const equal = this.equal[j];
    if (equal) {
      equal.add(buf, from, to, pos);
      if (buf[from] !== QUOTE) return; // null: nothing to search
      const word = WORD_FIELDS.has(field.name);
      if (!word && !WHOLE_FIELDS.has(field.name)) return;
      const terms = this.terms;
      const folds = latinFolds();
      if (foldsByByte(folds, buf, from + 1, to - 1)) {
        // The common case, on bytes: lower-cased words (or the whole value), accents dropped, no string made.
        terms.ensure(to - from);
        const out = terms.bytes;
        let start = terms.len;
        let at = start;
        for (let k = from + 1; k < to - 1; k++) {
          const c = buf[k]!;
          let isWord: boolean;
          let b0: number;
          let b1 = -1;
          if (c < 0x80) {
            isWord = WORD_BYTE[c] === 1;
            b0 = c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
          } else {
            const i = (((c & 0x1f) << 6) | (buf[++k]! & 0x3f)) - folds.first;
            isWord = folds.word[i] === 1;
            b0 = folds.byte0[i]!;
            if (folds.length[i] === 2) b1 = folds.byte1[i]!;
          }
          if (word && !isWord) {
            if (at > start) {
              terms.len = at;
              terms.commit(start, pos);
              start = at;
            }
            continue;
          }
          out[at++] = b0;
          if (b1 >= 0) out[at++] = b1;
        }
        if (at > start || !word) {
          terms.len = at;
          terms.commit(start, pos);
        }
        return;
      }
      const text = this.text(buf, from, to);
      for (const w of word ? foldedWords(text) : [foldText(text)]) terms.addText(w, pos);
      return;
    }
    if (buf[from] === 0x6e) return; // null
    if (field.type === 'date' && to - from !== 12) return; // not "YYYY-MM-DD": the normaliser makes it null, never this
    const values = this.rangeValues[j]!;
    if (field.type === 'date') {
      // "YYYY-MM-DD" → YYYYMMDD
      const d = (k: number) => buf[from + k]! - 0x30;
      const year = ((d(1) * 10 + d(2)) * 10 + d(3)) * 10 + d(4);
      values.push(year * 10000 + (d(6) * 10 + d(7)) * 100 + d(9) * 10 + d(10));
    } else {
      values.push(Number(buf.toString('latin1', from, to)));
    }
    this.rangePositions[j]!.push(pos);
  }

  /** The string a JSON string token stands for. */
  private text(buf: Buffer, from: number, to: number): string {
    for (let k = from + 1; k < to - 1; k++) if (buf[k] === BACKSLASH) return JSON.parse(buf.toString('utf8', from, to)) as string;
    return buf.toString('utf8', from + 1, to - 1);
  }

  /** The thin items added since the last call, as the thin chunk `chunkNo` starting at `firstPos`. */
  takeThin(chunkNo: number, firstPos: number): ThinChunk {
    const bytes = Buffer.allocUnsafeSlow(Math.max(0, this.thinLength - 1));
    this.thin.copy(bytes, 0, 0, bytes.length);
    const chunk: ThinChunk = { chunkNo, firstPos, bounds: Uint32Array.from(this.bounds), bytes };
    this.thinLength = 0;
    this.bounds = [];
    return chunk;
  }

  /** Bytes of the values gathered since the last run. */
  private gatheredBytes(): number {
    let bytes = this.terms.usedBytes;
    for (const list of this.equal) if (list) bytes += list.usedBytes;
    // A number and a small integer in JS arrays.
    for (const values of this.rangeValues) if (values) bytes += 12 * values.length;
    return bytes;
  }

  /** Runs written so far, each a run of every index (so as many as `q` has); 0 while all is gathered in memory. */
  get runsWritten(): number {
    return this.runRefs.get('q')?.length ?? 0;
  }

  /** Writes what every index gathered as its next run, and starts gathering afresh. */
  private writeRuns() {
    this.runs ??= new RunFile(this.spill!.dir);
    const file = this.runs;
    const add = (name: string, ref: RunRef) => {
      const refs = this.runRefs.get(name);
      if (refs) refs.push(ref);
      else this.runRefs.set(name, [ref]);
    };
    this.fields.forEach((f, j) => {
      const equal = this.equal[j];
      if (equal) {
        add(`eq:${f.name}`, writePostingRun(file, equal, groupValues(equal), null));
        equal.clear();
        return;
      }
      const values = this.rangeValues[j]!;
      const positions = this.rangePositions[j]!;
      add(`range:${f.name}`, writeRangeRun(file, values, positions, rangeOrder(values, positions)));
      values.length = 0;
      positions.length = 0;
    });
    const groups = groupValues(this.terms);
    add('q', writePostingRun(file, this.terms, groups, byteOrder(this.terms, groups)));
    this.terms.clear();
  }

  /**
   * The snapshot's indexes, once every item was added, each whole: for what
   * keeps them in memory (the sandbox, a legacy snapshot, a test). A build
   * that wrote runs joins each index's parts.
   */
  *finish(): Generator<IndexBlob> {
    if (!this.runs) {
      yield* this.wholeIndexes();
      return;
    }
    let pieces: IndexPart[] = [];
    const joined = (): IndexBlob => ({ name: pieces[0]!.name, bytes: joinParts(pieces.map((p) => p.bytes))! });
    for (const p of this.parts()) {
      if (p.part === 0 && pieces.length > 0) {
        yield joined();
        pieces = [];
      }
      pieces.push(p);
    }
    if (pieces.length > 0) yield joined();
  }

  /**
   * The snapshot's indexes in parts (snapshot-index.ts), once every item was
   * added: one index after the other, each merged from its runs only once
   * the one before has been read, so that a writer holds one part at a time.
   */
  *parts(partBytes = INDEX_PART_BYTES): Generator<IndexPart> {
    if (!this.runs) {
      for (const blob of this.wholeIndexes()) yield* partsOf(blob, partBytes);
      return;
    }
    const runs = this.runs;
    try {
      this.writeRuns();
      this.releaseLists();
      const named = function* (name: string, parts: Iterable<Buffer>): Generator<IndexPart> {
        let part = 0;
        for (const bytes of parts) yield { name, part: part++, bytes };
      };
      for (const f of this.fields) {
        if (f.type === 'string') {
          const name = `eq:${f.name}`;
          yield* named(name, mergePostingRuns(runs, this.runRefs.get(name)!, true, partBytes));
        } else {
          const name = `range:${f.name}`;
          yield* named(name, mergeRangeRuns(runs, this.runRefs.get(name)!, partBytes));
        }
      }
      yield* named('q', mergePostingRuns(runs, this.runRefs.get('q')!, false, partBytes));
    } finally {
      this.close();
    }
  }

  /** Each index made whole from the values gathered, for a build that wrote no runs. */
  private *wholeIndexes(): Generator<IndexBlob> {
    for (const [j, f] of this.fields.entries()) {
      const equal = this.equal[j];
      if (equal) yield { name: `eq:${f.name}`, bytes: encodeGroups(equal, groupValues(equal), null) };
      else yield { name: `range:${f.name}`, bytes: encodeRange(this.rangeValues[j]!, this.rangePositions[j]!) };
    }
    const groups = groupValues(this.terms);
    yield { name: 'q', bytes: encodeGroups(this.terms, groups, byteOrder(this.terms, groups)) };
  }

  /** Drops the gathering buffers (every value is in the runs by now), for the merge's memory. */
  private releaseLists() {
    this.equal.forEach((list, j) => {
      if (list) this.equal[j] = new ValueList();
    });
    this.terms = new ValueList();
  }

  /** Lets go of the runs' file, for a build that ends without reading its parts. */
  close(): void {
    this.runs?.close();
  }
}

/** Fields of a thin chunk's item k: `bounds` holds, per item, where each field starts, then where its time starts. */
export function thinStride(kind: Kind): number {
  return KIND_SPECS[kind].fields.length + 1;
}
