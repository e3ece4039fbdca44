/**
 * Renders items exactly as the API returns them. An item is rendered once, at
 * import time, in two parts: the body (every key up to the value of
 * `actualizado_at`) and the timestamp, which is only known once the row has
 * been compared with the previous snapshot. The read path never parses or
 * stringifies an item again.
 *
 * Bodies are written as UTF-8 bytes straight into a buffer (`ByteSink`),
 * byte by byte: a customer row has 150 short cells, and building a string per
 * row only to encode it again cost twice as much (and most of the import's
 * garbage). The bytes are exactly those of `JSON.stringify` of each value.
 */
import { hash } from 'node:crypto';
import type { Kind } from './kinds.js';
import { KIND_SPECS } from './kinds.js';

export type FieldValue = string | number | null;

/** The part of a rendered item that follows the timestamp. */
const ITEM_TAIL = '"}';

/** A growable byte buffer that rendered bodies are appended to. */
export class ByteSink {
  buf: Buffer;
  len = 0;

  constructor(capacity = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(capacity);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  /** Appends bytes. */
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  /** Appends `s` (ASCII only) one byte per character. */
  ascii(s: string): void {
    this.ensure(s.length);
    this.len += this.buf.write(s, this.len, 'latin1');
  }

  /** Hands over the bytes written so far (a copy of exactly that size) and starts again. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.len));
    this.len = 0;
    return out;
  }
}

export class ItemRenderer {
  private readonly fieldKeys: Buffer[];
  /** Every column key, `,"NAME":"` (the first without its comma), back to back… */
  private readonly columnKeys: Buffer;
  /** …and where each starts (one more entry: the end). */
  private readonly columnKeyStarts: Uint32Array;

  /** `columns` are the CSV header names, in file order. */
  constructor(readonly kind: Kind, readonly columns: readonly string[]) {
    this.fieldKeys = KIND_SPECS[kind].fields.map((f, i) => Buffer.from((i === 0 ? '{' : ',') + JSON.stringify(f.name) + ':'));
    const keys = columns.map((c, i) => Buffer.from((i === 0 ? '' : ',') + JSON.stringify(c) + ':"'));
    this.columnKeys = Buffer.concat(keys);
    this.columnKeyStarts = new Uint32Array(keys.length + 1);
    let at = 0;
    keys.forEach((k, i) => {
      this.columnKeyStarts[i] = at;
      at += k.length;
    });
    this.columnKeyStarts[keys.length] = at;
  }

  /**
   * Appends the item up to and including the opening quote of
   * `actualizado_at`'s value to `sink`. `fields` holds one value per
   * highlighted field, in kind order; `cells` one cell per column.
   */
  write(sink: ByteSink, fields: readonly FieldValue[], cells: readonly string[]): void {
    for (let i = 0; i < this.fieldKeys.length; i++) {
      sink.bytes(this.fieldKeys[i]!);
      const v = fields[i] ?? null;
      if (typeof v === 'string') {
        sink.ensure(2 + 6 * v.length);
        sink.buf[sink.len++] = QUOTE;
        sink.len = writeJsonChars(sink.buf, sink.len, v);
        sink.buf[sink.len++] = QUOTE;
      } else {
        sink.ascii(JSON.stringify(v));
      }
    }
    sink.ascii(',"data":{');
    const keys = this.columnKeys;
    const starts = this.columnKeyStarts;
    for (let i = 0; i < starts.length - 1; i++) {
      const cell = cells[i] ?? '';
      const from = starts[i]!;
      const to = starts[i + 1]!;
      // Worst case: every character a six-byte \u escape.
      sink.ensure(to - from + 6 * cell.length + 1);
      const buf = sink.buf;
      let at = sink.len;
      // Keys are a few dozen bytes: a plain loop beats a native copy call.
      for (let k = from; k < to; k++) buf[at++] = keys[k]!;
      at = writeJsonChars(buf, at, cell);
      buf[at++] = QUOTE;
      sink.len = at;
    }
    sink.ascii('},"actualizado_at":"');
  }

  /** The body of one item, as its own Buffer. */
  body(fields: readonly FieldValue[], cells: readonly string[]): Buffer {
    const sink = new ByteSink(4096);
    this.write(sink, fields, cells);
    return sink.take();
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = '0123456789abcdef';
/** Short escapes JSON.stringify uses for these control characters (0 elsewhere). */
const SHORT_ESCAPE = new Uint8Array(32);
SHORT_ESCAPE[8] = 0x62; // \b
SHORT_ESCAPE[9] = 0x74; // \t
SHORT_ESCAPE[10] = 0x6e; // \n
SHORT_ESCAPE[12] = 0x66; // \f
SHORT_ESCAPE[13] = 0x72; // \r

/**
 * Writes `s` as the inside of a JSON string literal, in UTF-8, with exactly
 * JSON.stringify's escapes: `"` `\` and controls below U+0020 (short forms
 * where JSON has them), lone surrogates as `\udXXX`; everything else as is.
 * The caller has made room for 6 bytes per character. Returns the new end.
 */
export function writeJsonChars(buf: Buffer, at: number, s: string): number {
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c < 0x80) {
      if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) {
        buf[at++] = c;
      } else if (c >= 0x20) {
        buf[at++] = BACKSLASH;
        buf[at++] = c;
      } else if (SHORT_ESCAPE[c] !== 0) {
        buf[at++] = BACKSLASH;
        buf[at++] = SHORT_ESCAPE[c]!;
      } else {
        at = writeUnicodeEscape(buf, at, c);
      }
    } else if (c < 0x800) {
      buf[at++] = 0xc0 | (c >> 6);
      buf[at++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      buf[at++] = 0xe0 | (c >> 12);
      buf[at++] = 0x80 | ((c >> 6) & 0x3f);
      buf[at++] = 0x80 | (c & 0x3f);
    } else {
      const d = s.charCodeAt(j + 1);
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        buf[at++] = 0xf0 | (cp >> 18);
        buf[at++] = 0x80 | ((cp >> 12) & 0x3f);
        buf[at++] = 0x80 | ((cp >> 6) & 0x3f);
        buf[at++] = 0x80 | (cp & 0x3f);
        j++;
      } else {
        at = writeUnicodeEscape(buf, at, c); // a lone surrogate, escaped as JSON.stringify does
      }
    }
  }
  return at;
}

function writeUnicodeEscape(buf: Buffer, at: number, c: number): number {
  buf[at++] = BACKSLASH;
  buf[at++] = 0x75; // u
  buf[at++] = HEX.charCodeAt((c >> 12) & 15);
  buf[at++] = HEX.charCodeAt((c >> 8) & 15);
  buf[at++] = HEX.charCodeAt((c >> 4) & 15);
  buf[at++] = HEX.charCodeAt(c & 15);
  return at;
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

/** Content hash of a rendered body: equal hashes mean an unchanged record. */
export function hashBody(body: Buffer | string): Buffer {
  return hash('md5', body, 'buffer');
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
