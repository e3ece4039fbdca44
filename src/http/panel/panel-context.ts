/**
 * What every panel request knows about its visitor — language, session,
 * administrator and company — and how pages are sent.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Company, Store, User } from '../../store/store.js';
import type { CredentialsCache } from '../credentials-cache.js';
import { userActor, type AuditActor } from '../../domain/audit.js';
import { ApiError } from '../errors.js';
import type { SafeHtml } from './html.js';
import { isLang, translator, type Lang, type Translate } from './i18n.js';
import { LANG_COOKIE, type PanelSessions, type Session } from './panel-session.js';
import type { SecretReveals } from './secret-reveal.js';
import type { SignInThrottle } from './sign-in-throttle.js';
import type { PageContext } from './views/layout.js';

export interface PanelVisitor {
  lang: Lang;
  t: Translate;
  session: Session | null;
  /** Set together: the signed-in administrator and their company. */
  user: User | null;
  company: Company | null;
}

export interface PanelDeps {
  config: Config;
  store: Store;
  credentials: CredentialsCache;
  sessions: PanelSessions;
  /** New secrets, carried sealed from the creating POST to the page that shows them once. */
  reveals: SecretReveals;
  throttle: SignInThrottle;
  onImportQueued: () => void;
  /** An upload begins to be stored (see AppDeps); only called where the store `writesWhileStoring`. */
  onImportReceiving: (importId: number, declaredBytes: number | null) => void;
  assets: { css: string; js: string };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the panel's onRequest hook on every /panel request. */
    panel: PanelVisitor | null;
  }
  interface FastifyContextConfig {
    /**
     * Who may call a panel route: `public` (sign-in, language), `api` (the
     * JSON API, which authenticates itself), or by default a signed-in
     * administrator.
     */
    panelAccess?: 'public' | 'api';
    /** The handler checks the CSRF token itself (multipart uploads, whose fields arrive as a stream). */
    csrfInHandler?: boolean;
  }
}

/**
 * `createImport`'s `onCreated` for an upload: names the new import to the
 * import process while the upload is still stored, where the store can write
 * a snapshot meanwhile (the process then prepares the import from the blobs
 * as they land), with the size the request's `Content-Length` announces. A
 * compressed body's length is not the size of the CSV the import reads: none then.
 */
export function announceReceiving(deps: PanelDeps, request: FastifyRequest, compressed: boolean): ((id: number) => void) | undefined {
  if (!deps.store.writesWhileStoring) return undefined;
  const length = Number(request.headers['content-length'] ?? NaN);
  const declaredBytes = compressed || !Number.isSafeInteger(length) ? null : length;
  return (id) => deps.onImportReceiving(id, declaredBytes);
}

/** A form posted without its CSRF token (or with another visitor's). */
export class CsrfError extends ApiError {
  constructor() {
    super('forbidden', 'The form has expired or did not come from this panel: reload the page and try again.');
  }
}

export async function loadVisitor(request: FastifyRequest, deps: PanelDeps): Promise<PanelVisitor> {
  const cookieLang = request.cookies[LANG_COOKIE];
  const lang: Lang = isLang(cookieLang) ? cookieLang : 'es';
  const visitor: PanelVisitor = { lang, t: translator(lang), session: null, user: null, company: null };
  const session = deps.sessions.read(request);
  if (!session) return visitor;
  const user = await deps.store.userById(session.userId);
  const company = user ? await deps.store.companyById(user.companyId) : null;
  if (user && company) Object.assign(visitor, { session, user, company });
  return visitor;
}

/** The visitor of a request that passed the guard: signed in. `who` is how the audit trail names them. */
export function admin(request: FastifyRequest): { user: User; company: Company; visitor: PanelVisitor; who: AuditActor } {
  const visitor = request.panel!;
  return { user: visitor.user!, company: visitor.company!, visitor, who: userActor(visitor.user!.email, request.ip) };
}

/** What binds this visitor's CSRF tokens: the session, else the pre-session cookie. */
export function csrfBinding(request: FastifyRequest, deps: PanelDeps): string | null {
  return request.panel?.session?.nonce ?? deps.sessions.readPreSession(request);
}

export function pageContext(request: FastifyRequest, reply: FastifyReply, deps: PanelDeps): PageContext {
  const visitor = request.panel ?? { lang: 'es' as const, t: translator('es'), session: null, user: null, company: null };
  const binding = visitor.session?.nonce ?? deps.sessions.preSession(request, reply);
  return {
    lang: visitor.lang,
    t: visitor.t,
    csrf: deps.sessions.csrfToken(binding),
    account: visitor.user && visitor.company ? { email: visitor.user.email, companyName: visitor.company.name } : null,
    path: request.url.length <= 512 ? request.url : '/panel',
    assets: deps.assets,
  };
}

export function sendPage(reply: FastifyReply, page: SafeHtml, status = 200): FastifyReply {
  reply.code(status);
  reply.header('Content-Type', 'text/html; charset=utf-8');
  return reply.send(page.value);
}

/** A `/panel…` path to return to, or null when `value` could lead anywhere else. */
export function safePanelPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 512) return null;
  return /^\/panel(?:[/?][^\s\\]*)?$/.test(value) && !value.includes('//') && !value.includes('/..') ? value : null;
}
