/**
 * Renders items exactly as the API returns them. An item is rendered once, at
 * import time, in two parts: the body (every key up to the value of
 * `actualizado_at`) and the timestamp, which is only known once the row has
 * been compared with the previous snapshot. The read path never parses or
 * stringifies an item again.
 *
 * Bodies are written as UTF-8 bytes straight into memory, a batch of rows
 * after another: a customer row has 150 short cells, and building a string
 * per row only to encode it again cost twice as much (and most of the
 * import's garbage). The bytes are exactly those of `JSON.stringify` of each
 * value. An import renders cells straight from the file's bytes (`writeRaw`),
 * without a string per cell at all.
 */
import { hash } from 'node:crypto';
import type { Kind } from './kinds.js';
import { KIND_SPECS } from './kinds.js';
import { ASCII_PLAIN, QUOTE, UTF8_PLAIN, writeAsciiEscape, writeJsonChars, writeUnicodeEscape } from './json-bytes.js';

export { writeJsonChars };

export type FieldValue = string | number | null;

/** The part of a rendered item that follows the timestamp. */
const ITEM_TAIL = '"}';

/**
 * `memory.copy` within the module's own memory, as a function: a native
 * memmove at the cost of a plain JS call. A customer item is 150 column keys
 * of ~20 bytes each; copied byte by byte in JS, or through Buffer#copy (which
 * makes a view per call), the keys cost more than everything else rendering
 * does. The module, in text form:
 *
 *   (module (memory (export "mem") 1)
 *     (func (export "copy") (param $to i32) (param $from i32) (param $n i32)
 *       (memory.copy (local.get $to) (local.get $from) (local.get $n))))
 */
// The global WebAssembly object, typed for what is used here (the project's TypeScript libs have no DOM types).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const Wasm = (globalThis as unknown as {
  WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object) => { exports: Record<string, unknown> } };
}).WebAssembly;

const COPY_MODULE = new Wasm.Module(
  Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // header
    0x01, 0x07, 0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x00, // type: (i32, i32, i32) -> ()
    0x03, 0x02, 0x01, 0x00, // function 0 has type 0
    0x05, 0x03, 0x01, 0x00, 0x01, // one memory, 1 page to start
    0x07, 0x0e, 0x02, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x04, 0x63, 0x6f, 0x70, 0x79, 0x00, 0x00, // exports "mem", "copy"
    0x0a, 0x0e, 0x01, 0x0c, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfc, 0x0a, 0x00, 0x00, 0x0b, // copy's body
  ]),
);
const WASM_PAGE = 65536;

/** The bytes an ItemRenderer works in: its constant pieces (keys) first, then the bodies it renders. */
class Arena {
  private readonly memory: WasmMemory;
  readonly copy: (to: number, from: number, n: number) => void;
  buf: Buffer;
  len = 0;

  constructor(bytes: number) {
    const { exports } = new Wasm.Instance(COPY_MODULE);
    this.memory = exports.mem as WasmMemory;
    this.copy = exports.copy as (to: number, from: number, n: number) => void;
    this.buf = Buffer.from(this.memory.buffer);
    this.ensure(bytes);
  }

  /** Makes room for `n` more bytes (growing the memory replaces the view). */
  ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const want = Math.max(this.buf.length * 2, this.len + n);
    this.memory.grow(Math.ceil((want - this.buf.length) / WASM_PAGE));
    this.buf = Buffer.from(this.memory.buffer);
  }

  /** Appends constant bytes; returns where they start. */
  put(bytes: Uint8Array): number {
    this.ensure(bytes.length);
    const at = this.len;
    this.buf.set(bytes, at);
    this.len += bytes.length;
    return at;
  }
}

interface Piece {
  at: number;
  n: number;
}

export class ItemRenderer {
  private readonly arena = new Arena(1024 * 1024);
  /** Each field's key (`{"id_erp":`, `,"nombre":`…) in the arena. */
  private readonly fieldKeys: Piece[];
  /**
   * The `data` object as it reads when every cell is empty, in the arena:
   * `,"data":{` then each column's `"NAME":""` (after a comma but the first)
   * then `},"actualizado_at":"`. Column i's key, up to its opening quote,
   * starts at `columnKeys[i]` and ends one byte before `columnKeys[i + 1]`
   * (that byte is the closing quote of an empty value); `columnKeys[n]` is
   * where `}` starts. A run of empty cells and the key of the next cell are
   * thus one copy: a row costs one copy per non-empty cell, plus one.
   */
  private readonly columnKeys: Uint32Array;
  /** Where `,"data":{` starts and where the template ends. */
  private readonly dataStart: number;
  private readonly dataEnd: number;
  private readonly nullText: Piece;
  /** Where rendered bodies start: everything before is constant. */
  private readonly start: number;

  /** `columns` are the CSV header names, in file order. */
  constructor(readonly kind: Kind, readonly columns: readonly string[]) {
    const put = (text: string): Piece => {
      const bytes = Buffer.from(text);
      return { at: this.arena.put(bytes), n: bytes.length };
    };
    this.fieldKeys = KIND_SPECS[kind].fields.map((f, i) => put((i === 0 ? '{' : ',') + JSON.stringify(f.name) + ':'));
    this.nullText = put('null');
    this.dataStart = put(',"data":{').at;
    this.columnKeys = new Uint32Array(columns.length + 1);
    columns.forEach((c, i) => (this.columnKeys[i] = put((i === 0 ? '' : ',') + JSON.stringify(c) + ':""').at));
    this.columnKeys[columns.length] = put('},"actualizado_at":"').at;
    this.dataEnd = this.arena.len;
    this.start = this.arena.len;
  }

  /** Bytes rendered since the last `take`. */
  get length(): number {
    return this.arena.len - this.start;
  }

  /**
   * Appends the item up to and including the opening quote of
   * `actualizado_at`'s value. `fields` holds one value per highlighted
   * field, in kind order; `cells` one cell per column.
   */
  write(fields: readonly FieldValue[], cells: readonly string[]): void {
    this.writeFields(fields);
    const arena = this.arena;
    const copy = arena.copy;
    const keys = this.columnKeys;
    const n = keys.length - 1;
    // From `from` on, the template is still to be copied up to the next non-empty cell's key.
    let from = this.dataStart;
    let at = arena.len;
    let buf = arena.buf;
    for (let i = 0; i < n; i++) {
      const cell = cells[i] ?? '';
      if (cell.length === 0) continue;
      const to = keys[i + 1]! - 1; // the end of this cell's key, before the empty value's closing quote
      // Room for the template so far and, at worst, a six-byte \u escape per character, and its quote.
      const need = to - from + 6 * cell.length + 1;
      if (at + need > buf.length) {
        arena.len = at;
        arena.ensure(need);
        buf = arena.buf;
      }
      copy(at, from, to - from);
      at = writeJsonChars(buf, at + to - from, cell);
      from = to; // the closing quote comes from the template, with what follows
    }
    this.endData(at, from);
  }

  /**
   * As `write`, with the cells as bytes of the file rather than strings:
   * cell i is `src[start .. end)` with `start = bounds[first + 2i]`, `end =
   * bounds[first + 2i + 1]`, and a start stored as `~start` when the cell
   * was quoted and holds doubled quotes (`""` is one `"`). The bytes are
   * UTF-8 when `high` is null (lone surrogates, from UTF-16 files, in their
   * three-byte form), else a one-byte encoding whose bytes 0x80–0xFF `high`
   * gives as UTF-8 (4 bytes per byte: the length, then up to 3 bytes). The
   * output is the same bytes as `write` of the decoded cells.
   */
  writeRaw(fields: readonly FieldValue[], src: Uint8Array, bounds: Int32Array, first: number, high: Uint8Array | null): void {
    this.writeFields(fields);
    const arena = this.arena;
    const copy = arena.copy;
    const keys = this.columnKeys;
    const n = keys.length - 1;
    // Room, once for the row, for the whole template and at worst six bytes per byte of the record.
    const firstStart = bounds[first]!;
    arena.ensure(this.dataEnd - this.dataStart + 6 * (bounds[first + 2 * n - 1]! - (firstStart < 0 ? ~firstStart : firstStart)) + 1);
    const buf = arena.buf;
    const plain = high === null ? UTF8_PLAIN : ASCII_PLAIN;
    let from = this.dataStart;
    let at = arena.len;
    for (let i = 0; i < n; i++) {
      let start = bounds[first + 2 * i]!;
      const end = bounds[first + 2 * i + 1]!;
      const doubled = start < 0;
      if (doubled) start = ~start;
      if (end === start) continue;
      const to = keys[i + 1]! - 1;
      copy(at, from, to - from);
      at += to - from;
      for (let j = start; j < end; j++) {
        const c = src[j]!;
        if (plain[c] === 1) {
          buf[at++] = c;
        } else if (c < 0x80) {
          if (c === QUOTE && doubled) j++; // the second of a doubled quote
          at = writeAsciiEscape(buf, at, c);
        } else if (high !== null) {
          const k = (c - 0x80) << 2;
          buf[at++] = high[k + 1]!;
          buf[at++] = high[k + 2]!;
          if (high[k] === 3) buf[at++] = high[k + 3]!;
        } else if (src[j + 1]! >= 0xa0) {
          // 0xED 0xA0–0xBF: a lone surrogate in its three-byte form (a pair would be one four-byte character), escaped as JSON.stringify escapes it.
          at = writeUnicodeEscape(buf, at, 0xd000 | ((src[j + 1]! & 0x3f) << 6) | (src[j + 2]! & 0x3f));
          j += 2;
        } else {
          buf[at++] = c;
        }
      }
      from = to;
    }
    this.endData(at, from);
  }

  /** Writes the highlighted fields, up to `,"data":{`. */
  private writeFields(fields: readonly FieldValue[]): void {
    const arena = this.arena;
    const copy = arena.copy;
    for (let i = 0; i < this.fieldKeys.length; i++) {
      const key = this.fieldKeys[i]!;
      const v = fields[i] ?? null;
      const text = typeof v === 'number' ? JSON.stringify(v) : null;
      arena.ensure(key.n + 2 + 6 * (typeof v === 'string' ? v.length : 24));
      copy(arena.len, key.at, key.n);
      let at = arena.len + key.n;
      const buf = arena.buf;
      if (typeof v === 'string') {
        buf[at++] = QUOTE;
        at = writeJsonChars(buf, at, v);
        buf[at++] = QUOTE;
      } else if (text !== null) {
        at += buf.write(text, at, 'latin1');
      } else {
        copy(at, this.nullText.at, this.nullText.n);
        at += this.nullText.n;
      }
      arena.len = at;
    }
  }

  /** Copies the rest of the template from `from` (the closing quote of the last cell written on) to `at`. */
  private endData(at: number, from: number): void {
    const arena = this.arena;
    const rest = this.dataEnd - from;
    if (at + rest > arena.buf.length) {
      arena.len = at;
      arena.ensure(rest);
    }
    arena.copy(at, from, rest);
    arena.len = at + rest;
  }

  /** The bytes rendered since the last `take`, in a Buffer of their own (unpooled: it may go to another thread). */
  take(): Buffer {
    const out = Buffer.allocUnsafeSlow(this.length);
    this.arena.buf.copy(out, 0, this.start, this.arena.len);
    this.arena.len = this.start;
    return out;
  }

  /** The body of one item, as its own Buffer. */
  body(fields: readonly FieldValue[], cells: readonly string[]): Buffer {
    this.arena.len = this.start;
    this.write(fields, cells);
    return this.take();
  }
}

/** The ISO text of a time; a snapshot holds only a handful of distinct times, so each is formatted once. */
export function isoTime(actualizadoAt: number): string {
  if (actualizadoAt !== lastTime) {
    lastTime = actualizadoAt;
    lastIso = new Date(actualizadoAt).toISOString();
  }
  return lastIso;
}

let lastTime = NaN;
let lastIso = '';

/** Completes a body from `ItemRenderer` with its timestamp, as text. */
export function finishItem(body: Buffer | string, actualizadoAt: number): string {
  return (typeof body === 'string' ? body : body.toString('utf8')) + isoTime(actualizadoAt) + ITEM_TAIL;
}

/** Bytes that end every item after its timestamp's text. */
export const ITEM_TAIL_BYTES = Buffer.from(ITEM_TAIL);

/**
 * How bodies are hashed. A snapshot keeps the algorithm its records were
 * hashed with, and the next import of its company and kind hashes the same
 * way, since unchanged records are found by equal hashes: snapshots written
 * before SHA-256 (MD5) go on with MD5. New ones use SHA-256, about twice as
 * fast as MD5 on a CPU with SHA extensions (1.4 GB/s against 0.7 GB/s on 3.8
 * KB bodies, on the benchmark machine) and without MD5's forgeable collisions.
 */
export type HashAlgorithm = 'md5' | 'sha256';
export const HASH_ALGORITHMS: readonly HashAlgorithm[] = ['md5', 'sha256'];
export const CURRENT_HASH: HashAlgorithm = 'sha256';
/** Bytes of a body's hash, whatever the algorithm (SHA-256 is cut to its first 16). */
export const HASH_BYTES = 16;

/** Content hash of a rendered body: equal hashes mean an unchanged record. */
export function hashBody(body: Buffer | string, algorithm: HashAlgorithm = CURRENT_HASH): Buffer {
  const digest = hash(algorithm, body, 'buffer');
  return digest.length === HASH_BYTES ? digest : digest.subarray(0, HASH_BYTES);
}

/** Byte order of UTF-8 strings: the list order of `id_erp` on every store. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * `compareUtf8(a, b) < 0` without encoding either: UTF-16 order is UTF-8
 * order except that surrogates (U+D800–DFFF, halves of characters above
 * U+FFFF) must sort after U+E000–FFFF, as their characters do in UTF-8.
 */
export function utf8Before(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) < utf8Rank(y);
  }
  return a.length < b.length;
}

const utf8Rank = (c: number) => (c < 0xd800 ? c : c >= 0xe000 ? c - 0x800 : c + 0x2000);
