/**
 * The SQLite adapter: better-sqlite3 in WAL mode, so one writer (the import
 * worker, the CLI) and many readers (HTTP processes) share a file safely.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { CredentialScope } from '../../domain/api-keys.js';
import type { Kind } from '../../domain/kinds.js';
import type { AuditEvent } from '../../domain/audit.js';
import type { ThrottlePolicy } from '../../domain/sign-in-policy.js';
import {
  ConflictError,
  type AuditQuery,
  type ChunkSegment,
  type Company,
  type Credential,
  type ImportJob,
  type RecordRef,
  type SnapshotSpec,
  type StagedRecord,
  type Store,
  type StoreOptions,
  type User,
} from '../store.js';
import * as audits from './sqlite-audit.js';
import * as backups from './sqlite-backup.js';
import * as imports from './sqlite-imports.js';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.js';
import { toCompany, toCredential, toUser, type CompanyRow, type CredentialRow, type UserRow } from '../row-mappers.js';
import * as segments from './sqlite-segments.js';
import * as snapshots from './sqlite-snapshots.js';
import { writeSnapshot } from './sqlite-snapshot-writer.js';
import { cachedStatement } from './sqlite-statements.js';
import { LiveCache } from '../live-cache.js';
import * as events from './sqlite-events.js';
import * as webhooks from './sqlite-webhooks.js';
import type { AttemptResult, EventType } from '../events.js';

export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  readonly writerBoundsImport = false;
  readonly writesWhileStoring = false;
  readonly backsUpToFile = true;
  private readonly db: Database.Database;
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
  constructor(
    readonly path: string,
    options: StoreOptions = {},
  ) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    // Items are stored as ~64 KiB chunk blobs: with 16 KiB pages (not the default 4 KiB) a chunk
    // spans 4 overflow pages instead of 16, and writing a snapshot costs about half as much.
    // Only takes effect on a new, empty database (before WAL mode and the first table).
    this.db.pragma('page_size = 16384');
    this.db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode is durable across process crashes; only an OS crash can lose the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 10000');
    this.db.pragma('foreign_keys = ON');
    // 16 MiB of pages: items are cached in process as chunks (CHUNK_CACHE_MB), so SQLite's own
    // cache only needs the small hot tables (live snapshots, records' index, credentials).
    this.db.pragma('cache_size = -16384');
    // A checkpoint copies the WAL into the database, with an fsync: work for the import worker's
    // thread (after each snapshot and in its housekeeping), never for a thread answering requests.
    if (options.servesRequests) this.db.pragma('wal_autocheckpoint = 0');
    this.liveStmt = this.db.prepare('SELECT 1');
    this.dataVersionStmt = this.db.prepare('PRAGMA data_version').pluck();
  }

  async migrate(options: { to?: number } = {}): Promise<void> {
    const to = Math.min(options.to ?? SQLITE_MIGRATIONS.length, SQLITE_MIGRATIONS.length);
    this.db.transaction(() => {
      const version = this.db.pragma('user_version', { simple: true }) as number;
      for (let v = version; v < to; v++) this.db.exec(SQLITE_MIGRATIONS[v]!);
      // Never lowered: an older release opening a newer database (during a rolling upgrade)
      // must not make the newer one apply its migrations a second time.
      if (version < to) this.db.pragma(`user_version = ${to}`);
    }).immediate();
  }

  backup(file: string) {
    return backups.backup(this.db, file);
  }

  async storageSize() {
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    return { bytes: pages * pageSize, freeBytes: free * pageSize };
  }

  async isEmpty() {
    return backups.isEmpty(this.db);
  }

  restore(file: string) {
    return backups.restore(this.db, this.path, file);
  }

  async schemaVersion() {
    return { current: this.db.pragma('user_version', { simple: true }) as number, latest: SQLITE_MIGRATIONS.length };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  async ping(): Promise<void> {
    this.liveStmt.get();
  }

  // Companies

  async createCompany(slug: string, name: string): Promise<Company> {
    try {
      const r = this.db
        .prepare('INSERT INTO companies (slug, name, created_at) VALUES (?, ?, ?) RETURNING *')
        .get(slug, name, Date.now()) as CompanyRow;
      return toCompany(r);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new ConflictError(`A company with slug "${slug}" already exists.`);
      }
      throw err;
    }
  }

  async companyBySlug(slug: string): Promise<Company | null> {
    const r = this.db.prepare('SELECT * FROM companies WHERE slug = ?').get(slug) as CompanyRow | undefined;
    return r ? toCompany(r) : null;
  }

  async companyById(id: number): Promise<Company | null> {
    const r = this.db.prepare('SELECT * FROM companies WHERE id = ?').get(id) as CompanyRow | undefined;
    return r ? toCompany(r) : null;
  }

  async listCompanies(): Promise<Company[]> {
    return (this.db.prepare('SELECT * FROM companies ORDER BY slug').all() as CompanyRow[]).map(toCompany);
  }

  // Credentials

  async createCredential(input: {
    companyId: number;
    scope: CredentialScope;
    prefix: string;
    secretHash: Buffer;
    label: string | null;
    expiresAt?: number | null;
  }, audit?: AuditEvent): Promise<Credential> {
    const r = this.db.transaction(() => {
      const row = this.db
        .prepare(
          `INSERT INTO credentials (company_id, scope, prefix, secret_hash, label, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        )
        .get(input.companyId, input.scope, input.prefix, input.secretHash, input.label, Date.now(), input.expiresAt ?? null) as CredentialRow;
      if (audit) audits.insertAudit(this.db, audit);
      return row;
    })();
    return toCredential(r);
  }

  async credentialByPrefix(prefix: string): Promise<Credential | null> {
    const r = cachedStatement(this.db, 'SELECT * FROM credentials WHERE prefix = ?').get(prefix) as CredentialRow | undefined;
    return r ? toCredential(r) : null;
  }

  async listCredentials(companyId: number, scope: CredentialScope): Promise<Credential[]> {
    const rows = this.db
      .prepare('SELECT * FROM credentials WHERE company_id = ? AND scope = ? ORDER BY id')
      .all(companyId, scope) as CredentialRow[];
    return rows.map(toCredential);
  }

  async revokeCredential(prefix: string, audit?: AuditEvent): Promise<Credential | null> {
    this.db.transaction(() => {
      const r = this.db.prepare('UPDATE credentials SET revoked_at = ? WHERE prefix = ? AND revoked_at IS NULL').run(Date.now(), prefix);
      if (r.changes > 0 && audit) audits.insertAudit(this.db, audit);
    })();
    return this.credentialByPrefix(prefix);
  }

  async touchCredentials(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    const stmt = this.db.prepare(
      'UPDATE credentials SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE prefix = ?',
    );
    this.db.transaction(() => {
      for (const [prefix, at] of lastUsed) stmt.run(at, prefix);
    })();
  }

  // Settings

  async getSetting(name: string): Promise<string | null> {
    return (this.db.prepare('SELECT value FROM settings WHERE name = ?').pluck().get(name) as string | undefined) ?? null;
  }

  async setSetting(name: string, value: string, audit?: AuditEvent): Promise<void> {
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value')
        .run(name, value);
      if (audit) audits.insertAudit(this.db, audit);
    })();
  }

  async initSetting(name: string, value: string): Promise<string> {
    this.db.prepare('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, value);
    return (await this.getSetting(name))!;
  }

  // Users

  async createUser(input: { companyId: number; email: string; passwordHash: string }, audit?: AuditEvent): Promise<User> {
    try {
      const r = this.db.transaction(() => {
        const row = this.db
          .prepare('INSERT INTO users (company_id, email, password_hash, created_at) VALUES (?, ?, ?, ?) RETURNING *')
          .get(input.companyId, input.email, input.passwordHash, Date.now()) as UserRow;
        if (audit) audits.insertAudit(this.db, audit, { user_id: row.id });
        return row;
      })();
      return toUser(r);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new ConflictError(`A user with email "${input.email}" already exists.`);
      }
      throw err;
    }
  }

  async userByEmail(email: string): Promise<User | null> {
    const r = this.db.prepare('SELECT * FROM users WHERE email = ?').get(email) as UserRow | undefined;
    return r ? toUser(r) : null;
  }

  async userById(id: number): Promise<User | null> {
    const r = this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined;
    return r ? toUser(r) : null;
  }

  // Mappings

  async getMapping(companyId: number, kind: Kind): Promise<Record<string, string>> {
    const raw = this.db
      .prepare('SELECT mapping FROM mappings WHERE company_id = ? AND kind = ?')
      .pluck()
      .get(companyId, kind) as string | undefined;
    return raw ? JSON.parse(raw) : {};
  }

  async setMapping(companyId: number, kind: Kind, mapping: Record<string, string>, audit?: AuditEvent): Promise<void> {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO mappings (company_id, kind, mapping) VALUES (?, ?, ?)
           ON CONFLICT (company_id, kind) DO UPDATE SET mapping = excluded.mapping`,
        )
        .run(companyId, kind, JSON.stringify(mapping));
      if (audit) audits.insertAudit(this.db, audit);
    })();
  }

  // Audit trail and sign-in failures

  async recordAudit(event: AuditEvent): Promise<void> {
    audits.insertAudit(this.db, event);
  }

  async listAudit(companyId: number, query: AuditQuery) {
    return audits.listAudit(this.db, companyId, query);
  }

  async sweepAudit(before: number) {
    return audits.sweepAudit(this.db, before);
  }

  async signInFailed(email: string, now: number, policy: ThrottlePolicy) {
    return audits.signInFailed(this.db, email, now, policy);
  }

  async signInLockedUntil(email: string) {
    return audits.signInLockedUntil(this.db, email);
  }

  async signInSucceeded(email: string) {
    audits.signInSucceeded(this.db, email);
  }

  async sweepSignInFailures(now: number) {
    return audits.sweepSignInFailures(this.db, now);
  }

  // Imports

  createImport(
    input: { companyId: number; kind: Kind; filename: string; source: string },
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
    return imports.readImportFile(this.db, id);
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
  private cachedLiveSnapshotId(companyId: number, kind: Kind): number | null {
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

  private cachedRecord(snapshotId: number, idErp: string): RecordRef | null {
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
    return imports.sweepUploads(this.db, endedBefore);
  }

  async sweepSnapshots(supersededBefore: number) {
    return snapshots.sweepSnapshots(this.db, supersededBefore);
  }

  /** A statement prepared on first use: the schema may not exist before `migrate`. */
  private prepareLazy(sql: string) {
    let stmt: Database.Statement | undefined;
    return {
      get: (...args: unknown[]) => {
        stmt ??= this.db.prepare(sql).pluck();
        return stmt.get(...args);
      },
    };
  }
}
