/**
 * The durable import queue in the store (see store.ts, which the Store
 * interface extends with this): uploads stored and queued, claimed by one
 * worker, read back (or while still being received), ended, recovered when
 * their worker died, and their stored files packed and removed once ended.
 */
import type { Kind } from '../domain/kinds.js';
import type { AuditEvent } from '../domain/audit.js';
// The errors are named for the documentation's links.
import type { ImportJob, UploadGoneError, UploadTooLargeError } from './store-records.js';
import type { PackedUpload } from './upload-packing.js';

/** What an upload is queued as: whose, which kind, its file's name, and who sent it (`panel`, `token:<prefix>`, `cli`). */
export interface NewImport {
  companyId: number;
  kind: Kind;
  filename: string;
  source: string;
}

export interface ImportQueue {
  /**
   * Whether a snapshot may be written while an upload is being stored, each
   * on a connection of its own (PostgreSQL): `mirador import` then prepares
   * the import while it stores the file (imports/prepared-import.ts), and
   * `serve`'s import process while the HTTP process stores an upload, from
   * `readReceivingUpload` (imports/upload-preparation.ts). SQLite's one
   * connection would put the upload's writes inside the snapshot's
   * transaction; its `readReceivingUpload` throws.
   */
  readonly writesWhileStoring: boolean;

  /**
   * Stores an upload durably and queues it. Streams `body` into the database;
   * throws UploadTooLargeError (and stores nothing) past `maxBytes`.
   * `onCreated` learns the import's id as soon as it has one, before the
   * upload is stored (see imports/prepared-import.ts). `audit` is written
   * when the upload is queued, its details gaining `import_id` and `size_bytes`.
   */
  createImport(
    input: NewImport,
    body: AsyncIterable<Buffer>,
    maxBytes: number,
    onCreated?: (id: number) => void,
    audit?: AuditEvent,
  ): Promise<ImportJob>;
  /**
   * Queues a new import of the same company, kind and file as import `id`,
   * copying its stored upload (the panel's "re-apply the last file", after a
   * mapping change). `source` says who asked. Null when `id` is unknown.
   * `audit.details` gains the new import's `import_id`.
   *
   * @example
   * const again = await store.copyImport(last.id, 'panel');
   */
  copyImport(id: number, source: string, audit?: AuditEvent): Promise<ImportJob | null>;
  importById(id: number): Promise<ImportJob | null>;
  /** Newest first. */
  listImports(companyId: number, kind?: Kind, limit?: number): Promise<ImportJob[]>;
  /**
   * Atomically takes the oldest queued import whose company and kind has no
   * import running or awaiting confirmation, marking it running for `worker`.
   */
  claimImport(worker: string): Promise<ImportJob | null>;
  readImportFile(id: number): AsyncIterable<Buffer>;
  /**
   * The upload of import `id` while it is still being received, where the
   * store `writesWhileStoring` (the other adapters throw): each blob once it
   * is committed, in order, waiting (without holding a connection) while the
   * import is `receiving`; it ends after the last blob once the import is
   * queued (or later), and throws UploadGoneError when the import is gone
   * (its upload was cut off) and `signal`'s reason, promptly, when aborted.
   * `serve`'s import worker prepares an import from it (imports/upload-preparation.ts).
   *
   * @example
   * const stop = new AbortController();
   * for await (const blob of store.readReceivingUpload(importId, stop.signal)) parse(blob);
   */
  readReceivingUpload(id: number, signal: AbortSignal): AsyncIterable<Buffer>;
  /** Progress and liveness of a running import. */
  heartbeatImport(id: number, progress: { rowsRead: number; bytesRead: number }): Promise<void>;
  /** Ends a running import as failed (nothing published). */
  failImport(id: number, error: string, report: unknown): Promise<void>;
  /** Holds a running import's staged snapshot for an administrator's decision (the mass-deletion guard). */
  holdImport(id: number, snapshotId: number, report: unknown): Promise<void>;
  /**
   * Rejects an import awaiting confirmation: its staged snapshot is discarded.
   * Idempotent: `audit` is only written when this call rejected it.
   */
  rejectImport(id: number, report: unknown, audit?: AuditEvent): Promise<void>;
  /**
   * Puts running imports whose worker is gone back in the queue (or fails them
   * after too many attempts). A worker is gone when `isGone(worker,
   * heartbeatAt)` says so. Returns how many were recovered.
   */
  recoverImports(isGone: (worker: string, heartbeatAt: number) => boolean, maxAttempts: number): Promise<number>;

  /**
   * Removes the stored files of imports that ended (succeeded, failed or
   * rejected) before `endedBefore`, marking each import's `fileRemovedAt`;
   * queued, running and held imports keep theirs. Returns how many were removed.
   * @example
   * await store.sweepUploads(Date.now() - config.uploadRetentionMs);
   */
  sweepUploads(endedBefore: number): Promise<number>;
  /**
   * Packs the stored upload of the first ended import (succeeded, failed or
   * rejected) past import `afterId` whose upload is still plain: recompresses
   * it with brotli and, in one transaction, writes the packed copy, marks it
   * and deletes the plain one (store/upload-packing.ts). `readImportFile` and
   * `copyImport` give the same bytes either way. Null when there is none left.
   * Processes packing at once never pack one upload twice (PostgreSQL: the
   * one that locks its import's row packs it; SQLite: the first to commit).
   * Only imports that ended before `endedBefore` (ms since the epoch; all
   * ended ones when left out) are looked at.
   *
   * @example
   * for (let r = await store.packUpload(0); r; r = await store.packUpload(r.importId)) {}
   */
  packUpload(afterId: number, endedBefore?: number): Promise<PackedUpload | null>;
}
