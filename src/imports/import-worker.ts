/**
 * The background worker: claims queued imports from the store, applies them
 * one at a time, keeps a heartbeat, recovers imports whose worker died,
 * sweeps superseded snapshots and old uploads, and packs the uploads of ended
 * imports. Under `serve` it also prepares an import while its upload is
 * being stored (upload-preparation.ts). Runs in a child process under `serve`
 * (see import-process.ts) and in-process under `mirador import`.
 *
 * One heavy task at a time, for memory (an import process stays under 300 MB
 * RSS): an import, a preparation, a segment pass or a packing.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import type { ImportJob, PackedUpload, Store } from '../store/store.js';
import { DEFAULT_EVENT_RETENTION_MS } from '../store/events.js';
import { DEFAULT_AUDIT_RETENTION_MS } from '../domain/audit.js';
import { WakeableSleep } from '../domain/wakeable-sleep.js';
import { writeChunkSegments, type SegmentStats } from '../snapshots/chunk-segments.js';
import { applyImport, applyPreparedImport, type PreparedImport } from './apply-import.js';
import type { ImportReport } from './import-report.js';
import { UploadPreparation } from './upload-preparation.js';

/** An import interrupted this many times is failed rather than retried again. */
const MAX_ATTEMPTS = 3;
/** A running import with no heartbeat for this long is taken to be orphaned… */
const STALE_AFTER_MS = 30_000;
/**
 * …unless its worker's process is seen alive on this host: a starved machine can hold a
 * heartbeat back for longer than STALE_AFTER_MS (seen at load 29: a second instance took over
 * an import still being applied). Only a much longer silence, which a reused pid could explain,
 * lets it go.
 */
const STALE_WHILE_ALIVE_MS = 15 * 60_000;
const HEARTBEAT_EVERY_MS = 500;
/** Between progress reports (a long write or comparison in the database), the heartbeat goes on by itself. */
const IDLE_HEARTBEAT_MS = 5_000;
const RECOVER_EVERY_MS = 10_000;
const SWEEP_EVERY_MS = 60_000;
/**
 * Uploads are packed this long after their import ended: packing a 70 MB
 * upload takes a few seconds of the worker, and an import queued meanwhile
 * (the 1% re-import after a first one, a re-apply after a mapping change)
 * waited for it, measured as 2.4 s more in the import bench's nightly row.
 */
const PACK_AFTER_MS = 10 * 60_000;

export interface WorkerEvents {
  started?(job: ImportJob): void;
  /** `prepared`: concluded with what was prepared while its upload was stored. */
  finished?(job: ImportJob, report: ImportReport, prepared: boolean): void;
  /** A preparation of import `importId` began (see `prepare`). */
  preparing?(importId: number): void;
  /** A live snapshot's gzip segments are written (see `makeSegments`). */
  segmented?(snapshotId: number, stats: SegmentStats): void;
  /** An ended import's stored upload is packed (see `packUploads`). */
  packed?(upload: PackedUpload): void;
  error?(err: unknown): void;
}

const HOST = hostname();

export function newWorkerId(): string {
  return `${HOST}:${process.pid}:${threadId}:${randomBytes(3).toString('hex')}`;
}

/**
 * Whether the worker that claimed an import is gone: its process is dead (when
 * it ran on this host), or its heartbeat is stale (STALE_AFTER_MS; when its
 * process is seen alive on this host, STALE_WHILE_ALIVE_MS).
 */
export function workerIsGone(worker: string, heartbeatAt: number, now = Date.now()): boolean {
  const [host, pidText] = worker.split(':');
  const pid = Number(pidText);
  let alive = false;
  if (host === HOST && Number.isInteger(pid) && pid > 0 && pid !== process.pid) {
    try {
      process.kill(pid, 0);
      alive = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
      alive = (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  return now - heartbeatAt > (alive ? STALE_WHILE_ALIVE_MS : STALE_AFTER_MS);
}

export class ImportWorker {
  readonly id = newWorkerId();
  private stopping = false;
  private readonly pause = new WakeableSleep();
  private loop: Promise<void> | null = null;
  private lastRecover = 0;
  private lastSweep = 0;
  /** No upload is looked for to pack before this time (one pass over them per SWEEP_EVERY_MS). */
  private nextPackPass = 0;
  /** The pass in progress has looked at the uploads of imports up to this id. */
  private packedUpTo = 0;
  /** An import `prepare` was asked for, until the loop begins its preparation. */
  private wanted: { importId: number; declaredBytes: number | null } | null = null;
  /** The preparation running or ended, until its import is claimed here or it is given up. */
  private preparation: UploadPreparation | null = null;
  /** An import is claimed and not yet applied. */
  private inHand = false;

  constructor(
    private readonly store: Store,
    private readonly options: {
      pollMs?: number;
      snapshotRetentionMs: number;
      tombstoneRetentionMs?: number;
      /** How long events are kept (default 30 days); swept with superseded snapshots. */
      eventRetentionMs?: number;
      /** Audit entries older than this are deleted by the sweep (default: a year). */
      auditRetentionMs?: number;
      /** Stored uploads are removed this long after their import ended; never when absent. */
      uploadRetentionMs?: number;
      events?: WorkerEvents;
      /** Uploads from this size on are parsed in a thread of their own (apply-import.ts's default otherwise). */
      threadFromBytes?: number;
      /**
       * Whether the worker, when it has no import to apply, makes the gzip
       * segments of live snapshots that have none (snapshots/chunk-segments.ts).
       * A serving process's worker does; `mirador import` does not, so that the
       * command ends at publication and the server, which reads them, makes them.
       */
      makeSegments?: boolean;
      /**
       * Whether the worker, when it has no import to apply nor segments to
       * make, packs the stored uploads of ended imports (store/upload-packing.ts),
       * one per turn. A serving process's worker does; `mirador import` does not.
       */
      packUploads?: boolean;
      /**
       * How long after its import ended an upload is left plain (PACK_AFTER_MS
       * when left out; tests set 0): a re-import or re-apply that comes right
       * after an import must not wait behind the packing of its upload.
       */
      packUploadsAfterMs?: number;
      /**
       * Whether `prepare` is heeded (where the store `writesWhileStoring`): a
       * serving process's worker prepares an upload's import while the HTTP
       * process stores it; `mirador import` prepares its own (prepared-import.ts).
       */
      prepareUploads?: boolean;
    },
  ) {}

  start() {
    this.loop ??= this.run();
  }

  /** Claims work now instead of at the next poll. */
  wake() {
    this.pause.wake();
  }

  /**
   * Stops claiming and waits for the import in progress to end. A
   * preparation is aborted, and what it wrote discarded.
   */
  async stop() {
    this.stopClaiming();
    this.preparation?.abort();
    await this.loop;
    const left = this.preparation;
    this.preparation = null;
    this.wanted = null;
    // With the database away, the sweep removes the snapshot later (its import is not queued then).
    await left?.giveUp().catch((err: unknown) => this.options.events?.error?.(err));
  }

  /**
   * Prepares import `importId` while its upload is being stored (see
   * upload-preparation.ts); `declaredBytes` is the size its client announced,
   * if any. Only with `prepareUploads`, on a store that `writesWhileStoring`;
   * ignored while an import is in hand or another is prepared (a second
   * upload is applied from the store as usual). It begins at the loop's next
   * turn: a segment pass in progress stops between two batches for it, a
   * packing (one transaction) is waited for. Until it is used or given up,
   * the loop makes no segments and packs nothing.
   */
  prepare(importId: number, declaredBytes: number | null = null): void {
    if (!this.options.prepareUploads || !this.store.writesWhileStoring || this.stopping) return;
    if (this.inHand || this.wanted || this.preparation) return;
    this.wanted = { importId, declaredBytes };
    this.wake();
  }

  /** The preparation in hand, if any: its import, the upload's bytes it has read, whether it runs. */
  preparationState(): { importId: number; bytesRead: number; running: boolean } | null {
    const p = this.preparation;
    return p && { importId: p.importId, bytesRead: p.bytesRead, running: p.running };
  }

  /**
   * Claims nothing more, from now: for an event handler that ends the
   * process after one piece of work, so that the loop does not claim the
   * next before the (asynchronous) stop reaches it.
   */
  stopClaiming() {
    this.stopping = true;
    this.wake();
  }

  /**
   * Claims and applies one import if one is ready; returns it, or null.
   * When the claimed import is `prepared`'s, or the one this worker prepares
   * (`prepare`), it is concluded with what was prepared, if that still stands
   * (apply-import.ts, `applyPreparedImport`). Another import is applied only
   * once this worker's preparation is aborted and discarded.
   */
  async runOnce(prepared?: PreparedImport | null): Promise<{ job: ImportJob; report: ImportReport; prepared: boolean } | null> {
    await this.housekeeping();
    const job = await this.store.claimImport(this.id);
    if (!job) return null;
    this.inHand = true;
    // Asked for while this was claimed: too late, the import in hand comes first.
    this.wanted = null;
    const own = this.preparation;
    this.preparation = null;
    try {
      return await this.apply(job, own, prepared);
    } finally {
      this.inHand = false;
    }
  }

  private async apply(job: ImportJob, own: UploadPreparation | null, prepared?: PreparedImport | null) {
    this.options.events?.started?.(job);
    let lastBeat = 0;
    const progress = { rowsRead: 0, bytesRead: 0 };
    const options = {
      tombstoneRetentionMs: this.options.tombstoneRetentionMs,
      threadFromBytes: this.options.threadFromBytes,
      onProgress: async (rowsRead: number, bytesRead: number) => {
        progress.rowsRead = rowsRead;
        progress.bytesRead = bytesRead;
        const now = Date.now();
        if (now - lastBeat < HEARTBEAT_EVERY_MS) return;
        lastBeat = now;
        await this.store.heartbeatImport(job.id, progress);
      },
    };
    const idleBeat = setInterval(() => {
      if (Date.now() - lastBeat < IDLE_HEARTBEAT_MS) return;
      lastBeat = Date.now();
      this.store.heartbeatImport(job.id, progress).catch((err: unknown) => this.options.events?.error?.(err));
    }, IDLE_HEARTBEAT_MS);
    try {
      if (own && own.importId !== job.id) {
        // Never two at once: the preparation stops (its upload's reader throws) before this import
        // starts. A snapshot it could not discard is swept later.
        await own.giveUp().catch((err: unknown) => this.options.events?.error?.(err));
        own = null;
      }
      if (own) {
        // Its upload is stored whole now: the preparation reads to its end, reporting as the import does.
        own.onProgress = options.onProgress;
        prepared = await own.outcome();
      }
      const concluded = prepared?.importId === job.id ? await applyPreparedImport(this.store, job, prepared, options) : null;
      const report = concluded ?? (await applyImport(this.store, job, options));
      this.options.events?.finished?.(job, report, concluded !== null);
      return { job, report, prepared: concluded !== null };
    } finally {
      clearInterval(idleBeat);
    }
  }

  /**
   * Claims one live snapshot without gzip segments and makes them (once, for
   * every gzip list page read from it). After publication, so readers never
   * wait for it; false when there was none to make. A failure is reported
   * and not retried until its claim expires (SEGMENT_CLAIM_EXPIRES_MS, as for
   * a pass whose process died): meanwhile reads make any segment that is missing.
   */
  async segmentOnce(): Promise<boolean> {
    if (this.stopping) return false;
    const snapshotId = await this.store.claimSegmentPass();
    if (snapshotId === null) return false;
    try {
      // A shutdown does not wait for a pass (seconds): it stops between two batches, and
      // another process takes the pass up again.
      // Nor does an upload to prepare: its preparation must not run beside the pass (memory).
      const stats = await writeChunkSegments(this.store, snapshotId, { shouldStop: () => this.stopping || this.wanted !== null });
      if (!stats.complete) await this.store.releaseSegmentPass(snapshotId);
      else {
        await this.store.finishSegmentPass(snapshotId);
        this.options.events?.segmented?.(snapshotId, stats);
      }
    } catch (err) {
      this.options.events?.error?.(err);
    }
    return true;
  }

  private async run() {
    while (!this.stopping) {
      try {
        this.beginPreparation();
        if (await this.runOnce()) continue;
        if (this.preparation) await this.reviewPreparation(this.preparation);
        // Imports first: segments only speed up reads of what is already published. Neither
        // beside a preparation (memory); one asked for begins at the next turn (`prepare` woke it).
        else if (this.wanted === null) {
          if (this.options.makeSegments && (await this.segmentOnce())) continue;
          if (this.options.packUploads && (await this.packOnce())) continue;
        }
      } catch (err) {
        // An outage or a bug: report it and wait for the next poll rather than spin.
        this.options.events?.error?.(err);
      }
      await this.pause.sleep(this.options.pollMs ?? 1000);
    }
  }

  private beginPreparation() {
    const wanted = this.wanted;
    if (!wanted || this.preparation) return;
    this.wanted = null;
    this.preparation = new UploadPreparation(this.store, wanted.importId, wanted.declaredBytes, { threadFromBytes: this.options.threadFromBytes });
    this.options.events?.preparing?.(wanted.importId);
  }

  /**
   * After a turn that claimed nothing, gives the preparation up when it
   * stalled (upload-preparation.ts, `stalled`), failed, or its import will not be claimed
   * here: another process took it, it is gone, or it stays queued behind an
   * import of its company and kind that runs or is held. Queued and not
   * claimed is seen once when its upload has only just been stored; twice
   * means a claim came after it was queued and passed it over.
   */
  private async reviewPreparation(p: UploadPreparation) {
    if (p.running) {
      // It ends at once; the next turn gives it up.
      if (p.stalled()) p.abort();
      return;
    }
    const status = (await p.outcome()) && (await this.store.importById(p.importId))?.status;
    if (status === 'queued' && !p.seenQueued) {
      p.seenQueued = true;
      return;
    }
    this.preparation = null;
    await p.giveUp();
  }

  /**
   * Packs one ended import's stored upload, going through them in id order,
   * one pass every SWEEP_EVERY_MS; false when this pass has none left. A
   * failure (the database away) is reported and waits for the next pass.
   */
  async packOnce(): Promise<boolean> {
    if (this.stopping || Date.now() < this.nextPackPass) return false;
    this.nextPackPass = Date.now() + SWEEP_EVERY_MS;
    const upload = await this.store.packUpload(this.packedUpTo, Date.now() - (this.options.packUploadsAfterMs ?? PACK_AFTER_MS));
    if (!upload) {
      this.packedUpTo = 0;
      return false;
    }
    this.nextPackPass = 0;
    this.packedUpTo = upload.importId;
    if (upload.packed) this.options.events?.packed?.(upload);
    return true;
  }

  private async housekeeping() {
    const now = Date.now();
    if (now - this.lastRecover >= RECOVER_EVERY_MS) {
      this.lastRecover = now;
      await this.store.recoverImports((worker, beat) => worker !== this.id && workerIsGone(worker, beat), MAX_ATTEMPTS);
    }
    if (now - this.lastSweep >= SWEEP_EVERY_MS) {
      this.lastSweep = now;
      await this.store.sweepSnapshots(now - this.options.snapshotRetentionMs);
      await this.store.sweepEvents(now - (this.options.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_MS));
      await this.store.sweepAudit(now - (this.options.auditRetentionMs ?? DEFAULT_AUDIT_RETENTION_MS));
      await this.store.sweepSignInFailures(now);
      if (this.options.uploadRetentionMs !== undefined) await this.store.sweepUploads(now - this.options.uploadRetentionMs);
    }
  }
}
