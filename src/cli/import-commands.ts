import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { isKind, KINDS, type Kind } from '../domain/kinds.js';
import { ImportWorker } from '../imports/import-worker.js';
import type { PreparedImport } from '../imports/apply-import.js';
import { discard, queueLocalFile } from '../imports/prepared-import.js';
import { confirmHeldImport, HeldImportError, rejectHeldImport } from '../imports/held-imports.js';
import type { ImportReport } from '../imports/import-report.js';
import { listNames, quoteName } from '../imports/import-error.js';
import { announcedSize, CorruptUploadError, isGzipName, plainUpload } from '../imports/compressed-upload.js';
import { UploadTooLargeError, type ImportJob, type Store } from '../store/store.js';
import { uploadAudit } from '../domain/audit.js';
import { CliError, cliWho, emit, iso, requireCompany, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

const FINAL = new Set(['succeeded', 'failed', 'awaiting_confirmation', 'rejected']);
/** `mirador import`'s exit code when the import is held for confirmation (contract §3). */
export const EXIT_HELD = 3;

export function requireKind(kind: string): Kind {
  if (!isKind(kind)) throw new CliError(`"${kind}" is not a kind: use one of ${KINDS.join(', ')}.`);
  return kind;
}

export function registerImportCommands(program: Command, ctx: CliContext) {
  program
    .command('import')
    .description('queue a CSV export for import, wait for it with a progress bar and print the report')
    .argument('<slug>', 'company')
    .argument('<kind>', KINDS.join(' | '))
    .argument('<file>', 'the CSV file, or a gzip-compressed one (file.csv.gz)')
    .option('--no-wait', 'return as soon as the file is queued')
    .option('--json', 'print the report (or, with --no-wait, the queued import) as JSON')
    .action(async (slug: string, kindArg: string, file: string, opts: JsonOption & { wait: boolean }) => {
      const kind = requireKind(kindArg);
      let size: number;
      try {
        const st = statSync(file);
        if (!st.isFile()) throw new Error('not a file');
        size = st.size;
      } catch {
        throw new CliError(`Cannot read the file "${file}".`);
      }
      const gzipped = isGzipName(file);
      // A compressed file is bounded by its decompressed size, which the store counts as it stores it.
      if (gzipped) size = gzipTotal(file, size);
      else if (size > ctx.config.maxUploadBytes) {
        throw new CliError(`"${file}" is ${size} bytes, over MAX_UPLOAD_BYTES (${ctx.config.maxUploadBytes}).`);
      }
      const open = () => plainUpload(createReadStream(file, { highWaterMark: READ_BYTES }), gzipped);
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const progress = opts.wait ? new Progress(size) : null;
        let queued: Awaited<ReturnType<typeof queueLocalFile>>;
        try {
          // Waiting, the command prepares the import while it stores the file (where the store can).
          queued = await queueLocalFile(
            store,
            {
              companyId: company.id,
              kind,
              filename: basename(file),
              source: 'cli',
              sizeBytes: size,
              open,
              audit: uploadAudit(cliWho(), company.id, kind, basename(file), 'cli'),
            },
            ctx.config.maxUploadBytes,
            { prepare: opts.wait, apply: { onProgress: (rows, bytes) => progress?.reading(rows, bytes) } },
          );
        } catch (err) {
          progress?.stop();
          if (err instanceof UploadTooLargeError) {
            throw new CliError(`"${file}" is over MAX_UPLOAD_BYTES (${ctx.config.maxUploadBytes} bytes${gzipped ? ', decompressed' : ''}): nothing was stored.`);
          }
          if (err instanceof CorruptUploadError) throw new CliError(`"${file}": ${err.message}`);
          throw err;
        }
        const { job } = queued;
        if (!opts.wait) {
          emit(ctx, opts, importJson(job), () => `Queued import ${job.id} of ${kind} for ${company.slug} (${job.sizeBytes} bytes).`);
          return;
        }
        const done = await waitForImport(ctx, store, job, progress!, queued.prepared);
        const report = done.report as ImportReport | null;
        if (opts.json) ctx.out(JSON.stringify(report ?? importJson(done), null, 2));
        else ctx.out(describeReport(company.slug, done, report));
        if (done.status === 'awaiting_confirmation') {
          // Not applied: an unattended script must not take it for success (contract §3).
          if (!opts.json) ctx.err(`mirador: import ${done.id} of ${kind} for ${company.slug} is held for confirmation; the previous data keeps serving.`);
          process.exitCode = EXIT_HELD;
        } else if (done.status !== 'succeeded') {
          if (!opts.json) ctx.err(`mirador: import ${done.id} ${done.status}: ${done.error ?? ''}`.trimEnd());
          process.exitCode = 1;
        }
      });
    });

  program
    .command('imports')
    .description("a company's import history, newest first; or confirm/reject an import held for confirmation by a guard (mass deletion, column drift)")
    .argument('<slug>', 'company')
    .argument('[action]', 'confirm | reject')
    .argument('[id]', 'the held import')
    .option('--kind <kind>', 'only this kind')
    .option('--limit <n>', 'how many', '50')
    .option('--json', 'print JSON')
    .action(async (slug: string, action: string | undefined, idArg: string | undefined, opts: JsonOption & { kind?: string; limit: string }) => {
      if (action !== undefined) return decideHeld(ctx, slug, action, idArg, opts);
      const kind = opts.kind === undefined ? undefined : requireKind(opts.kind);
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliError('--limit must be an integer from 1 to 1000.');
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const jobs = await store.listImports(company.id, kind, limit);
        emit(ctx, opts, jobs.map(importJson), () =>
          jobs.length === 0
            ? `No imports for ${company.slug} yet.`
            : table([
                ['ID', 'KIND', 'STATUS', 'FILE', 'ROWS', 'CREATED', 'ERROR'],
                ...jobs.map((j) => [String(j.id), j.kind, j.status, j.filename, String(j.rowsRead), iso(j.createdAt)!, j.error ?? '']),
              ]),
        );
      });
    });
}

async function decideHeld(ctx: CliContext, slug: string, action: string, idArg: string | undefined, opts: JsonOption) {
  if (action !== 'confirm' && action !== 'reject') throw new CliError(`Unknown action "${action}": use confirm or reject.`);
  const id = Number(idArg);
  if (!idArg || !Number.isInteger(id) || id < 1) throw new CliError(`mirador imports ${slug} ${action} needs the import id.`);
  await withStore(ctx, async (store) => {
    const company = await requireCompany(store, slug);
    try {
      const report =
        action === 'confirm'
          ? await confirmHeldImport(store, company.id, id, ctx.config.tombstoneRetentionMs, cliWho())
          : await rejectHeldImport(store, company.id, id, cliWho());
      emit(ctx, opts, report, () =>
        action === 'confirm'
          ? `Import ${id} confirmed: ${report.deleted} records removed, the new data is live.`
          : `Import ${id} rejected: the previous data stays.`,
      );
    } catch (err) {
      if (err instanceof HeldImportError) throw new CliError(err.message);
      throw err;
    }
  });
}

export function importJson(j: ImportJob) {
  return {
    id: j.id,
    kind: j.kind,
    status: j.status,
    filename: j.filename,
    size_bytes: j.sizeBytes,
    source: j.source,
    created_at: iso(j.createdAt),
    started_at: iso(j.startedAt),
    finished_at: iso(j.finishedAt),
    rows_read: j.rowsRead,
    error: j.error,
    report: j.report,
  };
}

/**
 * The file is read 1 MiB at a time, as the stores keep uploads. The parsing thread asks
 * for the next piece only a couple ahead (upload-thread.ts): with the stream's 64 KiB
 * pieces it waited on the importing thread, busy writing, and the import of 100,000
 * customers took 2.81-2.97 s instead of 2.56-2.71 s (PostgreSQL, 5 interleaved rounds).
 */
const READ_BYTES = 1024 * 1024;

/**
 * The decompressed size a `.gz` file announces (its gzip trailer), for the progress bar and the
 * choice of a parsing thread; the compressed size when it announces nothing usable.
 */
function gzipTotal(file: string, compressedSize: number): number {
  if (compressedSize < 18) return compressedSize;
  const fd = openSync(file, 'r');
  try {
    const trailer = Buffer.alloc(4);
    readSync(fd, trailer, 0, 4, compressedSize - 4);
    return Math.max(announcedSize(trailer) ?? 0, compressedSize);
  } finally {
    closeSync(fd);
  }
}

/**
 * Waits for an import to end, applying queued imports in this process while
 * it waits (a running server may take it first; then this only watches).
 */
async function waitForImport(
  ctx: CliContext,
  store: Store,
  queued: ImportJob,
  progress: Progress,
  prepared: PreparedImport | null,
): Promise<ImportJob> {
  const worker = new ImportWorker(store, {
    snapshotRetentionMs: ctx.config.snapshotRetentionMs,
    tombstoneRetentionMs: ctx.config.tombstoneRetentionMs,
    auditRetentionMs: ctx.config.auditRetentionMs,
    uploadRetentionMs: ctx.config.uploadRetentionMs,
    // No gzip segments here: the command ends at publication, and a serving process's import
    // worker makes them (ImportWorker's makeSegments).
  });
  const timer = setInterval(() => {
    void store.importById(queued.id).then((j) => j && progress.update(j), () => {});
  }, 250);
  try {
    for (;;) {
      const job = (await store.importById(queued.id))!;
      if (FINAL.has(job.status)) {
        progress.update(job);
        return job;
      }
      if (job.status === 'queued') {
        const ran = await worker.runOnce(prepared);
        // Used, or found stale and discarded, once its import is claimed here.
        if (ran?.job.id === queued.id) prepared = null;
        if (ran) continue;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    clearInterval(timer);
    progress.stop();
    // Another process applied the import: what was prepared here is not needed.
    await discard(store, prepared).catch(() => {});
  }
}

/** Rows, MB/s and ETA on stderr: a bar on a terminal, a plain line a second otherwise. */
class Progress {
  private readonly bar: SingleBar | null;
  private readonly started = Date.now();
  private lastLine = 0;
  private ended = false;
  private local: { rowsRead: number; bytesRead: number } | null = null;

  constructor(private readonly total: number) {
    this.bar = process.stderr.isTTY
      ? new SingleBar({
          stream: process.stderr,
          format: 'import [{bar}] {percentage}% | {rows} rows | {speed} MB/s | ETA {eta_formatted}',
          hideCursor: true,
        })
      : null;
    this.bar?.start(Math.max(total, 1), 0, { rows: 0, speed: '0.0' });
  }

  /** Progress of an import prepared while its upload is stored (its job is not running yet). */
  reading(rowsRead: number, bytesRead: number) {
    this.local = { rowsRead, bytesRead };
    this.update({ id: 0, status: 'running', rowsRead, bytesRead });
  }

  update(polled: Pick<ImportJob, 'id' | 'status' | 'rowsRead' | 'bytesRead'>) {
    // The final line once: the 250 ms timer and the waiting loop may both see the import ended.
    if (this.ended) return;
    // While it is prepared here, the job itself reports nothing yet.
    const job = this.local && !FINAL.has(polled.status) && polled.status !== 'running' ? { ...polled, ...this.local, status: 'running' } : polled;
    if (FINAL.has(job.status)) this.ended = true;
    const seconds = Math.max((Date.now() - this.started) / 1000, 0.001);
    const bytes = FINAL.has(job.status) && job.status === 'succeeded' ? this.total : job.bytesRead;
    const speed = (bytes / 1e6 / seconds).toFixed(1);
    if (this.bar) {
      this.bar.update(bytes, { rows: job.rowsRead, speed });
      return;
    }
    const now = Date.now();
    if (now - this.lastLine < 1000 && !FINAL.has(job.status)) return;
    this.lastLine = now;
    const pct = this.total > 0 ? Math.floor((100 * bytes) / this.total) : 100;
    const rate = bytes / seconds;
    const eta = rate > 0 ? Math.ceil((this.total - bytes) / rate) : 0;
    process.stderr.write(`import${job.id ? ` ${job.id}` : ''}: ${job.status} ${pct}% ${job.rowsRead} rows ${speed} MB/s ETA ${eta}s\n`);
  }

  stop() {
    this.bar?.stop();
  }
}

function describeReport(slug: string, job: ImportJob, report: ImportReport | null): string {
  if (!report) return `Import ${job.id}: ${job.status}${job.error ? ` — ${job.error}` : ''}`;
  // What was found of the file's shape: nothing of it when the header could not be read.
  const shape = [
    report.columns > 0 ? `${report.columns} columns` : null,
    report.encoding,
    report.delimiter === null ? null : `delimiter ${report.delimiter === '\t' ? 'tab' : JSON.stringify(report.delimiter)}`,
    `${report.duration_ms} ms`,
  ];
  const lines = [
    `Import ${report.import_id} of ${report.kind} (${report.filename}): ${report.status}`,
    `  rows read ${report.rows_read}, inserted ${report.inserted}, updated ${report.updated}, unchanged ${report.unchanged}, deleted ${report.deleted}`,
    `  ${shape.filter((part) => part !== null).join(', ')}`,
  ];
  if (report.unchanged_snapshot) lines.push('  nothing changed: the live snapshot was kept as it was (not rewritten; ETags stay valid).');
  const fields = Object.entries(report.mapping);
  if (fields.length > 0) {
    lines.push('  mapping (field <- column):');
    const width = Math.max(...fields.map(([field]) => field.length));
    for (const [field, column] of fields) lines.push(`    ${field.padEnd(width)} <- ${column === null ? '(no column)' : JSON.stringify(column)}`);
  }
  if (report.warnings.count > 0) {
    lines.push(`  ${report.warnings.count} warnings:`);
    // Each message names its line already.
    for (const w of report.warnings.items.slice(0, 20)) lines.push(`    ${w.message}`);
    if (report.warnings.count > 20) lines.push(`    … and ${report.warnings.count - 20} more (--json lists the first ${report.warnings.items.length})`);
  }
  if (report.status === 'awaiting_confirmation') {
    lines.push('  held for confirmation: the previous data keeps serving until it is decided.');
    if (report.guard) {
      const examples = report.deleted_examples.length > 0 ? ` (e.g. ${report.deleted_examples.join(', ')})` : '';
      lines.push(`  - it would remove ${report.guard.would_remove} of ${report.guard.of} records${examples}.`);
    }
    const drift = report.column_drift;
    if (drift) {
      lines.push(
        `  - its header shares ${drift.shared} of its ${drift.columns} column names with the live data's ${drift.live_columns}:`,
        `    appeared ${namesOrNone(drift.appeared, drift.appeared_count)};`,
        `    disappeared ${namesOrNone(drift.disappeared, drift.disappeared_count)}.`,
      );
    }
    const other = report.other_kind;
    if (other) {
      const fit = (kind: string) => {
        const fed = other.fits[kind]?.fed ?? 0;
        return `${kind}: ${fed} ${fed === 1 ? 'field' : 'fields'} fed, ${other.fits[kind]?.unfed ?? 0} unfed`;
      };
      lines.push(`  - it looks like an export of ${other.kind}, not ${report.kind} (${fit(other.kind)}; ${fit(report.kind)}).`);
    }
    lines.push(`  Confirm with "mirador imports ${slug} confirm ${report.import_id}" or reject with "mirador imports ${slug} reject ${report.import_id}".`);
  }
  if (report.error) lines.push(`  error: ${report.error.message}`);
  return lines.join('\n');
}

/** `"A", "B" and 3 more` (of `count` names, `names` the first of them), or `none`. */
function namesOrNone(names: readonly string[], count: number): string {
  if (count === 0) return 'none';
  const shown = names.slice(0, 20);
  const more = count - shown.length;
  return more > 0 ? `${shown.map(quoteName).join(', ')} and ${more} more` : listNames(shown);
}
