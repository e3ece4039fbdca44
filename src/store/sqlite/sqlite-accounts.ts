/**
 * The SQLite adapter's connection and its small tables: companies, credentials,
 * users, settings, mappings, the audit trail and sign-in failures, plus the
 * schema, backups and size. SqliteStore (sqlite-store.ts) adds imports,
 * snapshots, events and webhooks on the same connection.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { CredentialScope } from '../../domain/api-keys.js';
import type { Kind } from '../../domain/kinds.js';
import type { AuditEvent } from '../../domain/audit.js';
import type { ThrottlePolicy } from '../../domain/sign-in-policy.js';
import { ConflictError, type AuditQuery, type Company, type Credential, type StoreOptions, type User } from '../store.js';
import * as audits from './sqlite-audit.js';
import * as backups from './sqlite-backup.js';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.js';
import { cachedStatement } from './sqlite-statements.js';
import { toCompany, toCredential, toUser, type CompanyRow, type CredentialRow, type UserRow } from '../row-mappers.js';

/** SQLite's page cache when the process's read budget does not say otherwise (see `sqlitePageCacheKiB`). */
export const DEFAULT_PAGE_CACHE_KIB = 16 * 1024;
/** The least page cache: the hot tables' upper pages (live snapshots, the records' index, credentials). */
const MIN_PAGE_CACHE_KIB = 4 * 1024;

/**
 * SQLite's own page cache for a connection whose process has `readCacheBytes`
 * of read caches: an eighth of them, from 4 to 16 MiB. Items are cached in
 * process as chunks (CHUNK_CACHE_MB), so SQLite's cache only needs the small
 * hot tables. Under a small budget that cache is full all the time (a
 * thousand companies' index pages and the chunks' overflow pages pass through
 * it) and counts in the RSS the budget is held to. Measured (quick tenants
 * bench, CHUNK_CACHE_MB=32, the Zipf mix, in alternation): 4 MiB against 16
 * took 19 MB off the maximum RSS, with the same CPU a request.
 */
export function sqlitePageCacheKiB(readCacheBytes: number | undefined): number {
  if (readCacheBytes === undefined) return DEFAULT_PAGE_CACHE_KIB;
  return Math.min(DEFAULT_PAGE_CACHE_KIB, Math.max(MIN_PAGE_CACHE_KIB, Math.floor(readCacheBytes / 8 / 1024)));
}

export abstract class SqliteAccounts {
  protected readonly db: Database.Database;
  /** The page cache this connection got (`PRAGMA cache_size`, read back), in KiB. */
  readonly pageCacheKiB: number;
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
    this.db.pragma(`cache_size = -${sqlitePageCacheKiB(options.readCacheBytes)}`);
    this.pageCacheKiB = -(this.db.pragma('cache_size', { simple: true }) as number);
    // A checkpoint copies the WAL into the database, with an fsync: work for the import worker's
    // thread (after each snapshot and in its housekeeping), never for a thread answering requests.
    if (options.servesRequests) this.db.pragma('wal_autocheckpoint = 0');
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

  /** A statement prepared on first use: the schema may not exist before `migrate`. */
  protected prepareLazy(sql: string) {
    let stmt: Database.Statement | undefined;
    return {
      get: (...args: unknown[]) => {
        stmt ??= this.db.prepare(sql).pluck();
        return stmt.get(...args);
      },
    };
  }
}
