/**
 * Panel sessions and CSRF tokens. A session is a signed cookie
 * (`<user id>.<issued at>.<nonce>`, HMAC by @fastify/cookie): nothing is kept
 * on the server, so every instance accepts it, and it ends when it expires
 * or the browser drops it at sign-out. The secret comes from SESSION_SECRET,
 * or is generated once and stored with `initSetting`, so that every instance
 * over one database shares it.
 *
 * CSRF tokens are an HMAC of the session's nonce: a page can only be forged
 * by someone who can read it. Before signing in there is no session, so the
 * sign-in and language forms are bound to a random pre-session cookie
 * instead. SameSite=Lax cookies already keep other sites' POSTs out; the
 * token is the second lock.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Store } from '../../store/store.js';

export const SESSION_COOKIE = 'mirador_session';
export const PRESESSION_COOKIE = 'mirador_presession';
export const LANG_COOKIE = 'mirador_lang';
/** A session lasts a working day, then the administrator signs in again. */
export const SESSION_MAX_AGE_S = 12 * 3600;
const SETTING = 'panel_session_secret';

export async function resolveSessionSecret(config: Config, store: Store): Promise<string> {
  if (config.sessionSecret) return config.sessionSecret;
  // Several instances starting at once all store a candidate; the first one wins for all.
  return store.initSetting(SETTING, randomBytes(32).toString('base64url'));
}

export interface Session {
  userId: number;
  issuedAt: number;
  nonce: string;
}

export class PanelSessions {
  constructor(
    private readonly secret: string,
    private readonly publicBaseUrl: string,
  ) {}

  /** Cookies are Secure when the browser came over HTTPS, directly or by PUBLIC_BASE_URL's proxy. */
  isSecure(request: FastifyRequest): boolean {
    return request.protocol === 'https' || this.publicBaseUrl.startsWith('https:');
  }

  cookieOptions(request: FastifyRequest, maxAge?: number) {
    return {
      path: '/panel',
      httpOnly: true,
      sameSite: 'lax' as const,
      secure: this.isSecure(request),
      signed: true,
      ...(maxAge === undefined ? {} : { maxAge }),
    };
  }

  start(request: FastifyRequest, reply: FastifyReply, userId: number): Session {
    const session = { userId, issuedAt: Date.now(), nonce: randomBytes(16).toString('base64url') };
    const value = `${session.userId}.${session.issuedAt}.${session.nonce}`;
    reply.setCookie(SESSION_COOKIE, value, this.cookieOptions(request, SESSION_MAX_AGE_S));
    // The pre-session binding is spent: the next visitor of this browser gets a new one.
    reply.clearCookie(PRESESSION_COOKIE, { path: '/panel' });
    return session;
  }

  end(reply: FastifyReply) {
    reply.clearCookie(SESSION_COOKIE, { path: '/panel' });
  }

  /** The session the request carries, or null (absent, tampered with or expired). */
  read(request: FastifyRequest): Session | null {
    const value = this.unsigned(request, SESSION_COOKIE);
    const m = value === null ? null : /^(\d{1,15})\.(\d{13})\.([A-Za-z0-9_-]{22})$/.exec(value);
    if (!m) return null;
    const session = { userId: Number(m[1]), issuedAt: Number(m[2]), nonce: m[3]! };
    const age = Date.now() - session.issuedAt;
    if (age < -60_000 || age > SESSION_MAX_AGE_S * 1000) return null;
    return session;
  }

  /** The browser's pre-session nonce, or null when it has none. */
  readPreSession(request: FastifyRequest): string | null {
    const existing = this.unsigned(request, PRESESSION_COOKIE);
    return existing && /^[A-Za-z0-9_-]{22}$/.test(existing) ? existing : null;
  }

  /** The pre-session nonce, set on the response when the browser has none yet (pages shown before signing in). */
  preSession(request: FastifyRequest, reply: FastifyReply): string {
    const existing = this.readPreSession(request);
    if (existing) return existing;
    const nonce = randomBytes(16).toString('base64url');
    reply.setCookie(PRESESSION_COOKIE, nonce, this.cookieOptions(request));
    return nonce;
  }

  csrfToken(binding: string): string {
    return createHmac('sha256', this.secret).update(`csrf\0${binding}`).digest('base64url');
  }

  csrfMatches(binding: string, presented: unknown): boolean {
    if (typeof presented !== 'string' || presented.length > 100) return false;
    const expected = Buffer.from(this.csrfToken(binding));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private unsigned(request: FastifyRequest, name: string): string | null {
    const raw = request.cookies[name];
    if (!raw) return null;
    const r = request.unsignCookie(raw);
    return r.valid ? r.value : null;
  }
}
