/**
 * Reads an uploaded CSV file as a stream: checks its encoding
 * (decode-text.ts), finds the header and its delimiter (header-line.ts),
 * splits records on the bytes (byte-splitter.ts) and checks every record
 * against the header. Memory holds one chunk, one incomplete record and one
 * batch of rows, whatever the file's size.
 *
 * The work is synchronous per chunk: run it off the HTTP thread (a worker).
 *
 * @example
 * const file = await openCsv(fs.createReadStream(path));
 * for await (const batch of file.batches()) for (const row of batch) use(row.line, row.cells);
 */
import { ByteRecordSplitter, type ByteSplit } from './byte-splitter.js';
import { type ByteEncoding, bytesText, cellByteLength, cellCount, cellText, type CsvRecord, recordCells } from './cell-bytes.js';
import { completeUtf8Length, CsvTextDecoder, type TextEncoding } from './decode-text.js';
import { detectDelimiter, findHeaderLine } from './header-line.js';
import { ImportError, quoteName } from './import-error.js';

export interface CsvRow {
  /** 1-based physical line where the record starts. */
  line: number;
  /** One cell per column, exactly as in the file after decoding. */
  cells: string[];
}

/** A row as its bytes, for whoever can use them (upload-rows.ts renders them); `recordCells` gives its text. */
export interface CsvRecordRow {
  line: number;
  record: CsvRecord;
}

export interface CsvFile {
  /** Header names, exactly as in the file. */
  readonly columns: string[];
  /** The encoding detected so far: a file that is ASCII up to here reads as 'utf-8'. */
  readonly encoding: TextEncoding;
  readonly delimiter: string;
  /** Rows after the header, in batches, each checked for its cell count. Iterate once. */
  batches(): AsyncIterable<CsvRow[]>;
  /** The same rows as `batches`, cells left as bytes where they can be. Iterate one or the other, once. */
  recordBatches(): AsyncIterable<CsvRecordRow[]>;
  /** Raw bytes consumed from the source so far, for progress. */
  bytesRead(): number;
}

export interface CsvOptions {
  /** Largest cell, in UTF-8 bytes once decoded. Default 1 MiB. */
  maxCellBytes?: number;
  /** Most columns a header may have. Default 10,000. */
  maxColumns?: number;
  /** Rows per batch. Default 500. */
  batchRows?: number;
}

export const DEFAULT_MAX_CELL_BYTES = 1024 * 1024; // 1 MiB: far beyond any real remark, small enough to hold
export const DEFAULT_MAX_COLUMNS = 10_000; // real exports have a few hundred at most
const DEFAULT_BATCH_ROWS = 500; // enough to amortise a store write, small enough to stay light
const HEADER_CHARS_PER_COLUMN = 256; // allowance for the header line: maxColumns names this long
const PUMP_BYTES = 64 * 1024; // bytes decoded and split at a time

type ByteSource = AsyncIterable<Uint8Array> | NodeJS.ReadableStream;

/**
 * Opens a CSV byte stream: reads up to the end of the header, detecting the
 * encoding and the delimiter, and checks the header. Iterate `batches()` to
 * the end (or break out of it) to release the source.
 */
export async function openCsv(source: ByteSource, options: CsvOptions = {}): Promise<CsvFile> {
  const reader = new CsvReader(source, options);
  try {
    await reader.readHeader();
  } catch (error) {
    await reader.close();
    throw error;
  }
  return {
    columns: reader.columns,
    get encoding() {
      return reader.decoder.encoding;
    },
    delimiter: reader.delimiter,
    batches: () => reader.textBatches(),
    recordBatches: () => reader.batches(),
    bytesRead: () => reader.bytes,
  };
}

class CsvReader {
  readonly decoder = new CsvTextDecoder();
  columns: string[] = [];
  delimiter = ',';
  bytes = 0;
  private readonly chunks: AsyncIterator<Uint8Array | string>;
  private splitter: ByteRecordSplitter | null = null;
  private newline: '\n' | '\r' = '\n';
  private ended = false;
  private started = false;
  /** Line where the next record starts. */
  private nextLine = 1;
  /** First of the blank lines seen since the last row: an error if a row follows. */
  private blankLine = 0;
  /** Records split together with the header. */
  private firstRows: ByteSplit | null = null;
  private readonly maxCellBytes: number;
  private readonly maxColumns: number;
  private readonly batchRows: number;
  /** Below this many UTF-16 units no cell can exceed maxCellBytes (UTF-8 needs ≤ 3 bytes per unit). */
  private readonly cellCheckChars: number;
  private nextPendingCheck: number;

  constructor(source: ByteSource, options: CsvOptions) {
    this.chunks = (source as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
    this.maxCellBytes = options.maxCellBytes ?? DEFAULT_MAX_CELL_BYTES;
    this.maxColumns = options.maxColumns ?? DEFAULT_MAX_COLUMNS;
    this.batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
    this.cellCheckChars = Math.floor(this.maxCellBytes / 3);
    this.nextPendingCheck = this.cellCheckChars;
  }

  /** How the checked bytes read as text (UTF-16 is converted to UTF-8 by the decoder). */
  private byteEncoding(): ByteEncoding {
    return this.decoder.encoding === 'windows-1252' ? 'windows-1252' : 'utf-8';
  }

  /** The next checked bytes, or null once the source and the decoder are done. */
  private async pump(): Promise<Buffer | null> {
    if (this.ended) return null;
    if (this.rest === null) {
      const next = await this.chunks.next();
      if (next.done) {
        this.ended = true;
        return this.decoder.endBytes();
      }
      const chunk = next.value;
      if (typeof chunk === 'string') throw new TypeError('openCsv reads bytes: do not set an encoding on the source stream.');
      this.rest = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
    // Large source chunks (the stores keep uploads in 1 MiB pieces) are decoded and split a slice
    // at a time: fewer rows alive at once, so the garbage collector has less to move.
    const piece = this.rest.subarray(0, PUMP_BYTES);
    this.rest = this.rest.length > PUMP_BYTES ? this.rest.subarray(PUMP_BYTES) : null;
    this.bytes += piece.length;
    return this.decoder.writeBytes(piece);
  }

  /** What is left of the last source chunk. */
  private rest: Buffer | null = null;

  async close(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      await this.chunks.return?.();
    }
  }

  async readHeader(): Promise<void> {
    const limit = Math.max(this.maxCellBytes, this.maxColumns * HEADER_CHARS_PER_COLUMN);
    const pieces: Buffer[] = [];
    let text = '';
    let header = null;
    while (header === null) {
      const piece = await this.pump();
      if (piece !== null && piece.length > 0) {
        pieces.push(piece);
        text = this.headerText(pieces);
      }
      header = findHeaderLine(text, this.ended);
      // Only blank lines so far: an empty file if nothing else follows.
      if (header !== null && text.trim() === '' && !this.ended) header = null;
      if (header === null && text.length > limit) {
        throw new ImportError('bad_header', `Line 1 is longer than ${limit} characters without a line break: this is not a CSV header.`, 1);
      }
    }
    if (text.trim() === '') throw new ImportError('empty_file', 'The file is empty: it has no header line naming the columns.');
    this.delimiter = detectDelimiter(header.text);
    this.newline = header.newline;
    const splitter = (this.splitter = new ByteRecordSplitter(this.delimiter, this.newline, () => this.byteEncoding()));
    let split = splitter.push(Buffer.concat(pieces));
    while (split.rows.length === 0 && !split.final) {
      const piece = await this.pump();
      split = piece === null ? splitter.end() : splitter.push(piece);
    }
    if (split.badQuoteRow === 0) throw quoteError(split, 1);
    const first = split.rows.shift();
    const columns = first === undefined ? undefined : recordCells(first);
    if (columns === undefined) throw new ImportError('bad_header', 'Line 1 could not be read as a header.', 1);
    this.nextLine = 1 + (split.spans.shift() as number);
    if (split.badQuoteRow !== -1) split.badQuoteRow -= 1;
    this.checkHeader(columns);
    this.columns = columns;
    this.firstRows = split;
  }

  /** The bytes read so far as text, up to the last whole character. */
  private headerText(pieces: Buffer[]): string {
    const bytes = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
    const encoding = this.byteEncoding();
    return bytesText(bytes, 0, encoding === 'utf-8' ? completeUtf8Length(bytes) : bytes.length, encoding);
  }

  private checkHeader(columns: string[]): void {
    if (columns.length > this.maxColumns) {
      throw new ImportError('too_many_columns', `The header (line 1) has ${columns.length} columns; the limit is ${this.maxColumns}.`, 1);
    }
    if (columns.length === 1 && (columns[0] as string).trim() === '') {
      throw new ImportError('bad_header', 'Line 1 is blank: the first line must name the columns.', 1);
    }
    const empty: string[] = [];
    const seen = new Map<string, number[]>();
    columns.forEach((name, i) => {
      if (name.trim() === '') empty.push(i === 0 ? 'column 1' : `column ${i + 1} (after ${quoteName(columns[i - 1] as string)})`);
      else seen.set(name, [...(seen.get(name) ?? []), i + 1]);
    });
    if (empty.length > 0) {
      const which = empty.length > 5 ? `${empty.slice(0, 5).join(', ')} and ${empty.length - 5} more` : empty.join(', ');
      throw new ImportError('bad_header', `The header (line 1) has empty column names: ${which}. Every column needs a name.`, 1);
    }
    const duplicates = [...seen].filter(([, at]) => at.length > 1);
    if (duplicates.length > 0) {
      const which = duplicates.slice(0, 10).map(([name, at]) => `${quoteName(name)} (columns ${at.join(', ')})`);
      throw new ImportError('bad_header', `The header (line 1) names columns more than once: ${which.join('; ')}. Column names must be unique.`, 1);
    }
  }

  async *textBatches(): AsyncGenerator<CsvRow[]> {
    for await (const batch of this.batches()) yield batch.map((row) => ({ line: row.line, cells: recordCells(row.record) }));
  }

  async *batches(): AsyncGenerator<CsvRecordRow[]> {
    if (this.started) throw new Error('CsvFile.batches() can be iterated only once.');
    this.started = true;
    const splitter = this.splitter as ByteRecordSplitter;
    let split = this.firstRows as ByteSplit;
    this.firstRows = null;
    const batch: CsvRecordRow[] = [];
    try {
      for (;;) {
        this.addRows(split, batch);
        while (batch.length >= this.batchRows) yield batch.splice(0, this.batchRows);
        if (split.final) break;
        const piece = await this.pump();
        split = piece === null ? splitter.end() : splitter.push(piece);
        this.watchPending(splitter);
      }
      if (batch.length > 0) yield batch;
    } finally {
      await this.close();
    }
  }

  private addRows(split: ByteSplit, batch: CsvRecordRow[]): void {
    const { rows } = split;
    const width = this.columns.length;
    // A cell of n bytes (or characters) is at most 3n bytes of UTF-8 once decoded.
    const checkCells = split.parsedLength > this.cellCheckChars;
    for (let i = 0; i < rows.length; i++) {
      const record = rows[i] as CsvRecord;
      const line = this.nextLine;
      if (i === split.badQuoteRow) throw quoteError(split, line);
      this.nextLine += split.spans[i] as number;
      const n = cellCount(record);
      // A blank line is no record (even in a one-column file); only trailing ones are allowed.
      if (n === 1 && cellText(record, 0).trim() === '') {
        if (this.blankLine === 0) this.blankLine = line;
        continue;
      }
      if (this.blankLine !== 0) {
        throw new ImportError('ragged_row', `Line ${this.blankLine} is blank but rows follow it: remove the blank line.`, this.blankLine);
      }
      if (n !== width) throw raggedRow(line, n, width);
      if (checkCells) this.checkCellSizes(record, line);
      batch.push({ line, record });
    }
  }

  private checkCellSizes(record: CsvRecord, line: number): void {
    for (let c = 0; c < cellCount(record); c++) {
      // Bytes of the file are never fewer than characters: a short cell needs no decoding.
      const size = Array.isArray(record) ? (record[c] as string).length : cellByteLength(record, c);
      if (size > this.cellCheckChars && Buffer.byteLength(cellText(record, c)) > this.maxCellBytes) {
        throw this.cellTooLarge(line, c, '');
      }
    }
  }

  /**
   * An incomplete record is held until its end arrives; when it keeps
   * growing (a quote never closed), fail as soon as it breaks a limit rather
   * than hold the rest of the file. Checked at doubling sizes, so the cost
   * stays linear.
   */
  private watchPending(splitter: ByteRecordSplitter): void {
    // In characters, as the limits are: bytes are never fewer, so below the limit in bytes is below it in characters.
    let pending = splitter.pendingLength;
    if (pending >= this.cellCheckChars && this.byteEncoding() === 'utf-8') pending = splitter.pendingText().length;
    if (pending < this.cellCheckChars) {
      this.nextPendingCheck = this.cellCheckChars;
      return;
    }
    if (pending <= this.nextPendingCheck) return;
    this.nextPendingCheck = pending * 2;
    const peek = splitter.peek();
    const cells = peek.rows[0];
    if (cells === undefined) return;
    if (cells.length > this.columns.length) throw raggedRow(this.nextLine, cells.length, this.columns.length);
    const big = cells.findIndex((cell) => Buffer.byteLength(cell) > this.maxCellBytes);
    if (big !== -1) {
      throw this.cellTooLarge(this.nextLine, big, peek.badQuote === 'unclosed' ? ': a quote opened there is probably never closed' : '');
    }
  }

  private cellTooLarge(line: number, column: number, hint: string): ImportError {
    const name = quoteName(this.columns[column] ?? `column ${column + 1}`);
    return new ImportError('cell_too_large', `Line ${line}: the cell of column ${name} is larger than the ${this.maxCellBytes}-byte limit${hint}.`, line);
  }
}

function quoteError(split: ByteSplit, line: number): ImportError {
  return split.badQuote === 'unclosed'
    ? new ImportError('bad_quote', `Line ${line}: a quoted cell is never closed (its closing quote is missing).`, line)
    : new ImportError('bad_quote', `Line ${line}: a quoted cell has text after its closing quote (a quote inside a quoted cell must be doubled: "").`, line);
}

function raggedRow(line: number, cells: number, width: number): ImportError {
  return new ImportError('ragged_row', `Line ${line} has ${cells} ${cells === 1 ? 'cell' : 'cells'} but the header has ${width} columns.`, line);
}
