/**
 * Cells kept as the bytes of the file (split by byte-splitter.ts), decoded to
 * text only where text is needed: the header, the highlighted fields, the
 * checks of rare cases. Rendering writes the bytes straight into JSON
 * (ItemRenderer.writeRaw) without making a string per cell.
 *
 * The bytes are those the decoder let through (decode-text.ts): valid UTF-8
 * (UTF-16 files are converted to UTF-8 first, see `wtf8Bytes`), or
 * Windows-1252 with no undefined byte. A text whose encoding is still
 * undecided is ASCII, which reads the same either way.
 */
import { decodeWindows1252Text, native } from './windows-1252.js';

/** How cell bytes become text: UTF-8 (also UTF-16 files, converted) or Windows-1252. */
export type ByteEncoding = 'utf-8' | 'windows-1252';

/**
 * One record as bytes: cell k is `src[start .. end)` with `start =
 * bounds[at + 2k]`, `end = bounds[at + 2k + 1]`; a quoted cell holding
 * doubled quotes has its start stored as `~start` (negative), so that `""`
 * is read as `"`. A quoted cell without them is stored as its inside.
 */
export interface RawRecord {
  src: Buffer;
  bounds: Int32Array;
  at: number;
  n: number;
  encoding: ByteEncoding;
}

/** A record is its cells' text (when Papa Parse read it) or its bytes. */
export type CsvRecord = string[] | RawRecord;

export function cellCount(record: CsvRecord): number {
  return Array.isArray(record) ? record.length : record.n;
}

/** Cell `c` of a record, as text. */
export function cellText(record: CsvRecord, c: number): string {
  if (Array.isArray(record)) return record[c] as string;
  const start = record.bounds[record.at + 2 * c] as number;
  const end = record.bounds[record.at + 2 * c + 1] as number;
  if (start >= 0) return bytesText(record.src, start, end, record.encoding);
  return bytesText(record.src, ~start, end, record.encoding).replaceAll('""', '"');
}

/** Every cell of a record, as text. */
export function recordCells(record: CsvRecord): string[] {
  if (Array.isArray(record)) return record;
  const cells: string[] = new Array(record.n);
  for (let c = 0; c < record.n; c++) cells[c] = cellText(record, c);
  return cells;
}

/** A cell's length in bytes of the file: never less than its length as text (so a bound on it bounds the text). */
export function cellByteLength(record: RawRecord, c: number): number {
  const start = record.bounds[record.at + 2 * c] as number;
  return (record.bounds[record.at + 2 * c + 1] as number) - (start >= 0 ? start : ~start);
}

/** `src[start .. end)` as text. */
export function bytesText(src: Buffer, start: number, end: number, encoding: ByteEncoding): string {
  if (encoding === 'windows-1252') return decodeWindows1252Text(src, start, end);
  const text = native(src).utf8Slice(start, end);
  // A lone surrogate of a UTF-16 file is carried as its 3-byte form, which Node decodes as U+FFFD.
  return text.includes('\uFFFD') ? wtf8Text(src, start, end) : text;
}

/**
 * UTF-8 bytes of a UTF-16 text, lone surrogates included (as the three
 * bytes their code would take, "WTF-8"), so that they come out of
 * `bytesText` and ItemRenderer.writeRaw as they would from the text
 * (JSON.stringify escapes them as `\udXXX`).
 */
export function wtf8Bytes(text: string): Buffer {
  if (!SURROGATE.test(text)) return Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(text.length * 3);
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const d = text.charCodeAt(i + 1);
    if (c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
      at += out.write(text.slice(i, i + 2), at, 'utf8');
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out[at++] = 0xe0 | (c >> 12);
      out[at++] = 0x80 | ((c >> 6) & 0x3f);
      out[at++] = 0x80 | (c & 0x3f);
    } else {
      at += out.write(text[i] as string, at, 'utf8');
    }
  }
  return out.subarray(0, at);
}

const SURROGATE = /[\ud800-\udfff]/;

/** Decodes UTF-8 that may carry lone surrogates (see `wtf8Bytes`); anything else not UTF-8 reads as U+FFFD, as Node's decoder reads it. */
function wtf8Text(src: Buffer, start: number, end: number): string {
  let text = '';
  let from = start;
  for (let i = start; i + 2 < end; i++) {
    if (src[i] === 0xed && (src[i + 1] as number) >= 0xa0 && (src[i + 1] as number) <= 0xbf && ((src[i + 2] as number) & 0xc0) === 0x80) {
      text += src.toString('utf8', from, i);
      text += String.fromCharCode(0xd000 | (((src[i + 1] as number) & 0x3f) << 6) | ((src[i + 2] as number) & 0x3f));
      i += 2;
      from = i + 1;
    }
  }
  return text + src.toString('utf8', from, end);
}
