/**
 * The PostgreSQL adapter, for several instances over one database: uploads
 * and the import queue live in the database, claims use `SKIP LOCKED`, and
 * bulk loads go through COPY. Losing the server surfaces as
 * StoreUnavailableError (see postgres-connection.ts), never as a hang.
 * The connection's account tables are PostgresAccounts'; this class adds
 * imports, snapshots, the live listener, events and webhooks.
 */
import type { Kind } from '../../domain/kinds.js';
import type { AuditEvent } from '../../domain/audit.js';
import type { ChunkSegment, ImportJob, NewImport, ItemRef, SnapshotSpec, StagedRecord, RecordRef, Store, StoreOptions } from '../store.js';
import { LiveCache } from '../live-cache.js';
import { Db } from './postgres-connection.js';
import { LiveListener } from './postgres-live-listener.js';
import { PostgresAccounts } from './postgres-accounts.js';
import * as imports from './postgres-imports.js';
import * as uploads from './postgres-uploads.js';
import * as segments from './postgres-segments.js';
import * as snapshots from './postgres-snapshots.js';
import * as events from './postgres-events.js';
import * as webhooks from './postgres-webhooks.js';
import type { AttemptResult, EventType } from '../events.js';

export class PostgresStore extends PostgresAccounts implements Store {
  readonly backend = 'postgres' as const;
  readonly heavyImportWriter = true;
  readonly writesWhileStoring = true;
  readonly backsUpToFile = false;

  private readonly live = new LiveCache();
  /** Only a serving process listens (one more connection); without it, live pointers are read every time. */
  private readonly listener: LiveListener | null;

  private constructor(db: Db, url: string, options: StoreOptions) {
    super(db);
    this.listener = options.servesRequests ? new LiveListener(url, () => this.live.forgetLive()) : null;
    this.listener?.start();
  }

  /**
   * A store over the database at `url` (`postgres://user@host:port/db`).
   * Connects lazily: an unreachable server shows on first use, as
   * StoreUnavailableError.
   */
  static async connect(url: string, options: StoreOptions = {}): Promise<Store> {
    return new PostgresStore(new Db(url), url, options);
  }

  async close(): Promise<void> {
    await this.listener?.close();
    await this.db.close();
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

  copyImport(id: number, source: string, audit?: AuditEvent): Promise<ImportJob | null> {
    return imports.copyImport(this.db, id, source, audit);
  }

  importById(id: number): Promise<ImportJob | null> {
    return imports.importById(this.db, id);
  }

  listImports(companyId: number, kind?: Kind, limit = 50): Promise<ImportJob[]> {
    return imports.listImports(this.db, companyId, kind, limit);
  }

  claimImport(worker: string): Promise<ImportJob | null> {
    return imports.claimImport(this.db, worker);
  }

  readImportFile(id: number): AsyncIterable<Buffer> {
    return uploads.readImportFile(this.db, id);
  }

  readReceivingUpload(id: number, signal: AbortSignal): AsyncIterable<Buffer> {
    return uploads.readReceivingUpload(this.db, id, signal);
  }

  heartbeatImport(id: number, progress: { rowsRead: number; bytesRead: number }): Promise<void> {
    return imports.heartbeatImport(this.db, id, progress);
  }

  failImport(id: number, error: string, report: unknown): Promise<void> {
    return imports.failImport(this.db, id, error, report);
  }

  holdImport(id: number, snapshotId: number, report: unknown): Promise<void> {
    return imports.holdImport(this.db, id, snapshotId, report);
  }

  async rejectImport(id: number, report: unknown, audit?: AuditEvent): Promise<void> {
    // The import is marked first: a crash in between leaves an unpublished snapshot the sweep removes.
    const snapshotId = await imports.rejectImport(this.db, id, report, audit);
    if (snapshotId !== null) await snapshots.discardSnapshot(this.db, snapshotId);
  }

  recoverImports(isGone: (worker: string, heartbeatAt: number) => boolean, maxAttempts: number): Promise<number> {
    return imports.recoverImports(this.db, isGone, maxAttempts);
  }

  // Snapshots

  writeSnapshot(spec: SnapshotSpec, records: AsyncIterable<StagedRecord[]>) {
    return snapshots.writeSnapshot(this.db, spec, records);
  }

  async keepLiveSnapshot(snapshotId: number, finish: { importId: number; report: unknown }) {
    await snapshots.keepLiveSnapshot(this.db, snapshotId, finish);
  }

  async publishSnapshot(
    snapshotId: number,
    finish?: { importId: number; report: unknown },
    options?: { tombstoneRetentionMs?: number; audit?: AuditEvent },
  ) {
    try {
      await snapshots.publishSnapshot(this.db, snapshotId, finish, options?.tombstoneRetentionMs, options?.audit);
    } finally {
      // This process reads its own publication at once, before its notification comes back.
      this.live.forgetLive();
    }
  }

  snapshotByPublicId(companyId: number, kind: Kind, publicId: string) {
    return snapshots.snapshotByPublicId(this.db, companyId, kind, publicId);
  }

  readTombstones(snapshotId: number) {
    return snapshots.readTombstones(this.db, snapshotId);
  }

  async discardSnapshot(snapshotId: number) {
    await snapshots.discardSnapshot(this.db, snapshotId);
  }

  async liveSnapshotId(companyId: number, kind: Kind): Promise<number | null> {
    if (!this.listener?.isListening) return snapshots.liveSnapshotId(this.db, companyId, kind);
    const hit = this.live.liveSnapshotId(companyId, kind);
    if (hit !== undefined) return hit;
    const epoch = this.live.currentEpoch;
    const id = await snapshots.liveSnapshotId(this.db, companyId, kind);
    // Not kept when a notification arrived meanwhile: the answer may predate it.
    this.live.rememberLive(epoch, companyId, kind, id);
    return id;
  }

  nextHashAlgorithm(companyId: number, kind: Kind) {
    return snapshots.nextHashAlgorithm(this.db, companyId, kind);
  }

  snapshotMeta(snapshotId: number) {
    return snapshots.snapshotMeta(this.db, snapshotId);
  }

  readChunks(snapshotId: number, fromChunk: number, toChunk: number) {
    return snapshots.readChunks(this.db, snapshotId, fromChunk, toChunk);
  }

  readItem(snapshotId: number, chunkNo: number, index: number) {
    return snapshots.readItem(this.db, snapshotId, chunkNo, index);
  }

  readItems(snapshotId: number, items: readonly ItemRef[]) {
    return snapshots.readItems(this.db, snapshotId, items);
  }

  writeSegments(snapshotId: number, list: readonly ChunkSegment[]) {
    return segments.writeSegments(this.db, snapshotId, list);
  }

  async releaseSegmentPass(snapshotId: number) {
    await segments.releaseSegmentPass(this.db, snapshotId);
  }

  finishSegmentPass(snapshotId: number) {
    return segments.finishSegmentPass(this.db, snapshotId);
  }

  claimSegmentPass(now = Date.now()) {
    return segments.claimSegmentPass(this.db, now);
  }

  readThinChunks(snapshotId: number, fromChunk: number, toChunk: number) {
    return snapshots.readThinChunks(this.db, snapshotId, fromChunk, toChunk);
  }

  readIndex(snapshotId: number, name: string) {
    return snapshots.readIndex(this.db, snapshotId, name);
  }

  readSegments(snapshotId: number, fromChunk: number, toChunk: number) {
    return segments.readSegments(this.db, snapshotId, fromChunk, toChunk);
  }

  chunksWithoutSegments(snapshotId: number) {
    return segments.chunksWithoutSegments(this.db, snapshotId);
  }

  async findLiveRecord(companyId: number, kind: Kind, idErp: string) {
    // Without the listener, one round trip answers both.
    if (!this.listener?.isListening) return snapshots.findLiveRecord(this.db, companyId, kind, idErp);
    const snapshotId = await this.liveSnapshotId(companyId, kind);
    return snapshotId === null ? null : { snapshotId, record: await this.findRecord(snapshotId, idErp) };
  }

  /** Known while the listener is up and both the live pointer and the record's position are kept; a missing record is never kept. */
  cachedLiveRecord(companyId: number, kind: Kind, idErp: string) {
    if (!this.listener?.isListening) return undefined;
    const snapshotId = this.live.liveSnapshotId(companyId, kind);
    if (snapshotId === undefined) return undefined;
    if (snapshotId === null) return null;
    const record = this.live.record(snapshotId, idErp);
    return record === undefined ? undefined : { snapshotId, record };
  }

  /** Known while the listener is up and the live pointer is kept. */
  cachedLiveSnapshotId(companyId: number, kind: Kind) {
    return this.listener?.isListening ? this.live.liveSnapshotId(companyId, kind) : undefined;
  }

  /** Known when the record's position is kept (snapshots never change: no listener needed); a missing record is never kept. */
  cachedRecord(snapshotId: number, idErp: string) {
    return this.live.record(snapshotId, idErp);
  }

  readRecordPage(snapshotId: number, afterIdErp: string | null, limit: number) {
    return snapshots.readRecordPage(this.db, snapshotId, afterIdErp, limit);
  }

  async findRecord(snapshotId: number, idErp: string): Promise<RecordRef | null> {
    const hit = this.live.record(snapshotId, idErp);
    if (hit) return hit;
    const record = await snapshots.findRecord(this.db, snapshotId, idErp);
    if (record) this.live.rememberRecord(snapshotId, idErp, record);
    return record;
  }

  // Events and webhooks

  listEvents(companyId: number, since: number | null, offset: number, limit: number) {
    return events.listEvents(this.db, companyId, since, offset, limit);
  }

  sweepEvents(before: number) {
    return events.sweepEvents(this.db, before);
  }

  createWebhookEndpoint(input: { companyId: number; url: string; eventTypes: EventType[]; secret: string }, audit?: AuditEvent) {
    return webhooks.createEndpoint(this.db, input, audit);
  }

  webhookEndpointById(id: number) {
    return webhooks.endpointById(this.db, id);
  }

  listWebhookEndpoints(companyId: number) {
    return webhooks.listEndpoints(this.db, companyId);
  }

  hasEnabledWebhookEndpoint() {
    return webhooks.anyEnabledEndpoint(this.db);
  }

  setWebhookEndpointEnabled(id: number, enabled: boolean, audit?: AuditEvent) {
    return webhooks.setEndpointEnabled(this.db, id, enabled, audit);
  }

  deleteWebhookEndpoint(id: number, audit?: AuditEvent) {
    return webhooks.deleteEndpoint(this.db, id, audit);
  }

  queueDelivery(endpointId: number, event: { publicId: string; type: string; body: string }, claim?: { worker: string; leaseMs: number }) {
    return webhooks.queueDelivery(this.db, endpointId, event, claim);
  }

  redeliver(deliveryId: number) {
    return webhooks.redeliver(this.db, deliveryId);
  }

  deliveryById(id: number) {
    return webhooks.deliveryById(this.db, id);
  }

  listDeliveries(endpointId: number, limit: number) {
    return webhooks.listDeliveries(this.db, endpointId, limit);
  }

  listAttempts(endpointId: number, limit: number) {
    return webhooks.listAttempts(this.db, endpointId, limit);
  }

  claimDeliveries(worker: string, limit: number, leaseMs: number, skipEndpoints: readonly number[], now = Date.now()) {
    return webhooks.claimDeliveries(this.db, worker, limit, leaseMs, skipEndpoints, now);
  }

  finishDelivery(deliveryId: number, worker: string, result: AttemptResult) {
    return webhooks.finishDelivery(this.db, deliveryId, worker, result);
  }

  releaseDeliveries(isGone: (worker: string) => boolean) {
    return webhooks.releaseDeliveries(this.db, isGone);
  }

  sweepUploads(endedBefore: number) {
    return uploads.sweepUploads(this.db, endedBefore);
  }

  packUpload(afterId: number, endedBefore?: number) {
    return uploads.packUpload(this.db, afterId, endedBefore);
  }

  sweepSnapshots(supersededBefore: number) {
    return snapshots.sweepSnapshots(this.db, supersededBefore);
  }
}
