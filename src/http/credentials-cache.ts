/**
 * Checks presented credentials against the store with a short-lived cache.
 * Entries are re-read after `ttlMs`, so a revocation made by any process is
 * seen everywhere within that time; the process that revokes also calls
 * `forget` so it refuses the key at once. Last-use times are collected in
 * memory and written in one batch every few seconds — never a database write
 * per request.
 */
import { parseCredential, secretMatches, type CredentialScope } from '../domain/api-keys.js';
import type { Credential, Store } from '../store/store.js';

interface Entry {
  credential: Credential | null;
  fetchedAt: number;
}

/** How long a checked credential is trusted before the store is asked again. */
export const CREDENTIALS_TTL_MS = 500;

/** Negative entries (unknown prefixes) are capped so random keys cannot grow memory. */
const MAX_ENTRIES = 10_000;

export class CredentialsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly lastUsed = new Map<string, number>();
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly ttlMs = CREDENTIALS_TTL_MS,
    private readonly flushEveryMs = 5000,
    /** The clock expiry is judged by (tests move it). */
    private readonly now: () => number = Date.now,
  ) {}

  start() {
    this.flushTimer = setInterval(() => void this.flush().catch(() => {}), this.flushEveryMs);
    this.flushTimer.unref();
  }

  async stop() {
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flush();
  }

  /**
   * The active credential of `scope` that `token` is, or null when the token
   * is malformed, unknown, of another scope, has a wrong secret, is revoked
   * or has expired.
   */
  async verify(token: string, scope: CredentialScope): Promise<Credential | null> {
    const parsed = parseCredential(token);
    if (!parsed || parsed.scope !== scope) return null;
    return this.check(parsed.secret, await this.lookup(parsed.prefix), scope);
  }

  /**
   * What `verify` would answer, when it can be told without the store (the
   * key's entry is cached and fresh); undefined otherwise. The secret is
   * checked the same way, hash and constant-time comparison.
   */
  verifyCached(token: string, scope: CredentialScope): Credential | null | undefined {
    const parsed = parseCredential(token);
    if (!parsed || parsed.scope !== scope) return null;
    const hit = this.fresh(parsed.prefix);
    return hit && this.check(parsed.secret, hit.credential, scope);
  }

  private check(secret: string, credential: Credential | null, scope: CredentialScope): Credential | null {
    if (!credential || credential.scope !== scope || credential.revokedAt) return null;
    // Checked on every use, cached entry or not: a key cached a moment before it expires is refused at its time.
    if (credential.expiresAt !== null && credential.expiresAt.getTime() <= this.now()) return null;
    if (!secretMatches(secret, credential.secretHash)) return null;
    this.lastUsed.set(credential.prefix, Date.now());
    return credential;
  }

  /**
   * When `verify` refused `token` because it expired (and only then: right
   * secret, not revoked), the time it expired; else null. For the message of
   * the 401, off the hot path: it reads the entry `verify` just cached.
   */
  expiredAt(token: string, scope: CredentialScope): Date | null {
    const parsed = parseCredential(token);
    const credential = parsed && parsed.scope === scope ? this.entries.get(parsed.prefix)?.credential : null;
    if (!credential || credential.scope !== scope || credential.revokedAt || credential.expiresAt === null) return null;
    if (credential.expiresAt.getTime() > this.now() || !secretMatches(parsed!.secret, credential.secretHash)) return null;
    return credential.expiresAt;
  }

  forget(prefix: string) {
    this.entries.delete(prefix);
  }

  async flush() {
    if (this.lastUsed.size === 0) return;
    const batch = new Map(this.lastUsed);
    this.lastUsed.clear();
    await this.store.touchCredentials(batch);
  }

  private async lookup(prefix: string): Promise<Credential | null> {
    const hit = this.fresh(prefix);
    if (hit) return hit.credential;
    const fetchedAt = Date.now();
    const credential = await this.store.credentialByPrefix(prefix);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(prefix, { credential, fetchedAt });
    return credential;
  }

  /** The entry of `prefix` while it is younger than the cache's lifetime. */
  private fresh(prefix: string): Entry | undefined {
    const hit = this.entries.get(prefix);
    return hit && Date.now() - hit.fetchedAt < this.ttlMs ? hit : undefined;
  }
}
