/**
 * The SQLite adapter: better-sqlite3 in WAL mode, so one writer (the import
 * worker, the CLI) and many readers (HTTP processes) share a file safely.
 * The connection and the account tables are SqliteAccounts'; this class adds
 * imports, snapshots, the live cache, events and webhooks.
 */
import type Database from 'better-sqlite3';
import type { Kind } from '../../domain/kinds.js';
import type { AuditEvent } from '../../domain/audit.js';
import type { ChunkSegment, ImportJob, NewImport, ItemRef, RecordRef, SnapshotSpec, StagedRecord, Store, StoreOptions } from '../store.js';
import * as imports from './sqlite-imports.js';
import * as uploads from './sqlite-uploads.js';
import * as segments from './sqlite-segments.js';
import * as snapshots from './sqlite-snapshots.js';
import { writeSnapshot } from './sqlite-snapshot-writer.js';
import { SqliteAccounts } from './sqlite-accounts.js';
import { LiveCache } from '../live-cache.js';
import * as events from './sqlite-events.js';
import * as webhooks from './sqlite-webhooks.js';
import type { AttemptResult, EventType } from '../events.js';

export class SqliteStore extends SqliteAccounts implements Store {
  readonly backend = 'sqlite' as const;
  readonly heavyImportWriter = false;
  readonly writesWhileStoring = false;
  readonly backsUpToFile = true;
  private readonly liveStmt: Database.Statement;
  private readonly live = new LiveCache();
  /** `PRAGMA data_version` when the live pointers in `live` were read: it moves when another connection commits. */
  private dataVersion = -1;
  private readonly dataVersionStmt: Database.Statement;
  /** Whether data_version was read in this turn of the event loop (see `cachedLiveSnapshotId`). */
  private versionReadThisTurn = false;
  private readonly endTurn = () => {
    this.versionReadThisTurn = false;
  };

  /** `path` is a file path, or `:memory:`. */
  constructor(path: string, options: StoreOptions = {}) {
    super(path, options);
    this.liveStmt = this.db.prepare('SELECT 1');
    this.dataVersionStmt = this.db.prepare('PRAGMA data_version').pluck();
  }

  async ping(): Promise<void> {
    this.liveStmt.get();
  }

  // Imports

  createImport(
    input: NewImport,
    body: AsyncIterable<Buffer>,
    maxBytes: number,
    onCreated?: (id: number) => void,
    audit?: AuditEvent,
  ): Promise<ImportJob> {
    return imports.createImport(this.db, input, body, maxBytes, onCreated, audit);
  }

  async copyImport(id: number, source: string, audit?: AuditEvent): Promise<ImportJob | null> {
    return imports.copyImport(this.db, id, source, audit);
  }

  async importById(id: number): Promise<ImportJob | null> {
    return imports.importById(this.db, id);
  }

  async listImports(companyId: number, kind?: Kind, limit = 50): Promise<ImportJob[]> {
    return imports.listImports(this.db, companyId, kind, limit);
  }

  async claimImport(worker: string): Promise<ImportJob | null> {
    return imports.claimImport(this.db, worker);
  }

  readImportFile(id: number): AsyncIterable<Buffer> {
    return uploads.readImportFile(this.db, id);
  }

  // Not `writesWhileStoring`: the import is applied once its upload is stored.
  readReceivingUpload(): AsyncIterable<Buffer> {
    throw new Error('SQLite does not write a snapshot while an upload is being stored (writesWhileStoring): read it once stored, with readImportFile.');
  }

  async heartbeatImport(id: number, progress: { rowsRead: number; bytesRead: number }): Promise<void> {
    imports.heartbeatImport(this.db, id, progress);
  }

  async failImport(id: number, error: string, report: unknown): Promise<void> {
    imports.failImport(this.db, id, error, report);
  }

  async holdImport(id: number, snapshotId: number, report: unknown): Promise<void> {
    imports.holdImport(this.db, id, snapshotId, report);
  }

  async rejectImport(id: number, report: unknown, audit?: AuditEvent): Promise<void> {
    imports.rejectImport(this.db, id, report, (snapshotId) => snapshots.discardSnapshot(this.db, snapshotId), audit);
  }

  async recoverImports(isGone: (worker: string, heartbeatAt: number) => boolean, maxAttempts: number): Promise<number> {
    return imports.recoverImports(this.db, isGone, maxAttempts);
  }

  // Snapshots

  writeSnapshot(spec: SnapshotSpec, records: AsyncIterable<StagedRecord[]>) {
    return writeSnapshot(this.db, this.path, spec, records);
  }

  async keepLiveSnapshot(snapshotId: number, finish: { importId: number; report: unknown }) {
    snapshots.keepLiveSnapshot(this.db, snapshotId, finish);
  }

  async publishSnapshot(
    snapshotId: number,
    finish?: { importId: number; report: unknown },
    options?: { tombstoneRetentionMs?: number; audit?: AuditEvent },
  ) {
    try {
      snapshots.publishSnapshot(this.db, snapshotId, finish, options?.tombstoneRetentionMs, options?.audit);
    } finally {
      // data_version only moves for other connections' commits.
      this.live.forgetLive();
    }
  }

  async snapshotByPublicId(companyId: number, kind: Kind, publicId: string) {
    return snapshots.snapshotByPublicId(this.db, companyId, kind, publicId);
  }

  async readTombstones(snapshotId: number) {
    return snapshots.readTombstones(this.db, snapshotId);
  }

  async discardSnapshot(snapshotId: number) {
    snapshots.discardSnapshot(this.db, snapshotId);
  }

  async liveSnapshotId(companyId: number, kind: Kind): Promise<number | null> {
    return this.cachedLiveSnapshotId(companyId, kind);
  }

  /**
   * Exact: one `PRAGMA data_version` tells whether anything was committed since the pointers
   * were read. It is read once per turn of the event loop (it was ~6% of a 304), and that is
   * still exact for any request sent after a commit: lookups run while handling I/O, so the
   * read happens after the poll that delivered the request, hence after the commit; and the
   * flag is cleared in the check phase, before the next poll.
   */
  cachedLiveSnapshotId(companyId: number, kind: Kind): number | null {
    if (!this.versionReadThisTurn) {
      this.versionReadThisTurn = true;
      setImmediate(this.endTurn);
      const version = this.dataVersionStmt.get() as number;
      if (version !== this.dataVersion) {
        this.dataVersion = version;
        this.live.forgetLive();
      }
    }
    const hit = this.live.liveSnapshotId(companyId, kind);
    if (hit !== undefined) return hit;
    const id = (this.liveSnapshotStmt.get(companyId, kind) as number | undefined) ?? null;
    this.live.rememberLive(this.live.currentEpoch, companyId, kind, id);
    return id;
  }

  private readonly liveSnapshotStmt = this.prepareLazy(
    'SELECT snapshot_id FROM live_snapshots WHERE company_id = ? AND kind = ?',
  );

  async nextHashAlgorithm(companyId: number, kind: Kind) {
    return snapshots.nextHashAlgorithm(this.db, companyId, kind);
  }

  async snapshotMeta(snapshotId: number) {
    return snapshots.snapshotMeta(this.db, snapshotId);
  }

  async readChunks(snapshotId: number, fromChunk: number, toChunk: number) {
    return snapshots.readChunks(this.db, snapshotId, fromChunk, toChunk);
  }

  readChunksNow(snapshotId: number, fromChunk: number, toChunk: number) {
    return snapshots.readChunks(this.db, snapshotId, fromChunk, toChunk);
  }

  async readItem(snapshotId: number, chunkNo: number, index: number) {
    return snapshots.readItem(this.db, snapshotId, chunkNo, index);
  }

  readItemNow(snapshotId: number, chunkNo: number, index: number) {
    return snapshots.readItem(this.db, snapshotId, chunkNo, index);
  }

  async readItems(snapshotId: number, items: readonly ItemRef[]) {
    return items.map((i) => snapshots.readItem(this.db, snapshotId, i.chunkNo, i.index));
  }

  async readRecordPage(snapshotId: number, afterIdErp: string | null, limit: number) {
    return snapshots.readRecordPage(this.db, snapshotId, afterIdErp, limit);
  }

  async writeSegments(snapshotId: number, list: readonly ChunkSegment[]) {
    segments.writeSegments(this.db, snapshotId, list);
  }

  async releaseSegmentPass(snapshotId: number) {
    segments.releaseSegmentPass(this.db, snapshotId);
  }

  async finishSegmentPass(snapshotId: number) {
    segments.finishSegmentPass(this.db, snapshotId);
  }

  async claimSegmentPass(now = Date.now()) {
    return segments.claimSegmentPass(this.db, now);
  }

  async readThinChunks(snapshotId: number, fromChunk: number, toChunk: number) {
    return snapshots.readThinChunks(this.db, snapshotId, fromChunk, toChunk);
  }

  async readIndex(snapshotId: number, name: string) {
    return snapshots.readIndex(this.db, snapshotId, name);
  }

  async readSegments(snapshotId: number, fromChunk: number, toChunk: number) {
    return segments.readSegments(this.db, snapshotId, fromChunk, toChunk);
  }

  async chunksWithoutSegments(snapshotId: number) {
    return segments.chunksWithoutSegments(this.db, snapshotId);
  }

  async findLiveRecord(companyId: number, kind: Kind, idErp: string) {
    return this.cachedLiveRecord(companyId, kind, idErp);
  }

  /** better-sqlite3 is synchronous: always known. */
  cachedLiveRecord(companyId: number, kind: Kind, idErp: string) {
    const snapshotId = this.cachedLiveSnapshotId(companyId, kind);
    return snapshotId === null ? null : { snapshotId, record: this.cachedRecord(snapshotId, idErp) };
  }

  async findRecord(snapshotId: number, idErp: string) {
    return this.cachedRecord(snapshotId, idErp);
  }

  /** better-sqlite3 is synchronous: always known. */
  cachedRecord(snapshotId: number, idErp: string): RecordRef | null {
    const hit = this.live.record(snapshotId, idErp);
    if (hit) return hit;
    const record = snapshots.findRecord(this.db, snapshotId, idErp);
    if (record) this.live.rememberRecord(snapshotId, idErp, record);
    return record;
  }

  // Events and webhooks

  async listEvents(companyId: number, since: number | null, offset: number, limit: number) {
    return events.listEvents(this.db, companyId, since, offset, limit);
  }

  async sweepEvents(before: number) {
    return events.sweepEvents(this.db, before);
  }

  async createWebhookEndpoint(input: { companyId: number; url: string; eventTypes: EventType[]; secret: string }, audit?: AuditEvent) {
    return webhooks.createEndpoint(this.db, input, audit);
  }

  async webhookEndpointById(id: number) {
    return webhooks.endpointById(this.db, id);
  }

  async listWebhookEndpoints(companyId: number) {
    return webhooks.listEndpoints(this.db, companyId);
  }

  async hasEnabledWebhookEndpoint() {
    return webhooks.anyEnabledEndpoint(this.db);
  }

  async setWebhookEndpointEnabled(id: number, enabled: boolean, audit?: AuditEvent) {
    return webhooks.setEndpointEnabled(this.db, id, enabled, audit);
  }

  async deleteWebhookEndpoint(id: number, audit?: AuditEvent) {
    return webhooks.deleteEndpoint(this.db, id, audit);
  }

  async queueDelivery(endpointId: number, event: { publicId: string; type: string; body: string }, claim?: { worker: string; leaseMs: number }) {
    return webhooks.queueDelivery(this.db, endpointId, event, claim);
  }

  async redeliver(deliveryId: number) {
    return webhooks.redeliver(this.db, deliveryId);
  }

  async deliveryById(id: number) {
    return webhooks.deliveryById(this.db, id);
  }

  async listDeliveries(endpointId: number, limit: number) {
    return webhooks.listDeliveries(this.db, endpointId, limit);
  }

  async listAttempts(endpointId: number, limit: number) {
    return webhooks.listAttempts(this.db, endpointId, limit);
  }

  async claimDeliveries(worker: string, limit: number, leaseMs: number, skipEndpoints: readonly number[], now = Date.now()) {
    return webhooks.claimDeliveries(this.db, worker, limit, leaseMs, skipEndpoints, now);
  }

  async finishDelivery(deliveryId: number, worker: string, result: AttemptResult) {
    return webhooks.finishDelivery(this.db, deliveryId, worker, result);
  }

  async releaseDeliveries(isGone: (worker: string) => boolean) {
    return webhooks.releaseDeliveries(this.db, isGone);
  }

  async sweepUploads(endedBefore: number) {
    return uploads.sweepUploads(this.db, endedBefore);
  }

  async packUpload(afterId: number, endedBefore?: number) {
    return uploads.packUpload(this.db, afterId, endedBefore);
  }

  async sweepSnapshots(supersededBefore: number) {
    return snapshots.sweepSnapshots(this.db, supersededBefore);
  }
}
