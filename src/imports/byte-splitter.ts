/**
 * Splits CSV records on the file's bytes, before any decoding: the
 * delimiter, `"`, CR and LF are ASCII, and in UTF-8 and Windows-1252 an
 * ASCII byte is always that character (UTF-8 multi-byte sequences hold only
 * bytes ≥ 0x80). A record's cells stay byte ranges (cell-bytes.ts), rendered
 * from the bytes without a string per cell.
 *
 * The records read exactly as RecordSplitter (Papa Parse) reads the decoded
 * text. This splitter reads the well-formed ones itself — unquoted cells, and
 * quoted cells whose closing quote is followed by the delimiter, the line
 * break (CRLF too) or the end of the file — and hands any other record, from
 * its start, to Papa Parse, which decides what it holds (spaces after a
 * closing quote, a stray or unclosed quote and the kind of problem). Papa
 * Parse keeps no state between records, so reading one record at a time
 * gives what it gives reading the whole text.
 */
import { type ByteEncoding, bytesText, type CsvRecord, type RawRecord } from './cell-bytes.js';
import { completeUtf8Length } from './decode-text.js';
import { RecordSplitter, type QuoteProblem } from './record-splitter.js';

export interface ByteSplit {
  /** Complete records. */
  rows: CsvRecord[];
  /** Physical lines from the start of each record to the start of the next (as Split.spans). */
  spans: number[];
  /** Bytes parsed for this split (pending bytes included). */
  parsedLength: number;
  final: boolean;
  badQuoteRow: number;
  badQuote: QuoteProblem | null;
}

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;
const EMPTY = Buffer.alloc(0);

/** What reading a record found. */
const INCOMPLETE = -1; // the record may go on past the bytes seen
const IRREGULAR = -2; // Papa Parse has to read it

export class ByteRecordSplitter {
  private pending: Buffer = EMPTY;
  /** Papa Parse, for the records this splitter does not read itself. */
  private readonly papa: RecordSplitter;
  private readonly delim: number;
  private readonly nl: number;
  /** Cell bounds of the records being read (see RawRecord), reused between splits. */
  private bounds = new Int32Array(0);
  private used = 0;
  /** 1 for the bytes that end an unquoted cell: the delimiter and the line break. */
  private readonly stop = new Uint8Array(256);
  /** Line breaks in the record just read. */
  private span = 0;

  constructor(
    private readonly delimiter: string,
    private readonly newline: '\n' | '\r',
    /** How the bytes become text, asked for each split (an ASCII file decides late). */
    private readonly encoding: () => ByteEncoding,
  ) {
    this.delim = delimiter.charCodeAt(0);
    this.nl = newline.charCodeAt(0);
    this.stop[this.delim] = 1;
    this.stop[this.nl] = 1;
    this.papa = new RecordSplitter(delimiter, newline);
  }

  /** Bytes of an incomplete record held back so far. */
  get pendingLength(): number {
    return this.pending.length;
  }

  /** The complete records of the bytes seen so far; an incomplete last one waits for more. */
  push(bytes: Buffer): ByteSplit {
    const { pending } = this;
    // Pieces cut from one upload chunk follow each other in memory: the pending bytes need no copy then.
    const adjacent = pending.buffer === bytes.buffer && pending.byteOffset + pending.length === bytes.byteOffset;
    const input =
      pending.length === 0 ? bytes : adjacent ? Buffer.from(bytes.buffer, pending.byteOffset, pending.length + bytes.length) : Buffer.concat([pending, bytes]);
    return this.split(input, false);
  }

  /** The last records, once the input has ended. */
  end(): ByteSplit {
    const input = this.pending;
    this.pending = EMPTY;
    return this.split(input, true);
  }

  /** The text of the incomplete record held back. */
  pendingText(): string {
    const encoding = this.encoding();
    // Up to the last whole character, as a text decoder would have let it through.
    return bytesText(this.pending, 0, encoding === 'utf-8' ? completeUtf8Length(this.pending) : this.pending.length, encoding);
  }

  /** The pending text split as if the input ended there, leaving it pending (to diagnose a runaway record). */
  peek(): { rows: string[][]; badQuote: QuoteProblem | null } {
    return this.papa.peekText(this.pendingText());
  }

  private split(input: Buffer, final: boolean): ByteSplit {
    const encoding = this.encoding();
    const rows: CsvRecord[] = [];
    const spans: number[] = [];
    let badQuoteRow = -1;
    let badQuote: QuoteProblem | null = null;
    // Room for every cell a record of this input can have (a cell takes at least one byte but the last).
    if (this.bounds.length < 2 * input.length + 2) this.bounds = new Int32Array(2 * input.length + 2);
    this.used = 0;
    let cursor = 0;
    while (cursor < input.length) {
      const at = this.used;
      const end = this.record(input, cursor, final);
      if (end === INCOMPLETE) break;
      if (end !== IRREGULAR) {
        rows.push({ src: input, bounds: this.bounds, at, n: (this.used - at) >> 1, encoding });
        spans.push(this.span);
        cursor = end;
        continue;
      }
      this.used = at;
      // Papa Parse reads the rest, from this record on: one record, or (at the end) all that is left.
      const text = bytesText(input, cursor, input.length, encoding);
      const read = final ? this.papa.parseAll(text) : this.papa.parseOne(text);
      if (read.rows.length === 0) break;
      for (let i = 0; i < read.rows.length; i++) {
        if (read.badQuoteRow === i && badQuoteRow === -1) {
          badQuoteRow = rows.length;
          badQuote = read.badQuote;
        }
        rows.push(read.rows[i] as string[]);
        spans.push(read.spans[i] as number);
      }
      if (final) {
        cursor = input.length;
        break;
      }
      const cut = read.ends[0] as number;
      cursor += encoding === 'windows-1252' ? cut : Buffer.byteLength(text.slice(0, cut));
    }
    this.pending = final || cursor === input.length ? EMPTY : input.subarray(cursor);
    // The records keep their own copy of the bounds; the scratch array is reused.
    const bounds = this.bounds.slice(0, this.used);
    for (const row of rows) if (!Array.isArray(row)) row.bounds = bounds;
    return { rows, spans, parsedLength: input.length, final, badQuoteRow, badQuote };
  }

  /**
   * Reads one record from `start`: adds its cells' bounds and returns where
   * the next record starts, or INCOMPLETE, or IRREGULAR. (One loop with
   * local state: it visits every byte of the file.)
   */
  private record(src: Buffer, start: number, final: boolean): number {
    const { delim, nl, bounds, stop } = this;
    const len = src.length;
    let used = this.used;
    let span = 0;
    let at = start;
    for (;;) {
      if (at < len && src[at] === QUOTE) {
        // A quoted cell: up to a quote that is not doubled.
        const from = at + 1;
        let doubled = false;
        let i = from;
        for (;;) {
          if (i >= len) return final ? IRREGULAR : INCOMPLETE;
          const b = src[i];
          if (b === QUOTE) {
            if (i + 1 >= len || src[i + 1] !== QUOTE) break;
            doubled = true;
            i += 2;
            continue;
          }
          if (b === nl) span++;
          i++;
        }
        bounds[used++] = doubled ? ~from : from;
        bounds[used++] = i;
        const next = i + 1;
        if (next >= len) {
          if (!final) return INCOMPLETE;
          this.used = used;
          this.span = span;
          return len;
        }
        const b = src[next];
        if (b === delim) {
          at = next + 1;
          continue;
        }
        this.used = used;
        if (b === nl) {
          this.span = span + 1;
          return next + 1;
        }
        // "…"CRLF: Papa Parse takes the CR for a space before the line break.
        if (b === CR && nl === LF) {
          if (next + 1 >= len) return final ? IRREGULAR : INCOMPLETE;
          if (src[next + 1] === LF) {
            this.span = span + 1;
            return next + 2;
          }
        }
        return IRREGULAR;
      }
      // An unquoted cell: up to the delimiter or the line break; a quote inside it is text.
      let i = at;
      while (i < len && stop[src[i]!] === 0) i++;
      const b = i < len ? src[i]! : 0;
      if (i >= len && !final) return INCOMPLETE;
      if (i < len && b === delim) {
        bounds[used++] = at;
        bounds[used++] = i;
        at = i + 1;
        continue;
      }
      // The last cell: a CR before its LF (or before the end) belongs to the line break.
      bounds[used++] = at;
      bounds[used++] = nl === LF && i > at && src[i - 1] === CR ? i - 1 : i;
      this.used = used;
      if (i >= len) {
        this.span = span;
        return len;
      }
      this.span = span + 1;
      return i + 1;
    }
  }
}
