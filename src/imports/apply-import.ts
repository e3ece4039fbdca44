/**
 * Applies one claimed import: reads the stored upload, maps and normalises
 * each row, writes a new snapshot and publishes it — or fails the import,
 * leaving the live snapshot untouched. Never throws for a bad file: the
 * outcome is in the returned report.
 */
import { snapshotSpec, stageBatch } from '../snapshots/write-records.js';
import { DuplicateIdError, StoreUnavailableError, type ImportJob, type StagedRecord, type Store } from '../store/store.js';
import { guardTrips, previousCount, readGuard } from './deletion-guard.js';
import { ImportError } from './import-error.js';
import type { ImportReport } from './import-report.js';
import { Warnings } from './normalise.js';
import { openUploadRows, type UploadRowSource } from './upload-rows.js';
import { openUploadRowsInThread } from './upload-thread.js';

/**
 * Uploads at least this large are parsed and rendered in a thread of their own
 * (upload-thread.ts) while this one hashes and writes: starting a thread costs
 * tens of milliseconds, which only pays off on files of a few MiB.
 */
export const THREAD_FROM_BYTES = 4 * 1024 * 1024;
/**
 * The parsing thread, where the writer bounds an import (Store's
 * `writerBoundsImport`, PostgreSQL), hashes the bodies too (then MD5, ~0.7 s
 * of CPU per 100,000 customers): 100,000 customers, 3 interleaved rounds, 4.52-
 * 4.66 s -> 4.16-4.42 s. And its young generation is capped, since the writer
 * holds more memory (COPY buffers, the pg connection): 1,430,000 rows (1 GiB),
 * peak RSS 292 -> 254 MB for the same wall time. Where the parser bounds the
 * import (SQLite), both slow it: hashing there cost 0.3-0.5 s and the cap
 * ~20%, so neither is done.
 */
const WRITER_BOUND_PARSING = { youngGenerationMb: 8 };

export interface ApplyOptions {
  /** Called after each batch with rows and raw bytes read so far. */
  onProgress?: (rowsRead: number, bytesRead: number) => void | Promise<void>;
  maxCellBytes?: number;
  /** How long tombstones of removed records are kept. */
  tombstoneRetentionMs?: number;
  /** Parse in a thread of its own from this many bytes on (default THREAD_FROM_BYTES). */
  threadFromBytes?: number;
}

export async function applyImport(store: Store, job: ImportJob, options: ApplyOptions = {}): Promise<ImportReport> {
  const started = Date.now();
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
  let rows: UploadRowSource | null = null;
  try {
    const upload = { kind: job.kind, override: await store.getMapping(job.companyId, job.kind), maxCellBytes: options.maxCellBytes };
    // Hashed as the live snapshot was, so that its unchanged records are found.
    const hashAlgorithm = await store.nextHashAlgorithm(job.companyId, job.kind);
    const source = store.readImportFile(job.id);
    rows = job.sizeBytes >= (options.threadFromBytes ?? THREAD_FROM_BYTES)
      ? await openUploadRowsInThread(source, upload, store.writerBoundsImport ? { ...WRITER_BOUND_PARSING, hashHere: hashAlgorithm } : {})
      : await openUploadRows(source, upload);
    const { head } = rows;
    report.encoding = head.encoding;
    report.delimiter = head.delimiter;
    report.columns = head.columns.length;
    report.mapping = head.mapping;
    const rendered = rows;
    async function* staged(): AsyncGenerator<StagedRecord[]> {
      for await (const batch of rendered.batches()) {
        report.rows_read = batch.rowsRead;
        warnings.items.push(...batch.newWarnings);
        warnings.total = batch.warningsTotal;
        await options.onProgress?.(batch.rowsRead, batch.bytesRead);
        yield stageBatch(batch, hashAlgorithm);
      }
    }
    const snapshot = await store.writeSnapshot(
      snapshotSpec({ companyId: job.companyId, kind: job.kind, columns: head.columns, at: started, importId: job.id }, hashAlgorithm),
      staged(),
    );
    Object.assign(report, {
      inserted: snapshot.changes.inserted,
      updated: snapshot.changes.updated,
      unchanged: snapshot.changes.unchanged,
      deleted: snapshot.changes.deleted,
      deleted_examples: snapshot.changes.deletedExamples,
      status: 'succeeded',
    });
    const guard = await readGuard(store, job.companyId);
    if (guardTrips(guard, snapshot.changes)) {
      report.status = 'awaiting_confirmation';
      report.guard = {
        would_remove: snapshot.changes.deleted,
        of: previousCount(snapshot.changes),
        min_records: guard.minRecords,
        max_fraction: guard.maxFraction,
      };
      finish(report, warnings, started, rows);
      await store.holdImport(job.id, snapshot.snapshotId, report);
      return report;
    }
    finish(report, warnings, started, rows);
    await store.publishSnapshot(snapshot.snapshotId, { importId: job.id, report }, { tombstoneRetentionMs: options.tombstoneRetentionMs });
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
      finish(report, warnings, started, rows);
      await store.failImport(job.id, report.error.message, report);
      throw err;
    }
    report.status = 'failed';
    finish(report, warnings, started, rows);
    await store.failImport(job.id, report.error.message, report);
    return report;
  }
}

function finish(report: ImportReport, warnings: Warnings, started: number, rows: UploadRowSource | null) {
  report.warnings = { count: warnings.total, items: warnings.items };
  report.duration_ms = Date.now() - started;
  if (rows) report.encoding = rows.encoding();
}
