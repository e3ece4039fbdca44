/**
 * The files `mirador pull` writes. Records are first downloaded to a spool
 * (NDJSON, one item per line), then turned into the output in one pass, so
 * nothing but the set of changed ids is held in memory, and an interrupted
 * download leaves the output as it was.
 *
 * - ndjson: one item per line. With --state, later runs append the changes:
 *   a change log, in which the last line of an `id_erp` is its current state
 *   (a tombstone when the record was removed).
 * - csv: the highlighted fields, `data.<COLUMN>` for every original column,
 *   then `actualizado_at`. With --state, later runs upsert by `id_erp` and
 *   drop removed records. RFC 4180 by default; `--csv-dialect excel-es` for
 *   a Spanish Excel (see CSV_DIALECTS).
 * - json: an array of items, one per line. With --state, upserted likewise.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { parse as parseCsv } from 'csv-parse';
import { CliError } from './cli-context.js';

type Item = Record<string, unknown> & { id_erp: string; data: Record<string, string>; actualizado_at: string };

/** What the download phase leaves behind. */
export interface Spool {
  /** The NDJSON file holding the downloaded items, in list order. */
  file: string;
  count: number;
  /** `id_erp` of every downloaded item (tombstones included), to drop their old versions when merging. */
  ids: Set<string>;
  /** Tombstones among them: removed records, dropped from csv and json files. */
  deleted: number;
  /** Every original column seen, in first-seen order. */
  dataColumns: string[];
}

/** Where the output goes: a file (written to a temporary name, then renamed) or stdout. */
export type Destination = { file: string } | { stdout: NodeJS.WritableStream };

async function* spooledItems(spool: Spool): AsyncGenerator<Item> {
  const lines = createInterface({ input: createReadStream(spool.file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) if (line) yield JSON.parse(line) as Item;
}

/** The downloaded records, without tombstones: what a csv or json file keeps. */
async function* spooledRecords(spool: Spool): AsyncGenerator<Item> {
  for await (const item of spooledItems(spool)) if (item.eliminado !== true) yield item;
}

class Sink {
  private constructor(
    private readonly stream: NodeJS.WritableStream,
    /** For a file: the name written, and the name it takes once complete (the same when appending). */
    private readonly file: { written: string; final: string } | null,
  ) {}

  static open(to: Destination, flags: 'w' | 'a' = 'w'): Sink {
    if ('stdout' in to) return new Sink(to.stdout, null);
    // Appending goes to the file itself; rewriting goes to a temporary file, renamed once complete.
    const written = flags === 'a' ? to.file : `${to.file}.${process.pid}.part`;
    return new Sink(createWriteStream(written, { flags }), { written, final: to.file });
  }

  async write(text: string): Promise<void> {
    if (!this.stream.write(text)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    if (!this.file) return;
    const stream = this.stream as WriteStream;
    await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
    if (this.file.written !== this.file.final) await rename(this.file.written, this.file.final);
  }

  async abandon(): Promise<void> {
    if (!this.file) return;
    (this.stream as WriteStream).destroy();
    if (this.file.written !== this.file.final) await rm(this.file.written, { force: true });
  }
}

async function withSink(sink: Sink, fn: (sink: Sink) => Promise<number>): Promise<number> {
  try {
    const n = await fn(sink);
    await sink.close();
    return n;
  } catch (err) {
    await sink.abandon();
    throw err;
  }
}

/** NDJSON: the spool as it is, written fresh or appended. Returns the lines written. */
export function writeNdjson(spool: Spool, to: Destination, append: boolean): Promise<number> {
  return withSink(Sink.open(to, append ? 'a' : 'w'), async (sink) => {
    for await (const item of spooledItems(spool)) await sink.write(`${JSON.stringify(item)}\n`);
    return spool.count;
  });
}

/** JSON: `[`, one item per line, `]`. Existing items not downloaded again are kept, in place. Returns the item count. */
export function writeJson(spool: Spool, to: Destination, existing: string | null): Promise<number> {
  return withSink(Sink.open(to), async (sink) => {
    let n = 0;
    const put = (item: unknown) => sink.write(`${n++ === 0 ? '[\n' : ',\n'}${JSON.stringify(item)}`);
    if (existing !== null) {
      for await (const item of existingJsonItems(existing)) if (!spool.ids.has(item.id_erp)) await put(item);
    }
    for await (const item of spooledRecords(spool)) await put(item);
    await sink.write(n === 0 ? '[]\n' : '\n]\n');
    return n;
  });
}

/** Items of a JSON file this command wrote: one per line between `[` and `]`. */
async function* existingJsonItems(file: string): AsyncGenerator<Item> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    const text = line.trim().replace(/,$/, '');
    if (text === '[' || text === ']' || text === '[]' || text === '') continue;
    let item: Item;
    try {
      item = JSON.parse(text) as Item;
    } catch {
      throw new CliError(`${file}, line ${lineNo}: not a file written by "mirador pull --format json" (one item per line).`);
    }
    if (typeof item?.id_erp !== 'string') throw new CliError(`${file}, line ${lineNo}: an item without id_erp.`);
    yield item;
  }
}

const DATA_PREFIX = 'data.';

export type CsvDialect = 'rfc4180' | 'excel-es';

interface DialectRules {
  /** Written before the header. */
  bom: string;
  delimiter: string;
  /** The decimal mark of numbers (`precio`); text cells, `data.*` included, are written as they are. */
  decimal: string;
}

/**
 * - rfc4180: comma, CRLF, no BOM: what programs read.
 * - excel-es: what Excel with a Spanish locale opens by double-click with its
 *   columns split and its accents intact: a UTF-8 BOM (without it Excel reads
 *   Windows-1252), `;` (the list separator where `,` is the decimal mark) and
 *   `1234,5` for numbers, so `precio` is a number Excel can add up.
 */
export const CSV_DIALECTS: Record<CsvDialect, DialectRules> = {
  rfc4180: { bom: '', delimiter: ',', decimal: '.' },
  'excel-es': { bom: '\uFEFF', delimiter: ';', decimal: ',' },
};

/** One CSV record (CRLF): cells quoted when they hold the delimiter, a quote or a line break, quotes doubled. */
export function csvRecord(cells: readonly string[], dialect: DialectRules = CSV_DIALECTS.rfc4180): string {
  const d = dialect.delimiter;
  return `${cells.map((c) => (c.includes(d) || /["\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(d)}\r\n`;
}

function cellText(value: unknown, dialect: DialectRules): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value).replace('.', dialect.decimal);
  return String(value);
}

/**
 * CSV: highlighted fields, `data.<COLUMN>` for every column, `actualizado_at`.
 * When merging, the existing header's columns come first (a column the ERP
 * dropped stays, empty for new rows) and new ones are added after them.
 */
export function writeCsv(
  spool: Spool,
  to: Destination,
  fields: readonly string[],
  existing: string | null,
  dialectName: CsvDialect = 'rfc4180',
): Promise<number> {
  const dialect = CSV_DIALECTS[dialectName];
  const record = (cells: readonly string[]) => csvRecord(cells, dialect);
  return withSink(Sink.open(to), async (sink) => {
    const rows = existing === null ? null : existingCsvRows(existing, dialect);
    const first = rows ? await rows.next() : null;
    const oldHeader = first && !first.done ? first.value : null;
    const oldData = oldHeader ? oldHeader.filter((c) => c.startsWith(DATA_PREFIX)).map((c) => c.slice(DATA_PREFIX.length)) : [];
    const dataColumns = [...oldData, ...spool.dataColumns.filter((c) => !oldData.includes(c))];
    const header = [...fields, ...dataColumns.map((c) => DATA_PREFIX + c), 'actualizado_at'];
    await sink.write(dialect.bom + record(header));
    let n = 0;
    if (rows && oldHeader) {
      const idAt = oldHeader.indexOf('id_erp');
      if (idAt < 0) throw new CliError(`${existing}: no id_erp column; not a file written by "mirador pull --format csv".`);
      const from = header.map((name) => oldHeader.indexOf(name));
      for await (const row of rows) {
        if (spool.ids.has(row[idAt] ?? '')) continue;
        await sink.write(record(from.map((i) => (i < 0 ? '' : row[i] ?? ''))));
        n++;
      }
    }
    for await (const item of spooledRecords(spool)) {
      const cells = [
        ...fields.map((f) => cellText(item[f], dialect)),
        ...dataColumns.map((c) => item.data[c] ?? ''),
        item.actualizado_at,
      ];
      await sink.write(record(cells));
      n++;
    }
    return n;
  });
}

/** The header, then the rows, of a CSV file. */
async function* existingCsvRows(file: string, dialect: DialectRules): AsyncGenerator<string[]> {
  const parser = createReadStream(file).pipe(parseCsv({ bom: true, delimiter: dialect.delimiter, relax_column_count: false }));
  try {
    for await (const row of parser) yield row as string[];
  } catch (err) {
    throw new CliError(`Cannot read ${file} as CSV: ${(err as Error).message}`);
  }
}
