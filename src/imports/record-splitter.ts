/**
 * Splits decoded CSV text into records, chunk by chunk, with Papa Parse's
 * core parser (RFC 4180: quoted delimiters, doubled quotes, quoted line
 * breaks). Imports split bytes instead (byte-splitter.ts), which hands this
 * one the records it does not read itself and is tested against it. Papa
 * Parse was chosen by measurement against csv-parse and uDSV on a 150-column
 * export: see bench/csv-parsers.ts.
 *
 * Records end at LF; a CR before it belongs to the line break, not to the
 * last cell, so CRLF, LF and files mixing both read the same. (Only a file
 * whose first line ends in a lone CR is split at CR, old Mac style.)
 *
 * A record with no quote character before its line break cannot hold a
 * quoted cell: Papa's own "fast mode" splits such text at the delimiter, and
 * so does `push` here, record by record, with the native `split` (about twice
 * Papa's speed on them; most rows of an ERP export have no quote). Papa
 * parses every record that holds a quote, from that record's start, exactly
 * as it would have in context (its parser keeps no state between records).
 */
import Papa from 'papaparse';

export type QuoteProblem = 'unclosed' | 'stray';

export interface Split {
  /** Complete records, cells as in the file (quotes removed, `""` undone). */
  rows: string[][];
  /**
   * Line breaks from the start of each record to the start of the next: the
   * physical lines it spans (a last record with no line break counts its
   * inner ones only).
   */
  spans: number[];
  /** Length of the text parsed for this split (pending text included). */
  parsedLength: number;
  /** True when the input had ended: the last record may lack a line break. */
  final: boolean;
  /** Index in `rows` of the first record with broken quoting, or -1. */
  badQuoteRow: number;
  badQuote: QuoteProblem | null;
}

interface PapaStep {
  data: string[][];
  errors: { code: string }[];
  meta: { cursor: number };
}

export class RecordSplitter {
  private readonly parser: Papa.Parser;
  /** Papa's parser stopping after one record (no step callback: `preview` counts the rows it returns). */
  private readonly oneRecord: Papa.Parser;
  /** Text after the last complete record, parsed again with the next chunk. */
  private pending = '';
  // Filled record by record while Papa parses (its `step` callback), so that
  // each record's end offset is known: that is how lines are counted.
  private rows: string[][] = [];
  private ends: number[] = [];
  private badQuoteRow = -1;
  private badQuote: QuoteProblem | null = null;

  constructor(
    private readonly delimiter: string,
    private readonly newline: '\n' | '\r',
    /** False: Papa parses every record (the reference the fast path is tested against). */
    private readonly fastPath = true,
  ) {
    const step = (result: PapaStep): void => {
      if (result.errors.length > 0 && this.badQuoteRow === -1) {
        this.badQuoteRow = this.rows.length;
        // The first problem is the cause: a stray quote can leave a cell open to the end.
        this.badQuote = result.errors[0]?.code === 'MissingQuotes' ? 'unclosed' : 'stray';
      }
      this.rows.push(result.data[0] as string[]);
      this.ends.push(result.meta.cursor);
    };
    this.parser = new Papa.Parser({ delimiter, newline, quoteChar: '"', step } as unknown as Papa.ParseConfig);
    this.oneRecord = new Papa.Parser({ delimiter, newline, quoteChar: '"', preview: 1 } as unknown as Papa.ParseConfig);
  }

  /** Characters of an incomplete record held back so far. */
  get pendingLength(): number {
    return this.pending.length;
  }

  /** The complete records of the text seen so far; an incomplete last one waits for more. */
  push(text: string): Split {
    const input = this.pending.length === 0 ? text : this.pending + text;
    // With "ignore the last row", Papa stops before a record that may be cut
    // and reports where the complete ones end.
    const cursor = this.fastPath ? this.splitComplete(input) : (this.parser.parse(input, 0, true) as PapaStep).meta.cursor;
    this.pending = cursor === 0 ? input : input.slice(cursor);
    return this.collect(input, false);
  }

  /**
   * Adds the complete records of `input` to `rows` and `ends`; returns where
   * they end. A record is complete once its line break has been seen.
   */
  private splitComplete(input: string): number {
    const { delimiter, newline, rows, ends } = this;
    let cursor = 0;
    let quote = input.indexOf('"');
    for (;;) {
      const lineEnd = input.indexOf(newline, cursor);
      if (lineEnd === -1) return cursor;
      if (quote === -1 || quote > lineEnd) {
        rows.push(input.slice(cursor, lineEnd).split(delimiter));
        cursor = lineEnd + 1;
        ends.push(cursor);
        continue;
      }
      // Papa returns no record when this one may be cut (its quote still open at the end of the text).
      const one = this.oneRecord.parse(input.slice(cursor), 0, true) as PapaStep;
      const row = one.data[0];
      if (row === undefined) return cursor;
      if (one.errors.length > 0 && this.badQuoteRow === -1) {
        this.badQuoteRow = rows.length;
        this.badQuote = one.errors[0]?.code === 'MissingQuotes' ? 'unclosed' : 'stray';
      }
      rows.push(row);
      cursor += one.meta.cursor;
      ends.push(cursor);
      quote = input.indexOf('"', cursor);
    }
  }

  /** The last records, once the input has ended. */
  end(): Split {
    const input = this.pending;
    this.pending = '';
    if (input.length === 0) return { rows: [], spans: [], parsedLength: 0, final: true, badQuoteRow: -1, badQuote: null };
    this.parser.parse(input, 0, false);
    return this.collect(input, true);
  }

  /** The pending text split as if the input ended there, leaving it pending (to diagnose a runaway record). */
  peek(): Split {
    return this.peekText(this.pending);
  }

  /** `text` split as if the input ended there. */
  peekText(text: string): Split {
    this.parser.parse(text, 0, false);
    return this.collect(text, true);
  }

  /**
   * The first record of `text`, if complete, and where it ends (for
   * ByteRecordSplitter, which gives Papa the records it does not read itself).
   */
  parseOne(text: string): Split & { ends: number[] } {
    const one = this.oneRecord.parse(text, 0, true) as PapaStep;
    const row = one.data[0];
    if (row === undefined) return { ...this.collect(text, false), ends: [] };
    if (one.errors.length > 0) {
      this.badQuoteRow = 0;
      this.badQuote = one.errors[0]?.code === 'MissingQuotes' ? 'unclosed' : 'stray';
    }
    this.rows.push(row);
    this.ends.push(one.meta.cursor);
    const ends = this.ends;
    return { ...this.collect(text, false), ends };
  }

  /** Every record of `text`, the input having ended there, and where each ends. */
  parseAll(text: string): Split & { ends: number[] } {
    this.parser.parse(text, 0, false);
    const ends = this.ends;
    return { ...this.collect(text, true), ends };
  }

  private collect(input: string, final: boolean): Split {
    const { rows, ends, newline } = this;
    const spans: number[] = [];
    let at = input.indexOf(newline);
    for (let i = 0; i < rows.length; i++) {
      const end = ends[i] as number;
      let span = 0;
      for (; at !== -1 && at < end; at = input.indexOf(newline, at + 1)) span++;
      spans.push(span);
      if (newline === '\n') dropLineBreakCr(rows[i] as string[], input, i === 0 ? 0 : (ends[i - 1] as number), end, this.delimiter);
    }
    const split: Split = { rows, spans, parsedLength: input.length, final, badQuoteRow: this.badQuoteRow, badQuote: this.badQuote };
    this.rows = [];
    this.ends = [];
    this.badQuoteRow = -1;
    this.badQuote = null;
    return split;
  }
}

/**
 * A CR ending an unquoted last cell is the first half of a CRLF, not text.
 * An unquoted cell is exactly its raw text, ending where the record's LF (if
 * any) begins, and preceded by a delimiter or the start of the record. A
 * quoted cell ending in CR (`"x\r"`) never looks like that (checked for every
 * cell of up to 7 characters of `a;"` CR LF), and is left alone: Papa already
 * drops the CR between a closing quote and the LF.
 */
export function dropLineBreakCr(row: string[], input: string, start: number, end: number, delimiter: string): void {
  const last = row.length - 1;
  const cell = row[last] as string;
  if (cell.charCodeAt(cell.length - 1) !== 13) return;
  const rawEnd = input.charCodeAt(end - 1) === 10 ? end - 1 : end;
  const rawStart = rawEnd - cell.length;
  const unquoted = input.startsWith(cell, rawStart) && (rawStart === start || input.startsWith(delimiter, rawStart - delimiter.length));
  if (unquoted) row[last] = cell.slice(0, -1);
}
