/**
 * The PostgreSQL adapter's connection and its small tables: companies,
 * credentials, users, settings, mappings, the audit trail and sign-in
 * failures, plus the schema, backups and size. PostgresStore
 * (postgres-store.ts) adds imports, snapshots, the live listener, events and
 * webhooks on the same pool.
 */
import type { CredentialScope } from '../../domain/api-keys.js';
import type { Kind } from '../../domain/kinds.js';
import type { AuditEvent } from '../../domain/audit.js';
import type { ThrottlePolicy } from '../../domain/sign-in-policy.js';
import { ConflictError, type AuditQuery, type Company, type Credential, type User } from '../store.js';
import type { Db } from './postgres-connection.js';
import * as audits from './postgres-audit.js';
import { migrate, schemaVersion } from './postgres-migrations.js';
import { toCompany, toCredential, toUser, type CompanyRow, type CredentialRow, type UserRow } from '../row-mappers.js';

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (err: unknown) => (err as { code?: unknown }).code === UNIQUE_VIOLATION;
/** PostgreSQL text cannot hold NUL: a lookup key with one matches nothing. */
const hasNul = (s: string) => s.includes('\0');
/** A sign-in key PostgreSQL text can hold (a NUL typed in the form becomes U+FFFD). */
const textKey = (s: string) => s.replaceAll('\0', '\uFFFD');

const PG_BACKUP =
  'On PostgreSQL, back up with "pg_dump -Fc" and restore with "pg_restore" (see docs/operations.md, "Backups"); "mirador backup" and "mirador restore" are for SQLite.';

export abstract class PostgresAccounts {
  constructor(protected readonly db: Db) {}

  migrate(options: { to?: number } = {}): Promise<void> {
    return migrate(this.db, options.to);
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
}
