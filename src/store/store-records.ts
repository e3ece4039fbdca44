/**
 * The records the storage interface (store.ts) reads and writes: companies,
 * credentials, users, imports, snapshots and their chunks, and the errors a
 * store throws. Kept apart from the interface itself; store.ts re-exports all
 * of it, so callers import from there.
 */
import type { Kind } from '../domain/kinds.js';
import type { HashAlgorithm } from '../domain/item-renderer.js';
import type { CredentialScope } from '../domain/api-keys.js';
import type { AuditAction } from '../domain/audit.js';

export interface Company {
  id: number;
  slug: string;
  name: string;
  createdAt: Date;
}

export interface Credential {
  id: number;
  companyId: number;
  scope: CredentialScope;
  prefix: string;
  secretHash: Buffer;
  label: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** Refused from this time on; null: never expires. */
  expiresAt: Date | null;
}

/** A page of a company's audit trail: newest first, entries with an id below `before`. */
export interface AuditQuery {
  /** Only these actions (none: all). */
  actions?: readonly AuditAction[];
  /** Only entries older than this id (the last id of the previous page). */
  before?: number;
  limit: number;
}

export interface User {
  id: number;
  companyId: number;
  email: string;
  passwordHash: string;
  createdAt: Date;
}

/** `receiving`: the upload is still being stored, not yet claimable. */
export type ImportStatus = 'receiving' | 'queued' | 'running' | 'succeeded' | 'failed' | 'awaiting_confirmation' | 'rejected';

export interface ImportJob {
  id: number;
  companyId: number;
  kind: Kind;
  status: ImportStatus;
  filename: string;
  sizeBytes: number;
  /** Where the upload came from: `cli`, `panel`, `token:<prefix>`. */
  source: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  rowsRead: number;
  bytesRead: number;
  attempts: number;
  /** The import report once it ended (see `imports/report.ts`), else null. */
  report: unknown;
  error: string | null;
  snapshotId: number | null;
  /** When the stored upload was removed (UPLOAD_RETENTION_DAYS after the import ended); it cannot be imported again. */
  fileRemovedAt: Date | null;
}

/** One record handed to `writeSnapshot`, already rendered up to its timestamp. */
export interface StagedRecord {
  idErp: string;
  /** Hash of the item's content (everything but `actualizado_at`). */
  hash: Buffer;
  /** The item up to the opening quote of `actualizado_at`'s value, as UTF-8 (see ItemRenderer). */
  body: Buffer;
  /** Line of the source file, for error messages. */
  line: number;
}

export interface SnapshotSpec {
  companyId: number;
  kind: Kind;
  importId: number | null;
  /** The import's time: `actualizado_at` of every new or changed record. */
  at: number;
  /** The file's column names, kept for the panel's mapping page. */
  columns: readonly string[];
  /** How the records' hashes were made: `Store.nextHashAlgorithm` of the company and kind. */
  hashAlgorithm: HashAlgorithm;
  /**
   * When no record is inserted, updated or deleted and the columns are the
   * live snapshot's, write nothing and answer the live snapshot (`keptLive`):
   * what an import does (its readers see the same data, ETags included).
   * Off, a new snapshot is always written (tests that load data).
   */
  keepLiveWhenUnchanged?: boolean;
}

export interface SnapshotChanges {
  total: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  /** The first `id_erp` (byte order, up to DELETED_EXAMPLES) of removed records, for reports and the guard's page. */
  deletedExamples: string[];
}

/** How many removed records' `id_erp` a snapshot's changes name: enough for a person to recognise what would go. */
export const DELETED_EXAMPLES = 10;

/**
 * A segment pass claimed this long ago and not finished is taken to be dead
 * (its process was killed) and may be claimed again. Far longer than any pass
 * takes (a 1 GiB file's, 1.4 million records, takes about a minute); a pass
 * still alive after it would only write the same segments twice.
 */
export const SEGMENT_CLAIM_EXPIRES_MS = 30 * 60 * 1000;

/** Throws unless `spec` hashes as the live snapshot did (`live`): see `Store.nextHashAlgorithm`. */
export function checkHashAlgorithm(spec: SnapshotSpec, live: string): void {
  if (spec.hashAlgorithm !== live) {
    throw new Error(
      `A ${spec.kind} snapshot of company ${spec.companyId} hashed with ${spec.hashAlgorithm} cannot follow the live one, hashed with ${live}.`,
    );
  }
}

/** The changes of a snapshot written with no live one before it: every record is new. */
export function allInserted(total: number): SnapshotChanges {
  return { total, inserted: total, updated: 0, unchanged: 0, deleted: 0, deletedExamples: [] };
}

/** A staged snapshot: written, not yet live. */
export interface StagedSnapshot {
  snapshotId: number;
  changes: SnapshotChanges;
  /** The live snapshot the records were compared with (null: none, all inserted). */
  previousId: number | null;
  /**
   * True when nothing changed and the spec asked to keep the live snapshot:
   * no snapshot was written, `snapshotId` is the live one (`previousId`).
   * Conclude with `Store.keepLiveSnapshot`, never publish or discard it.
   */
  keptLive?: boolean;
  /**
   * Chunks the snapshot stores itself, chunks it shares with `previousId`
   * (chunk-reuse.ts), and the sorted runs its filter indexes were built from
   * (0: built whole in memory; see index-runs.ts).
   */
  layout?: { chunksWritten: number; chunksShared: number; indexRuns: number };
  /**
   * Item bodies written to the stage's file: those of new and changed
   * records (an unchanged one's stays in the previous snapshot); none when
   * records were written as they arrived.
   */
  bodiesStaged?: number;
}

/** Whether a comparison found nothing inserted, updated or deleted. */
export function changesNothing(c: SnapshotChanges): boolean {
  return c.inserted === 0 && c.updated === 0 && c.deleted === 0;
}

/** Whether two snapshots' column lists are the same, in the same order. */
export function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

/** Immutable description of a snapshot, cacheable forever by id. */
export interface SnapshotMeta {
  id: number;
  /** Opaque public identifier, used in ETags and by clients. */
  publicId: string;
  companyId: number;
  kind: Kind;
  count: number;
  createdAt: number;
  /** First position of each chunk, ascending; chunk i holds [chunkStarts[i], chunkStarts[i+1]). */
  chunkStarts: Uint32Array;
  /**
   * Distinct `actualizado_at` values in list order with the first position
   * holding each: an `updated_since` filter is a binary search here.
   */
  timeline: { at: number; firstPos: number }[];
  columns: string[];
  /** When it became live (epoch ms); null while staged. */
  publishedAt: number | null;
  /**
   * Whether the import stored its thin chunks and filter indexes (every
   * snapshot written by this version; older ones are indexed in memory when
   * first filtered, see CachedChunkSource).
   */
  indexed: boolean;
}

/** A record that an import removed, kept so incremental syncs learn of it. */
export interface Tombstone {
  idErp: string;
  /** The time of the import that removed it. */
  deletedAt: number;
}

/** What a client's `snapshot=<id>` names. */
export interface SnapshotRef {
  id: number;
  state: 'staged' | 'live' | 'superseded';
  supersededAt: number | null;
}

/** An item of a snapshot by its chunk and its index in it (its position minus the chunk's first). */
export interface ItemRef {
  chunkNo: number;
  index: number;
}

/**
 * A chunk of consecutive items: `bytes` holds them as UTF-8 JSON joined by
 * commas; item k (0-based within the chunk) is
 * `bytes[offsets[k] .. offsets[k+1] - 1)` (the last byte before the next
 * item's start is the comma; the final offset is `bytes.length + 1`).
 */
export interface Chunk {
  chunkNo: number;
  firstPos: number;
  offsets: Uint32Array;
  bytes: Buffer;
  /** The same items without `data`, made with the chunk by ChunkBuilder (not read back with it). */
  thin?: ThinChunk;
}

/**
 * The items of a chunk without `data` (for `fields=` pages, contract §6),
 * joined by commas like a chunk's. `bounds` holds, per item, where each
 * highlighted field's piece starts (`{"id_erp":…`, then `,"nombre":…`, in
 * kind order) and then where its time starts (`,"actualizado_at":"…"}`): the
 * item ends one byte before the next item's first bound (the comma), the
 * last at the end of `bytes`. Offsets from an item's first bound are the same
 * in its full item, which starts with the same bytes.
 */
export interface ThinChunk {
  chunkNo: number;
  firstPos: number;
  bounds: Uint32Array;
  bytes: Buffer;
}

/**
 * A chunk's bytes compressed once, after publication, for gzip pages: a raw
 * deflate stream (level 6) ended with a sync flush, so it is byte-aligned and
 * not final, and segments of consecutive chunks (and other such pieces)
 * concatenate into one valid deflate stream. `crc32` and `rawLength`
 * describe the uncompressed bytes (`Chunk.bytes`), so a page's gzip trailer
 * is computed without reading them.
 */
export interface ChunkSegment {
  chunkNo: number;
  rawLength: number;
  /**
   * How many bytes before the chunk the segment may refer back to: it was
   * compressed with the last `contextLength - 1` bytes of the previous chunk
   * and the comma after them as its dictionary, so it is only valid where
   * exactly those bytes precede it. 0: none (the first chunk).
   */
  contextLength: number;
  /** CRC-32 (as gzip's) of the chunk's bytes, unsigned. */
  crc32: number;
  deflate: Buffer;
}

export interface RecordRef {
  pos: number;
  hash: Buffer;
  actualizadoAt: number;
}

/** Tombstones are kept at least this long by default (contract: at least 90 days). */
export const DEFAULT_TOMBSTONE_RETENTION_MS = 90 * 24 * 3600 * 1000;

export class ConflictError extends Error {}

export class UploadTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The upload is larger than the maximum of ${maxBytes} bytes.`);
  }
}

/** Thrown by `readReceivingUpload` when the import is gone: its upload was cut off, and removed. */
export class UploadGoneError extends Error {
  constructor(readonly importId: number) {
    super(`Import ${importId} is gone: its upload was cut off before it was stored whole.`);
  }
}

/** Thrown by `writeSnapshot` when `id_erp` repeats; names some of them. */
export class DuplicateIdError extends Error {
  constructor(readonly duplicates: { idErp: string; line: number; firstLine: number }[]) {
    super(
      'Duplicate id_erp values: ' +
        duplicates.map((d) => `"${d.idErp}" on line ${d.line} (first on line ${d.firstLine})`).join(', '),
    );
  }
}

/** Thrown when the storage cannot be reached; answered as 503. */
export class StoreUnavailableError extends Error {}
