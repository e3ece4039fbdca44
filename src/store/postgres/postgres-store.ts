/**
 * The PostgreSQL adapter, for several instances over one database: uploads
 * and the import queue live in the database, claims use `SKIP LOCKED`, and
 * bulk loads go through COPY. Losing the server surfaces as
 * StoreUnavailableError (see postgres-connection.ts), never as a hang.
 */
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
  type SnapshotSpec,
  type StagedRecord,
  type RecordRef,
  type Store,
  type StoreOptions,
  type User,
} from '../store.js';
import { LiveCache } from '../live-cache.js';
import { Db } from './postgres-connection.js';
import { LiveListener } from './postgres-live-listener.js';
import * as audits from './postgres-audit.js';
import * as imports from './postgres-imports.js';
import { migrate, schemaVersion } from './postgres-migrations.js';
import { toCompany, toCredential, toUser, type CompanyRow, type CredentialRow, type UserRow } from '../row-mappers.js';
import * as segments from './postgres-segments.js';
import * as snapshots from './postgres-snapshots.js';
import * as events from './postgres-events.js';
import * as webhooks from './postgres-webhooks.js';
import type { AttemptResult, EventType } from '../events.js';

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (err: unknown) => (err as { code?: unknown }).code === UNIQUE_VIOLATION;
/** PostgreSQL text cannot hold NUL: a lookup key with one matches nothing. */
const hasNul = (s: string) => s.includes('\0');
/** A sign-in key PostgreSQL text can hold (a NUL typed in the form becomes U+FFFD). */
const textKey = (s: string) => s.replaceAll('\0', '\uFFFD');

const PG_BACKUP =
  'On PostgreSQL, back up with "pg_dump -Fc" and restore with "pg_restore" (see docs/operations.md, "Backups"); "mirador backup" and "mirador restore" are for SQLite.';

export class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  readonly writerBoundsImport = true;
  readonly writesWhileStoring = true;
  readonly backsUpToFile = false;

  private readonly live = new LiveCache();
  /** Only a serving process listens (one more connection); without it, live pointers are read every time. */
  private readonly listener: LiveListener | null;

  private constructor(
    private readonly db: Db,
    url: string,
    options: StoreOptions,
  ) {
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

  migrate(options: { to?: number } = {}): Promise<void> {
    return migrate(this.db, options.to);
  }

  async close(): Promise<void> {
    await this.listener?.close();
    await this.db.close();
  }

  // PostgreSQL has its own consistent, online tools: pg_dump -Fc and pg_restore (docs/operations.md).
  async backup(): Promise<{ bytes: number }> {
    throw new Error(PG_BACKUP);
  }

  async restore(): Promise<void> {
    throw new Error(PG_BACKUP);
  }

  async storageSize() {
    const r = await this.db.one<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
    return { bytes: Number(r!.bytes), freeBytes: 0 };
  }

  schemaVersion() {
    return schemaVersion(this.db);
  }

  async isEmpty(): Promise<boolean> {
    return (await this.db.one<{ n: number }>('SELECT count(*)::int AS n FROM companies'))!.n === 0;
  }

  async ping(): Promise<void> {
    await this.db.run('SELECT 1');
  }

  // Companies

  async createCompany(slug: string, name: string): Promise<Company> {
    try {
      const r = await this.db.one<CompanyRow>(
        'INSERT INTO companies (slug, name, created_at) VALUES ($1, $2, $3) RETURNING *',
        [slug, name, Date.now()],
      );
      return toCompany(r!);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A company with slug "${slug}" already exists.`);
      throw err;
    }
  }

  async companyBySlug(slug: string): Promise<Company | null> {
    if (hasNul(slug)) return null;
    const r = await this.db.one<CompanyRow>('SELECT * FROM companies WHERE slug = $1', [slug]);
    return r ? toCompany(r) : null;
  }

  async companyById(id: number): Promise<Company | null> {
    const r = await this.db.one<CompanyRow>('SELECT * FROM companies WHERE id = $1', [id]);
    return r ? toCompany(r) : null;
  }

  async listCompanies(): Promise<Company[]> {
    return (await this.db.rows<CompanyRow>('SELECT * FROM companies ORDER BY slug')).map(toCompany);
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
    const r = await this.db.tx(async (c) => {
      const row = await c.one<CredentialRow>(
        `INSERT INTO credentials (company_id, scope, prefix, secret_hash, label, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [input.companyId, input.scope, input.prefix, input.secretHash, input.label, Date.now(), input.expiresAt ?? null],
      );
      if (audit) await audits.insertAudit(c, audit);
      return row;
    });
    return toCredential(r!);
  }

  async credentialByPrefix(prefix: string): Promise<Credential | null> {
    if (hasNul(prefix)) return null;
    // Columns named, not *: a prepared statement whose result type a migration changed fails
    // ("cached plan must not change result type") on every instance still running.
    const r = await this.db.one<CredentialRow>(
      `SELECT id, company_id, scope, prefix, secret_hash, label, created_at, last_used_at, revoked_at, expires_at
       FROM credentials WHERE prefix = $1`,
      [prefix],
      'mirador_credential',
    );
    return r ? toCredential(r) : null;
  }

  async listCredentials(companyId: number, scope: CredentialScope): Promise<Credential[]> {
    const rows = await this.db.rows<CredentialRow>(
      `SELECT id, company_id, scope, prefix, secret_hash, label, created_at, last_used_at, revoked_at, expires_at
       FROM credentials WHERE company_id = $1 AND scope = $2 ORDER BY id`,
      [companyId, scope],
    );
    return rows.map(toCredential);
  }

  async revokeCredential(prefix: string, audit?: AuditEvent): Promise<Credential | null> {
    if (hasNul(prefix)) return null;
    await this.db.tx(async (c) => {
      // Revoking twice keeps the first time: the statement only touches an active key.
      const changed = await c.run('UPDATE credentials SET revoked_at = $1 WHERE prefix = $2 AND revoked_at IS NULL', [Date.now(), prefix]);
      if (changed > 0 && audit) await audits.insertAudit(c, audit);
    });
    return this.credentialByPrefix(prefix);
  }

  async touchCredentials(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    // One statement for the whole batch; a time never moves backwards.
    await this.db.run(
      `UPDATE credentials c SET last_used_at = greatest(coalesce(c.last_used_at, 0), u.at)
       FROM unnest($1::text[], $2::bigint[]) AS u(prefix, at) WHERE c.prefix = u.prefix`,
      [[...lastUsed.keys()], [...lastUsed.values()]],
    );
  }

  // Settings

  async getSetting(name: string): Promise<string | null> {
    return (await this.db.one<{ value: string }>('SELECT value FROM settings WHERE name = $1', [name]))?.value ?? null;
  }

  async setSetting(name: string, value: string, audit?: AuditEvent): Promise<void> {
    await this.db.tx(async (c) => {
      await c.run(
        'INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
        [name, value],
      );
      if (audit) await audits.insertAudit(c, audit);
    });
  }

  async initSetting(name: string, value: string): Promise<string> {
    // Two statements on purpose: when another instance inserts first, the
    // INSERT waits for it and does nothing, and only a new statement sees its row.
    await this.db.run('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, value]);
    return (await this.getSetting(name))!;
  }

  // Users

  async createUser(input: { companyId: number; email: string; passwordHash: string }, audit?: AuditEvent): Promise<User> {
    try {
      const r = await this.db.tx(async (c) => {
        const row = (await c.one<UserRow>(
          'INSERT INTO users (company_id, email, password_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING *',
          [input.companyId, input.email, input.passwordHash, Date.now()],
        ))!;
        if (audit) await audits.insertAudit(c, audit, { user_id: row.id });
        return row;
      });
      return toUser(r);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A user with email "${input.email}" already exists.`);
      throw err;
    }
  }

  async userByEmail(email: string): Promise<User | null> {
    if (hasNul(email)) return null;
    const r = await this.db.one<UserRow>('SELECT * FROM users WHERE email = $1', [email]);
    return r ? toUser(r) : null;
  }

  async userById(id: number): Promise<User | null> {
    const r = await this.db.one<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
    return r ? toUser(r) : null;
  }

  // Mappings

  async getMapping(companyId: number, kind: Kind): Promise<Record<string, string>> {
    const r = await this.db.one<{ mapping: string }>('SELECT mapping FROM mappings WHERE company_id = $1 AND kind = $2', [
      companyId,
      kind,
    ]);
    return r ? JSON.parse(r.mapping) : {};
  }

  async setMapping(companyId: number, kind: Kind, mapping: Record<string, string>, audit?: AuditEvent): Promise<void> {
    await this.db.tx(async (c) => {
      await c.run(
        `INSERT INTO mappings (company_id, kind, mapping) VALUES ($1, $2, $3)
         ON CONFLICT (company_id, kind) DO UPDATE SET mapping = excluded.mapping`,
        [companyId, kind, JSON.stringify(mapping)],
      );
      if (audit) await audits.insertAudit(c, audit);
    });
  }

  // Audit trail and sign-in failures

  recordAudit(event: AuditEvent): Promise<void> {
    return audits.insertAudit(this.db, event);
  }

  listAudit(companyId: number, query: AuditQuery) {
    return audits.listAudit(this.db, companyId, query);
  }

  sweepAudit(before: number) {
    return audits.sweepAudit(this.db, before);
  }

  signInFailed(email: string, now: number, policy: ThrottlePolicy) {
    return audits.signInFailed(this.db, textKey(email), now, policy);
  }

  signInLockedUntil(email: string) {
    return audits.signInLockedUntil(this.db, textKey(email));
  }

  signInSucceeded(email: string) {
    return audits.signInSucceeded(this.db, textKey(email));
  }

  sweepSignInFailures(now: number) {
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
    return imports.readImportFile(this.db, id);
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
    return imports.sweepUploads(this.db, endedBefore);
  }

  sweepSnapshots(supersededBefore: number) {
    return snapshots.sweepSnapshots(this.db, supersededBefore);
  }
}
