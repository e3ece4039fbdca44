/**
 * The CPU-heavy half of an import: from the upload's bytes to rendered items.
 * Decodes and parses the CSV (read-csv.ts), maps the columns, normalises the
 * highlighted fields and renders each row's item body as UTF-8 bytes, a batch
 * at a time. The other half — hashing, change detection, writing the
 * snapshot — is the store's (see apply-import.ts).
 *
 * Rendering right after parsing lets each row's cell strings die young, which
 * keeps the garbage collector's work small; the output is a few Buffers per
 * batch, cheap to hand to another thread (upload-thread.ts runs this there).
 */
import { ItemRenderer } from '../domain/item-renderer.js';
import { KIND_SPECS, type Kind } from '../domain/kinds.js';
import { BatchRenderer, type RenderedBatch } from '../snapshots/write-records.js';
import { cellText } from './cell-bytes.js';
import { resolveMapping, type MappingOverride } from './column-mapping.js';
import type { TextEncoding } from './decode-text.js';
import { ImportError } from './import-error.js';
import { extractFields, Warnings, type ImportWarning } from './normalise.js';
import { openCsv, type CsvFile } from './read-csv.js';
import { WINDOWS_1252_UTF8 } from './windows-1252.js';

/** Rows handed on at a time: enough to amortise a store write. */
const BATCH_ROWS = 500;
/**
 * Rows parsed at a time, each handful rendered at once: the cells of fewer
 * rows are alive when the garbage collector runs, so it has less to copy.
 * With the young generation capped (PostgreSQL, see apply-import.ts), 500
 * rows of 150 cells alive at once cost the CSV thread ~50% more time.
 */
const PARSE_ROWS = 50;

export interface UploadOptions {
  kind: Kind;
  /** The company's mapping override. */
  override: MappingOverride;
  maxCellBytes?: number;
}

/** What is known once the header has been read. */
export interface UploadHead {
  encoding: TextEncoding;
  delimiter: string;
  columns: string[];
  /** Field → the column feeding it. */
  mapping: Record<string, string | null>;
}

export interface UploadBatch extends RenderedBatch {
  /** Rows and raw bytes read so far, for progress. */
  rowsRead: number;
  bytesRead: number;
  /** Warnings so far, and the ones added since the last batch (up to the report's cap). */
  warningsTotal: number;
  newWarnings: ImportWarning[];
}

/** The rendered rows of an upload, wherever they are produced. */
export interface UploadRowSource {
  readonly head: UploadHead;
  batches(): AsyncIterable<UploadBatch>;
  /** The encoding detected by the end (a file that is ASCII at first may turn out Windows-1252). */
  encoding(): TextEncoding;
  /** Releases the source when the batches were not read to the end. */
  close(): Promise<void>;
}

/** Opens an upload and renders it in this thread. */
export async function openUploadRows(source: AsyncIterable<Uint8Array>, options: UploadOptions): Promise<UploadRowSource> {
  const csv: CsvFile = await openCsv(source, { maxCellBytes: options.maxCellBytes, batchRows: PARSE_ROWS });
  const spec = KIND_SPECS[options.kind];
  const mapping = resolveMapping(options.kind, csv.columns, options.override);
  const idColumn = mapping.sources.id_erp;
  const renderer = new BatchRenderer(new ItemRenderer(options.kind, csv.columns));
  const warnings = new Warnings();
  let rowsRead = 0;
  let reported = 0;
  let iterator: AsyncIterator<unknown> | null = null;
  const batch = (): UploadBatch => {
    const newWarnings = warnings.items.slice(reported);
    reported = warnings.items.length;
    return { ...renderer.take(), rowsRead, bytesRead: csv.bytesRead(), warningsTotal: warnings.total, newWarnings };
  };
  return {
    head: { encoding: csv.encoding, delimiter: csv.delimiter, columns: csv.columns, mapping: mapping.sources },
    encoding: () => csv.encoding,
    close: async () => {
      await iterator?.return?.();
    },
    async *batches() {
      const rows = csv.recordBatches()[Symbol.asyncIterator]();
      iterator = rows;
      // The mapped columns' text, for the highlighted fields; the other cells are rendered from their bytes.
      const mapped = mapping.columnIndexByField.filter((at) => at !== -1);
      const fieldCells: string[] = new Array<string>(csv.columns.length).fill('');
      for (let next = await rows.next(); !next.done; next = await rows.next()) {
        for (const { line, record } of next.value) {
          const raw = Array.isArray(record) ? null : record;
          const cells = raw === null ? (record as string[]) : fieldCells;
          if (raw !== null) for (const at of mapped) fieldCells[at] = cellText(raw, at);
          const fields = extractFields(spec, mapping, cells, line, warnings);
          if (fields[0] === null) {
            throw new ImportError('empty_id', `Line ${line} has an empty id_erp (column "${idColumn}"): every row needs one.`, line);
          }
          if (raw === null) renderer.add([{ fields, cells, line }]);
          else renderer.addRaw(fields, line, raw.src, raw.bounds, raw.at, raw.encoding === 'windows-1252' ? WINDOWS_1252_UTF8 : null);
          rowsRead++;
        }
        if (renderer.count >= BATCH_ROWS) yield batch();
      }
      if (renderer.count > 0) yield batch();
    },
  };
}
