/**
 * Applies one claimed import: reads the stored upload, maps and normalises
 * each row, writes a new snapshot and publishes it — or fails the import,
 * leaving the live snapshot untouched. Never throws for a bad file: the
 * outcome is in the returned report.
 */
import { KIND_SPECS } from '../domain/kinds.js';
import { writeRecords, type RecordInput } from '../snapshots/write-records.js';
import { DuplicateIdError, StoreUnavailableError, type ImportJob, type Store } from '../store/store.js';
import { resolveMapping } from './column-mapping.js';
import { guardTrips, previousCount, readGuard } from './deletion-guard.js';
import { ImportError } from './import-error.js';
import type { ImportReport } from './import-report.js';
import { extractFields, Warnings } from './normalise.js';
import { openCsv, type CsvFile } from './read-csv.js';

export interface ApplyOptions {
  /** Called after each batch with rows and raw bytes read so far. */
  onProgress?: (rowsRead: number, bytesRead: number) => void | Promise<void>;
  maxCellBytes?: number;
  /** How long tombstones of removed records are kept. */
  tombstoneRetentionMs?: number;
}

export async function applyImport(store: Store, job: ImportJob, options: ApplyOptions = {}): Promise<ImportReport> {
  const started = Date.now();
  const spec = KIND_SPECS[job.kind];
  const warnings = new Warnings();
  const report: ImportReport = {
    import_id: job.id,
    kind: job.kind,
    filename: job.filename,
    status: 'failed',
    encoding: null,
    delimiter: null,
    columns: 0,
    mapping: {},
    rows_read: 0,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    deleted: 0,
    deleted_examples: [],
    guard: null,
    warnings: { count: 0, items: warnings.items },
    bytes: job.sizeBytes,
    duration_ms: 0,
    error: null,
  };
  let csv: CsvFile | null = null;
  try {
    csv = await openCsv(store.readImportFile(job.id), { maxCellBytes: options.maxCellBytes });
    report.encoding = csv.encoding;
    report.delimiter = csv.delimiter;
    report.columns = csv.columns.length;
    const mapping = resolveMapping(job.kind, csv.columns, await store.getMapping(job.companyId, job.kind));
    report.mapping = mapping.sources;
    const file = csv;
    const idColumn = mapping.sources.id_erp;
    async function* rows(): AsyncGenerator<RecordInput[]> {
      for await (const batch of file.batches()) {
        const out = batch.map((row) => {
          const fields = extractFields(spec, mapping, row.cells, row.line, warnings);
          if (fields[0] === null) {
            throw new ImportError('empty_id', `Line ${row.line} has an empty id_erp (column "${idColumn}"): every row needs one.`, row.line);
          }
          return { fields, cells: row.cells, line: row.line };
        });
        report.rows_read += out.length;
        await options.onProgress?.(report.rows_read, file.bytesRead());
        yield out;
      }
    }
    const staged = await writeRecords(
      store,
      { companyId: job.companyId, kind: job.kind, columns: csv.columns, at: started, importId: job.id },
      rows(),
    );
    Object.assign(report, {
      inserted: staged.changes.inserted,
      updated: staged.changes.updated,
      unchanged: staged.changes.unchanged,
      deleted: staged.changes.deleted,
      deleted_examples: staged.changes.deletedExamples,
      status: 'succeeded',
    });
    const guard = await readGuard(store, job.companyId);
    if (guardTrips(guard, staged.changes)) {
      report.status = 'awaiting_confirmation';
      report.guard = {
        would_remove: staged.changes.deleted,
        of: previousCount(staged.changes),
        min_records: guard.minRecords,
        max_fraction: guard.maxFraction,
      };
      finish(report, warnings, started, csv);
      await store.holdImport(job.id, staged.snapshotId, report);
      return report;
    }
    finish(report, warnings, started, csv);
    await store.publishSnapshot(staged.snapshotId, { importId: job.id, report }, { tombstoneRetentionMs: options.tombstoneRetentionMs });
    return report;
  } catch (err) {
    if (err instanceof ImportError) {
      report.error = { code: err.code, message: err.message, line: err.line ?? null };
    } else if (err instanceof DuplicateIdError) {
      report.error = { code: 'duplicate_id', message: err.message, line: err.duplicates[0]?.line ?? null };
    } else if (err instanceof StoreUnavailableError) {
      throw err; // not the file's fault: the worker retries the import later
    } else {
      report.error = { code: 'internal_error', message: 'The import failed because of an internal error.', line: null };
      finish(report, warnings, started, csv);
      await store.failImport(job.id, report.error.message, report);
      throw err;
    }
    report.status = 'failed';
    finish(report, warnings, started, csv);
    await store.failImport(job.id, report.error.message, report);
    return report;
  }
}

function finish(report: ImportReport, warnings: Warnings, started: number, csv: CsvFile | null) {
  report.warnings = { count: warnings.total, items: warnings.items };
  report.duration_ms = Date.now() - started;
  if (csv) report.encoding = csv.encoding;
}
