/**
 * An import prepared by `serve`'s import process while the HTTP process is
 * still storing its upload, where the store can write a snapshot meanwhile
 * (Store's `writesWhileStoring`, PostgreSQL): what `mirador import` does with
 * its file (prepared-import.ts), for uploads through the server. The HTTP
 * process names the import as soon as it has an id; the import worker
 * (import-worker.ts, `prepare`) parses and writes the blobs as they are
 * committed (`Store.readReceivingUpload`), unpublished, and concludes the
 * import with that once it claims it (`applyPreparedImport`, which checks
 * that nothing it depended on changed). Unlike the CLI's second read of a
 * file, this reads the stored upload itself: there is nothing to compare.
 *
 * A preparation that fails (a broken file, an upload cut off) is not used:
 * the queue applies the import from the store and reports the error exactly
 * as it would have. One aborted or left unused is discarded: a failed
 * `writeSnapshot` leaves nothing behind, and `discard` removes a written one.
 */
import type { Store } from '../store/store.js';
import { prepareImport, type ApplyOptions, type PreparedImport } from './apply-import.js';
import { discard } from './prepared-import.js';

/**
 * A preparation that has received no blob for this long is given up: the
 * HTTP process storing the upload may have died mid-way, leaving the import
 * `receiving` for good, and while a preparation runs the worker makes no
 * gzip segments and packs no upload. A slow client loses only the overlap.
 */
export const PREPARE_STALL_MS = 60_000;

/**
 * Nor does one still waiting for its upload this long after it began: the
 * snapshot it writes is one PostgreSQL transaction, and a transaction held
 * open for a slow client's hours would hold back vacuum across the database.
 * At 1 Gbit/s a 1 GiB upload is stored in seconds; a client slower than that
 * has its import applied once stored, as without a preparation.
 */
export const PREPARE_MAX_MS = 10 * 60_000;

export class UploadPreparation {
  private readonly stop = new AbortController();
  private readonly result: Promise<PreparedImport | null>;
  private ended = false;
  private readonly startedAt = Date.now();
  /** Since when the parse has been waiting for the upload's next blob (null: it is not). */
  private waitingSince: number | null = null;
  /** Bytes of the upload handed to the parser so far. */
  bytesRead = 0;
  /** Where the parse reports progress: the worker's heartbeat, once it has claimed the import. */
  onProgress: ApplyOptions['onProgress'];
  /** The worker saw its import queued, after this ended, and has not claimed it yet (see ImportWorker). */
  seenQueued = false;

  /**
   * Begins preparing import `importId`. `declaredBytes`: the size its client
   * announced (a plain body's Content-Length), or null.
   */
  constructor(
    private readonly store: Store,
    readonly importId: number,
    declaredBytes: number | null,
    options: Pick<ApplyOptions, 'threadFromBytes' | 'maxCellBytes'> = {},
    /** PREPARE_STALL_MS and PREPARE_MAX_MS unless given (tests). */
    private readonly limits = { stallMs: PREPARE_STALL_MS, maxMs: PREPARE_MAX_MS },
  ) {
    this.result = this.prepare(declaredBytes, options).then(
      (prepared) => prepared,
      // Not used, whatever the cause: the queue applies the import from the store and says why.
      () => null,
    );
    void this.result.then(() => (this.ended = true));
  }

  get running(): boolean {
    return !this.ended;
  }

  /**
   * Whether it waits for the upload's next blob, and has waited longer than
   * PREPARE_STALL_MS for it, or began more than PREPARE_MAX_MS ago: the
   * worker then gives it up.
   */
  stalled(now = Date.now()): boolean {
    if (this.ended || this.waitingSince === null) return false;
    return now - this.waitingSince > this.limits.stallMs || now - this.startedAt > this.limits.maxMs;
  }

  /** What was prepared, once it ends: null when it failed, was aborted, or had nothing to prepare. Never rejects. */
  outcome(): Promise<PreparedImport | null> {
    return this.result;
  }

  /** Asks it to stop: the upload's reader throws at once, and the parse and the write end with it. */
  abort(): void {
    this.stop.abort();
  }

  /** Aborts it, waits for it to end and discards what it wrote. */
  async giveUp(): Promise<void> {
    this.abort();
    await discard(this.store, await this.result);
  }

  private async prepare(declaredBytes: number | null, options: Pick<ApplyOptions, 'threadFromBytes' | 'maxCellBytes'>) {
    const job = await this.store.importById(this.importId);
    // Gone (cut off), or claimed already: the queue has it.
    if (!job || (job.status !== 'receiving' && job.status !== 'queued')) return null;
    const target = { id: job.id, companyId: job.companyId, kind: job.kind, filename: job.filename, sizeBytes: declaredBytes ?? 0 };
    return prepareImport(this.store, target, this.blobs(), {
      maxCellBytes: options.maxCellBytes,
      // The size decides whether the CSV is parsed in a thread (apply-import.ts), and it is only
      // known once stored: the client's word for it when it gave one (a plain body's length, or
      // a form's, a few hundred bytes over its file), else the thread. On a small file the
      // thread costs tens of milliseconds; without it, a large one would lose the overlap of
      // parsing and writing that makes its import fast.
      threadFromBytes: declaredBytes === null ? 0 : options.threadFromBytes,
      onProgress: (rowsRead, bytesRead) => this.onProgress?.(rowsRead, bytesRead),
    });
  }

  private async *blobs(): AsyncGenerator<Buffer> {
    const upload = this.store.readReceivingUpload(this.importId, this.stop.signal)[Symbol.asyncIterator]();
    try {
      for (;;) {
        // Only the wait for the upload counts as a stall, not the parse and write behind it.
        this.waitingSince = Date.now();
        const next = await upload.next();
        this.waitingSince = null;
        if (next.done) return;
        this.bytesRead += next.value.length;
        yield next.value;
      }
    } finally {
      this.waitingSince = null;
      await upload.return?.();
    }
  }
}
