/**
 * Applies one claimed import: reads the stored upload, maps and normalises
 * each row, writes a new snapshot and publishes it — or, when the file
 * changes nothing, keeps the live snapshot (`unchanged_snapshot`) — or fails
 * the import, leaving the live snapshot untouched. Never throws for a bad file: the
 * outcome is in the returned report.
 */
import type { HashAlgorithm } from '../domain/item-renderer.js';
import { snapshotSpec, stageBatch } from '../snapshots/write-records.js';
import { DuplicateIdError, StoreUnavailableError, type ImportJob, type StagedRecord, type StagedSnapshot, type Store } from '../store/store.js';
import type { MappingOverride } from './column-mapping.js';
import { columnDrift, otherKind } from './column-guard.js';
import { guardTrips, previousCount, readGuard } from './deletion-guard.js';
import { ImportError } from './import-error.js';
import type { ImportReport } from './import-report.js';
import { Warnings } from './normalise.js';
import { openUploadRows } from './upload-rows.js';
import { openUploadRowsInThread, type ThreadOptions } from './upload-thread.js';

/**
 * Uploads at least this large are parsed and rendered in a thread of their own
 * (upload-thread.ts) while this one hashes and writes: starting a thread costs
 * tens of milliseconds, which only pays off on files of a few MiB.
 */
export const THREAD_FROM_BYTES = 4 * 1024 * 1024;
/**
 * Where the writer holds much memory (Store's `heavyImportWriter`,
 * PostgreSQL: COPY buffers, the pg connection), the parsing thread's young
 * generation is capped: 1,430,000 rows (1 GiB), peak RSS 292 -> 254 MB for
 * the same wall time, with 8 MB. Since chunks are laid out in one reused
 * buffer the writer holds less, and 16 MB buys back the thread's time in
 * scavenges: `mirador import` of 100,000 customers, 5 interleaved rounds,
 * 2.66-2.90 s (8 MB) -> 2.54-2.74 s (16 MB; 32 MB was no faster). On SQLite
 * the cap cost the parser ~20%.
 */
const HEAVY_WRITER_PARSING = { youngGenerationMb: 16 };

export interface ApplyOptions {
  /** Called after each batch with rows and raw bytes read so far. */
  onProgress?: (rowsRead: number, bytesRead: number) => void | Promise<void>;
  maxCellBytes?: number;
  /** How long tombstones of removed records are kept. */
  tombstoneRetentionMs?: number;
  /** Parse in a thread of its own from this many bytes on (default THREAD_FROM_BYTES). */
  threadFromBytes?: number;
}

/** Who an import is for, and the upload's size. */
type ImportTarget = Pick<ImportJob, 'id' | 'companyId' | 'kind' | 'filename' | 'sizeBytes'>;

/** An import in progress: its report so far, its warnings, and when it began. */
interface Progress {
  report: ImportReport;
  warnings: Warnings;
  started: number;
  /** Raw bytes of the upload read so far. */
  bytesRead: number;
  /** The file's encoding as the parser ended up reading it. */
  encoding: (() => string) | null;
  /** The header's column names. */
  columns: readonly string[];
}

function begin(target: ImportTarget): Progress {
  const warnings = new Warnings();
  return {
    started: Date.now(),
    bytesRead: 0,
    warnings,
    encoding: null,
    columns: [],
    report: {
      import_id: target.id,
      kind: target.kind,
      filename: target.filename,
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
      column_drift: null,
      other_kind: null,
      unchanged_snapshot: false,
      chunks: null,
      warnings: { count: 0, items: warnings.items },
      bytes: target.sizeBytes,
      duration_ms: 0,
      error: null,
    },
  };
}

export async function applyImport(store: Store, job: ImportJob, options: ApplyOptions = {}): Promise<ImportReport> {
  const progress = begin(job);
  try {
    const override = await store.getMapping(job.companyId, job.kind);
    const snapshot = await writeImport(store, job, store.readImportFile(job.id), override, options, progress);
    return await conclude(store, job, snapshot, options, progress);
  } catch (err) {
    return fail(store, job, err, progress);
  }
}

/**
 * How the parsing thread runs for this import. It hashes the bodies too in a
 * first import, where the writer lays out every record as it arrives and is
 * the slower half, on both stores. A re-import leaves hashing to the writer:
 * it writes less (SQLite stages only new and changed bodies, PostgreSQL
 * stages ids and hashes and puts bodies in a file) and has time to spare
 * while the parser is the slower. 100,000 customers by `mirador import`,
 * interleaved rounds, apply medians, hashing in the thread against in the
 * writer: SQLite first import 2.70 against 3.04 s, 1% re-import 3.01
 * against 2.65 s (5 rounds); PostgreSQL first import 4.19 against 4.39 s
 * (6 rounds), 1% re-import 4.26 against 3.95 s (8 rounds).
 */
export async function parsingThreadOptions(store: Store, target: ImportTarget, hashAlgorithm: HashAlgorithm): Promise<ThreadOptions> {
  const first = (await store.liveSnapshotId(target.companyId, target.kind)) === null;
  return { ...(store.heavyImportWriter ? HEAVY_WRITER_PARSING : {}), ...(first ? { hashHere: hashAlgorithm } : {}) };
}

/**
 * Parses an upload and writes its snapshot, unpublished, filling the report
 * (the file's shape, its rows and warnings, the changes).
 */
async function writeImport(
  store: Store,
  target: ImportTarget,
  source: AsyncIterable<Buffer>,
  override: MappingOverride,
  options: ApplyOptions,
  progress: Progress,
): Promise<StagedSnapshot> {
  const { report, warnings } = progress;
  const upload = { kind: target.kind, override, maxCellBytes: options.maxCellBytes };
  // Hashed as the live snapshot was, so that its unchanged records are found.
  const hashAlgorithm = await store.nextHashAlgorithm(target.companyId, target.kind);
  const rows = target.sizeBytes >= (options.threadFromBytes ?? THREAD_FROM_BYTES)
    ? await openUploadRowsInThread(source, upload, await parsingThreadOptions(store, target, hashAlgorithm))
    : await openUploadRows(source, upload);
  progress.encoding = rows.encoding;
  const { head } = rows;
  report.encoding = head.encoding;
  report.delimiter = head.delimiter;
  report.columns = head.columns.length;
  report.mapping = head.mapping;
  progress.columns = head.columns;
  async function* staged(): AsyncGenerator<StagedRecord[]> {
    for await (const batch of rows.batches()) {
      report.rows_read = batch.rowsRead;
      progress.bytesRead = batch.bytesRead;
      warnings.items.push(...batch.newWarnings);
      warnings.total = batch.warningsTotal;
      await options.onProgress?.(batch.rowsRead, batch.bytesRead);
      yield stageBatch(batch, hashAlgorithm);
    }
  }
  const snapshot = await store.writeSnapshot(
    {
      ...snapshotSpec({ companyId: target.companyId, kind: target.kind, columns: head.columns, at: progress.started, importId: target.id }, hashAlgorithm),
      keepLiveWhenUnchanged: true,
    },
    staged(),
  );
  Object.assign(report, {
    inserted: snapshot.changes.inserted,
    updated: snapshot.changes.updated,
    unchanged: snapshot.changes.unchanged,
    deleted: snapshot.changes.deleted,
    deleted_examples: snapshot.changes.deletedExamples,
    chunks: snapshot.layout ? { written: snapshot.layout.chunksWritten, shared: snapshot.layout.chunksShared } : null,
  });
  return snapshot;
}

/**
 * The guards (mass deletion, column drift), then holding the snapshot for
 * confirmation when any of them trips, or publishing it.
 */
async function conclude(
  store: Store,
  job: ImportJob,
  snapshot: StagedSnapshot,
  options: ApplyOptions,
  progress: Progress,
): Promise<ImportReport> {
  const { report } = progress;
  report.status = 'succeeded';
  if (snapshot.keptLive) {
    // Nothing changed: no guard can trip (nothing removed, the live columns), nothing is published.
    report.unchanged_snapshot = true;
    await finish(store, job, progress);
    await store.keepLiveSnapshot(snapshot.snapshotId, { importId: job.id, report });
    return report;
  }
  const guard = await readGuard(store, job.companyId);
  if (guardTrips(guard, snapshot.changes)) {
    report.guard = {
      would_remove: snapshot.changes.deleted,
      of: previousCount(snapshot.changes),
      min_records: guard.minRecords,
      max_fraction: guard.maxFraction,
    };
  }
  // Compared with the snapshot the records were: the live one, since imports of a kind run one at a time.
  const live = snapshot.previousId === null ? null : await store.snapshotMeta(snapshot.previousId);
  if (live !== null && live.count > 0) report.column_drift = columnDrift(live.columns, progress.columns);
  else report.other_kind = otherKind(job.kind, progress.columns, report.mapping);
  if (report.guard || report.column_drift || report.other_kind) {
    report.status = 'awaiting_confirmation';
    await finish(store, job, progress);
    await store.holdImport(job.id, snapshot.snapshotId, report);
    return report;
  }
  await finish(store, job, progress);
  await store.publishSnapshot(snapshot.snapshotId, { importId: job.id, report }, { tombstoneRetentionMs: options.tombstoneRetentionMs });
  return report;
}

/** Ends the import as failed, with the file's fault in its report; rethrows what is not the file's fault. */
async function fail(store: Store, job: ImportJob, err: unknown, progress: Progress): Promise<ImportReport> {
  const { report } = progress;
  report.status = 'failed';
  if (err instanceof ImportError) {
    report.error = { code: err.code, message: err.message, line: err.line ?? null };
  } else if (err instanceof DuplicateIdError) {
    report.error = { code: 'duplicate_id', message: err.message, line: err.duplicates[0]?.line ?? null };
  } else if (err instanceof StoreUnavailableError) {
    throw err; // not the file's fault: the worker retries the import later
  } else {
    report.error = { code: 'internal_error', message: 'The import failed because of an internal error.', line: null };
    await finish(store, job, progress);
    await store.failImport(job.id, report.error.message, report);
    throw err;
  }
  await finish(store, job, progress);
  await store.failImport(job.id, report.error.message, report);
  return report;
}

/**
 * Completes the report, and the job's own count of rows read, exact at the
 * end however the import ends (heartbeats are throttled; a prepared import
 * sent none).
 */
async function finish(store: Store, job: ImportJob, { report, warnings, started, encoding, bytesRead }: Progress) {
  report.warnings = { count: warnings.total, items: warnings.items };
  report.duration_ms = Date.now() - started;
  if (encoding) report.encoding = encoding();
  await store.heartbeatImport(job.id, { rowsRead: report.rows_read, bytesRead: report.status === 'failed' ? bytesRead : job.sizeBytes });
}

/**
 * An import parsed and written while its upload was still being stored (see
 * `mirador import`, cli/import-commands.ts, and `serve`'s import process,
 * upload-preparation.ts): the snapshot is written but
 * neither published nor held. `applyPreparedImport` concludes it once the
 * import is claimed, if nothing it depends on changed meanwhile.
 */
export interface PreparedImport {
  importId: number;
  snapshot: StagedSnapshot;
  /** The mapping override it was parsed with. */
  override: MappingOverride;
  progress: Progress;
}

/**
 * Parses `source` (the same bytes as the upload of import `target.id`, which
 * may still be being stored) and writes its snapshot, unpublished. Throws
 * whatever `applyImport` would report: the caller then leaves the import to
 * the queue, which applies it from the stored upload and reports the error.
 */
export async function prepareImport(
  store: Store,
  target: ImportTarget,
  source: AsyncIterable<Buffer>,
  options: ApplyOptions = {},
): Promise<PreparedImport> {
  const progress = begin(target);
  const override = await store.getMapping(target.companyId, target.kind);
  const snapshot = await writeImport(store, target, source, override, options, progress);
  return { importId: target.id, snapshot, override, progress };
}

/**
 * Concludes claimed import `job` with what `prepareImport` wrote for it, if
 * that still stands: compared with the snapshot that is still live, parsed
 * with the mapping still in force. Otherwise discards the prepared snapshot
 * and returns null: the caller applies `job` as usual. `prepared` must be
 * `job`'s (ImportWorker's `runOnce` keeps another import's for later).
 */
export async function applyPreparedImport(
  store: Store,
  job: ImportJob,
  prepared: PreparedImport,
  options: ApplyOptions = {},
): Promise<ImportReport | null> {
  if (job.id !== prepared.importId) throw new Error(`import ${prepared.importId} was prepared, not ${job.id}`);
  const stands =
    (await store.liveSnapshotId(job.companyId, job.kind)) === prepared.snapshot.previousId &&
    sameMapping(await store.getMapping(job.companyId, job.kind), prepared.override);
  if (!stands) {
    if (!prepared.snapshot.keptLive) await store.discardSnapshot(prepared.snapshot.snapshotId);
    return null;
  }
  // The stored size: a preparation may have begun before it was known (imports/upload-preparation.ts).
  prepared.progress.report.bytes = job.sizeBytes;
  try {
    return await conclude(store, job, prepared.snapshot, options, prepared.progress);
  } catch (err) {
    return fail(store, job, err, prepared.progress);
  }
}

function sameMapping(a: MappingOverride, b: MappingOverride): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
