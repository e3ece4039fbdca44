/**
 * The storage interface. Two adapters implement it — SQLite (`sqlite/`, the
 * embedded default) and PostgreSQL (`postgres/`) — and nothing outside
 * `src/store/` talks to a database driver. Every method is async so that both
 * adapters fit the same shape; the SQLite adapter simply resolves at once.
 *
 * Records live in immutable snapshots (one per applied import, per company and
 * kind). A snapshot holds, per record, its list position, `id_erp`,
 * `actualizado_at` and a content hash, and the items themselves pre-rendered
 * as UTF-8 in chunks of consecutive positions, so that a page is the envelope
 * plus slices of bytes that already exist.
 */
import type { Kind } from '../domain/kinds.js';
import type { HashAlgorithm } from '../domain/item-renderer.js';
import type { CredentialScope } from '../domain/api-keys.js';
import type { EventStore } from './events.js';
import type { ImportQueue } from './import-queue.js';
import type { AuditAction, AuditEntry, AuditEvent } from '../domain/audit.js';
import type { ThrottlePolicy } from '../domain/sign-in-policy.js';


export type { AuditEntry, AuditEvent } from '../domain/audit.js';
export * from './store-records.js';
export type { RecordRow } from './record-index.js';
export type { PackedUpload } from './upload-packing.js';
export type { ImportQueue, NewImport } from './import-queue.js';
import type { RecordRow } from './record-index.js';
import type {
  Company,
  Credential,
  AuditQuery,
  User,
  StagedRecord,
  SnapshotSpec,
  SEGMENT_CLAIM_EXPIRES_MS,
  StagedSnapshot,
  SnapshotMeta,
  Tombstone,
  SnapshotRef,
  Chunk,
  ItemRef,
  ThinChunk,
  ChunkSegment,
  RecordRef,
  DuplicateIdError,
  StoreUnavailableError,
} from './store-records.js';

/** How a process uses its store; adapters may tune themselves by it. */
export interface StoreOptions {
  /**
   * The store answers HTTP requests on this thread: keep background work off
   * it (the SQLite adapter leaves WAL checkpoints to the import worker's
   * connection, which runs them in its own thread).
   */
  servesRequests?: boolean;
  /**
   * The process's read caches' budget (CHUNK_CACHE_MB, in bytes), when it
   * serves reads: the SQLite adapter sizes its own page cache by it
   * (`sqlitePageCacheKiB`). Unset: the adapter's default.
   */
  readCacheBytes?: number;
}

/** Events and webhooks: see events.ts. */
export interface Store extends EventStore, ImportQueue {
  readonly backend: 'sqlite' | 'postgres';
  /**
   * Whether writing a snapshot holds much memory on this store (PostgreSQL:
   * 378 MB of chunks per 100,000 customers go to the server, through COPY
   * buffers and the pg connection). An import's parsing thread then keeps a
   * small young generation (apply-import.ts).
   */
  readonly heavyImportWriter: boolean;
  /** SQLite's page cache of the serving connection, in KiB (StoreOptions.readCacheBytes sizes it); undefined on PostgreSQL. */
  readonly pageCacheKiB?: number;
  /**
   * Whether the store copies itself to a file (`backup`, `restore`): SQLite
   * does; PostgreSQL is backed up with pg_dump / pg_restore instead
   * (docs/operations.md), and its `backup` and `restore` throw.
   */
  readonly backsUpToFile: boolean;

  /**
   * Creates or upgrades the schema. Idempotent. `to` stops at that version
   * (tests of upgrades start from the previous release's schema).
   */
  migrate(options?: { to?: number }): Promise<void>;
  /**
   * The schema version of the database (migrations applied; 0 when new) and
   * the latest this code knows. Read without migrating, so `mirador migrate
   * --plan` can say what an upgrade would apply (migration-notes.ts).
   */
  schemaVersion(): Promise<{ current: number; latest: number }>;
  /**
   * Copies the whole database into the new file `file`, as it was at one
   * moment, while other connections go on reading and writing.
   * @example
   * if (store.backsUpToFile) await store.backup('/backups/mirador-2026-11-25.db');
   */
  backup(file: string): Promise<{ bytes: number }>;
  /**
   * The database's size on disk, and how much of it is free space that new
   * writes reuse (SQLite's free pages; PostgreSQL reports 0, its free space
   * inside tables is not cheap to count).
   */
  storageSize(): Promise<{ bytes: number; freeBytes: number }>;
  /** Whether the database holds no company yet (the only kind `restore` accepts). */
  isEmpty(): Promise<boolean>;
  /**
   * Replaces this empty database with the backup in `file` and closes the
   * store (open it again, and migrate, to use it). Refuses a database that is
   * not empty and a file that is not a backup of this kind of store.
   */
  restore(file: string): Promise<void>;
  close(): Promise<void>;
  /** Resolves when the storage answers; rejects with StoreUnavailableError. */
  ping(): Promise<void>;

  // Companies
  createCompany(slug: string, name: string): Promise<Company>;
  companyBySlug(slug: string): Promise<Company | null>;
  companyById(id: number): Promise<Company | null>;
  listCompanies(): Promise<Company[]>;

  // Audit trail. Methods that change something take an optional `audit`
  // event, written in the same transaction as the change (and only when the
  // change happens); `recordAudit` is for actions that change nothing stored
  // (signing in and out) and for features whose change has no such parameter.
  /**
   * Appends one event to its company's trail.
   *
   * @example
   * await store.recordAudit(auditEvent(userActor(email, ip), companyId, 'session.sign_in'));
   */
  recordAudit(event: AuditEvent): Promise<void>;
  /** A company's trail, newest first (see AuditQuery). */
  listAudit(companyId: number, query: AuditQuery): Promise<AuditEntry[]>;
  /** Deletes entries older than `before` (epoch ms); returns how many. */
  sweepAudit(before: number): Promise<number>;

  // Failed sign-ins, shared by every instance over this store (see domain/sign-in-policy.ts)
  /** Counts a failure of `email` at `now`; returns until when it is locked (0: not locked). */
  signInFailed(email: string, now: number, policy: ThrottlePolicy): Promise<number>;
  /** Until when `email` is locked (epoch ms; 0 or past: not locked). */
  signInLockedUntil(email: string): Promise<number>;
  /** Forgets the failures of `email` (it signed in). */
  signInSucceeded(email: string): Promise<void>;
  /** Deletes the records of failures that no longer count at `now`. */
  sweepSignInFailures(now: number): Promise<number>;

  // Credentials: API keys (scope read) and upload tokens (scope upload)
  createCredential(
    input: {
      companyId: number;
      scope: CredentialScope;
      prefix: string;
      secretHash: Buffer;
      label: string | null;
      /** Epoch ms after which it is refused; null or absent: never. */
      expiresAt?: number | null;
    },
    audit?: AuditEvent,
  ): Promise<Credential>;
  credentialByPrefix(prefix: string): Promise<Credential | null>;
  listCredentials(companyId: number, scope: CredentialScope): Promise<Credential[]>;
  /**
   * Marks a credential revoked; returns it, or null if the prefix is unknown.
   * Idempotent: `audit` is only written when this call revoked it.
   */
  revokeCredential(prefix: string, audit?: AuditEvent): Promise<Credential | null>;
  /** Records last-use times in one batch (called periodically, never per request). */
  touchCredentials(lastUsed: ReadonlyMap<string, number>): Promise<void>;

  // Settings: small values shared by every instance (e.g. the session secret)
  getSetting(name: string): Promise<string | null>;
  /** Stores `value` unless a value exists; returns the stored one. */
  initSetting(name: string, value: string): Promise<string>;
  /** Stores `value`, replacing any previous one. */
  setSetting(name: string, value: string, audit?: AuditEvent): Promise<void>;

  // Panel users
  /** `audit.details` gains the new user's `user_id`. */
  createUser(input: { companyId: number; email: string; passwordHash: string }, audit?: AuditEvent): Promise<User>;
  userByEmail(email: string): Promise<User | null>;
  userById(id: number): Promise<User | null>;

  // Column mappings: a company's override of the default mapping, field → column
  getMapping(companyId: number, kind: Kind): Promise<Record<string, string>>;
  setMapping(companyId: number, kind: Kind, mapping: Record<string, string>, audit?: AuditEvent): Promise<void>;

  // Snapshots
  /**
   * Writes a new snapshot from staged records, comparing each with the live
   * snapshot: an unchanged record keeps its `actualizado_at`, a new or changed
   * one gets `spec.at`. Records missing from `records` are not carried over.
   * The snapshot is not live until `publishSnapshot`. Throws DuplicateIdError
   * and leaves nothing behind on failure. Throws, too, when `spec.hashAlgorithm`
   * is not the live snapshot's: the hashes could not be compared.
   */
  writeSnapshot(spec: SnapshotSpec, records: AsyncIterable<StagedRecord[]>): Promise<StagedSnapshot>;
  /**
   * How the next snapshot of a company and kind hashes its records: as the
   * live one did, so that unchanged records are found; CURRENT_HASH when
   * there is none.
   */
  nextHashAlgorithm(companyId: number, kind: Kind): Promise<HashAlgorithm>;
  /**
   * Ends import `finish.importId` as succeeded without a new snapshot: its
   * file changed nothing (`StagedSnapshot.keptLive`), so `snapshotId`, the
   * live snapshot, stays live, untouched (same chunks, tombstones and ETags).
   * Records the import's `import.published` event (zero counts, `snapshot` the
   * live one) in the same transaction. Throws when `snapshotId` is no longer live.
   *
   * @example
   * if (staged.keptLive) await store.keepLiveSnapshot(staged.snapshotId, { importId, report });
   */
  keepLiveSnapshot(snapshotId: number, finish: { importId: number; report: unknown }): Promise<void>;
  /**
   * Makes a staged snapshot the live one of its company and kind in one
   * transaction, ending its import (when given) as succeeded with `report`.
   * In the same transaction it records the snapshot's tombstones: the live
   * snapshot's tombstones still within `tombstoneRetentionMs` (default 90
   * days) and not re-added, plus the live snapshot's records that the new one
   * lacks, removed at the new snapshot's import time.
   */
  publishSnapshot(
    snapshotId: number,
    finish?: { importId: number; report: unknown },
    options?: { tombstoneRetentionMs?: number },
  ): Promise<void>;
  /** The snapshot of a company and kind with this public id, whatever its state; null when unknown or swept. */
  snapshotByPublicId(companyId: number, kind: Kind, publicId: string): Promise<SnapshotRef | null>;
  /** A snapshot's tombstones, in list order (deletedAt, then id_erp in byte order). */
  readTombstones(snapshotId: number): Promise<Tombstone[]>;
  /** Removes a staged snapshot that will never be published. */
  discardSnapshot(snapshotId: number): Promise<void>;
  /** The live snapshot's id, or null when the kind has never been imported. Hot path. */
  liveSnapshotId(companyId: number, kind: Kind): Promise<number | null>;
  /**
   * The live snapshot of a company's kind and, in it, the record `idErp`
   * (null when it has none): `liveSnapshotId` and `findRecord` in one round
   * trip. Null when the kind has never been imported. Hot path (details).
   *
   * @example
   * const live = await store.findLiveRecord(company.id, 'clientes', 'C000001');
   * if (live?.record) readItem(live.snapshotId, live.record.pos);
   */
  findLiveRecord(companyId: number, kind: Kind, idErp: string): Promise<{ snapshotId: number; record: RecordRef | null } | null>;
  /**
   * What `findLiveRecord` would answer, when the store can tell without
   * waiting (SQLite always; PostgreSQL from the pointers and positions it
   * keeps in memory while it listens for publications); undefined when it
   * cannot. Lets the hot path answer a detail without a promise.
   */
  cachedLiveRecord(companyId: number, kind: Kind, idErp: string): { snapshotId: number; record: RecordRef | null } | null | undefined;
  /**
   * What `liveSnapshotId` would answer, when the store can tell without
   * waiting (as `cachedLiveRecord`); undefined when it cannot.
   */
  cachedLiveSnapshotId(companyId: number, kind: Kind): number | null | undefined;
  /**
   * What `findRecord` would answer, when the store can tell without waiting
   * (SQLite always; PostgreSQL when it keeps the record's position); undefined
   * when it cannot.
   */
  cachedRecord(snapshotId: number, idErp: string): RecordRef | null | undefined;
  snapshotMeta(snapshotId: number): Promise<SnapshotMeta | null>;
  /** Chunks `fromChunk..toChunk` (inclusive) of a snapshot, in order. */
  readChunks(snapshotId: number, fromChunk: number, toChunk: number): Promise<Chunk[]>;
  /**
   * `readChunks` answered at once, on an adapter whose driver reads
   * synchronously (SQLite: better-sqlite3 blocks either way, so the hot path
   * saves the promise); absent on the others.
   */
  readChunksNow?(snapshotId: number, fromChunk: number, toChunk: number): Chunk[];
  /**
   * The bytes of item `index` (its position minus the chunk's first) of the
   * snapshot's chunk `chunkNo`, read without bringing the whole chunk into the
   * process: a detail whose chunk is not in memory. Null when there is no such
   * chunk or item.
   */
  readItem(snapshotId: number, chunkNo: number, index: number): Promise<Buffer | null>;
  /** `readItem` answered at once, where the driver reads synchronously (as `readChunksNow`). */
  readItemNow?(snapshotId: number, chunkNo: number, index: number): Buffer | null;
  /**
   * `readItem` for several items at once, in one round trip: a filtered page
   * whose matches are scattered over chunks not in memory reads the items it
   * sends, not their chunks. The answer is in the order of `items`, null
   * where there is no such chunk or item.
   */
  readItems(snapshotId: number, items: readonly ItemRef[]): Promise<(Buffer | null)[]>;
  findRecord(snapshotId: number, idErp: string): Promise<RecordRef | null>;
  /**
   * Up to `limit` records of a snapshot in `id_erp` byte order, after
   * `afterIdErp` (null: from the first): read page by page, with a turn of the
   * event loop between pages, into the read path's per-snapshot RecordIndex.
   *
   * @example
   * const page = await store.readRecordPage(snapshotId, null, 5000);
   * const next = await store.readRecordPage(snapshotId, page.at(-1)!.idErp, 5000);
   */
  readRecordPage(snapshotId: number, afterIdErp: string | null, limit: number): Promise<RecordRow[]>;
  /**
   * Thin chunks `fromChunk..toChunk` (inclusive) of an indexed snapshot, in
   * order: its items without `data`, for `fields=` pages.
   *
   * @example
   * const [thin] = await store.readThinChunks(snapshotId, 0, 0);
   */
  readThinChunks(snapshotId: number, fromChunk: number, toChunk: number): Promise<ThinChunk[]>;
  /**
   * One of an indexed snapshot's filter indexes by name (`eq:estado`, `q`,
   * `range:fecha`; see store/snapshot-index.ts), as stored; null when it has none.
   *
   * @example
   * const blob = await store.readIndex(snapshotId, 'eq:estado');
   */
  readIndex(snapshotId: number, name: string): Promise<Buffer | null>;
  /**
   * Stores precompressed segments of a published snapshot's chunks (see
   * ChunkSegment), replacing any already there for the same chunks. Does
   * nothing when the snapshot is gone (swept meanwhile).
   *
   * @example
   * await store.writeSegments(snapshotId, [{ chunkNo: 0, rawLength, crc32, deflate }]);
   */
  writeSegments(snapshotId: number, segments: readonly ChunkSegment[]): Promise<void>;
  /**
   * The segments that exist among chunks `fromChunk..toChunk` (inclusive), in
   * order; chunks without one are simply missing from the result (a crash
   * while they were being made, or not made yet): readers make those.
   */
  readSegments(snapshotId: number, fromChunk: number, toChunk: number): Promise<ChunkSegment[]>;
  /**
   * The snapshot's chunks, in order, that have no segment yet: a chunk it
   * shares with the snapshot before it keeps that one's segment when the
   * chunk before it is shared too (chunk-reuse.ts), and needs none made.
   */
  chunksWithoutSegments(snapshotId: number): Promise<number[]>;
  /**
   * Claims the segment pass of a live snapshot that has not had one (the
   * oldest), for this process alone among all that share the database, and
   * returns its id; null when none is left. A pass stopped midway is given
   * back (`releaseSegmentPass`); one claimed more than SEGMENT_CLAIM_EXPIRES_MS
   * before `now` and never finished (its process died) may be claimed again.
   *
   * @example
   * const snapshotId = await store.claimSegmentPass();
   * if (snapshotId !== null) await writeChunkSegments(store, snapshotId);
   */
  claimSegmentPass(now?: number): Promise<number | null>;
  /** Gives a claimed pass back (it was stopped midway), so that a process makes it again. */
  releaseSegmentPass(snapshotId: number): Promise<void>;
  /** Marks a claimed pass made whole: it is never claimed again. */
  finishSegmentPass(snapshotId: number): Promise<void>;
  /** Deletes superseded snapshots older than `supersededBefore` and abandoned staged ones, with their chunks and segments. */
  sweepSnapshots(supersededBefore: number): Promise<number>;
}
