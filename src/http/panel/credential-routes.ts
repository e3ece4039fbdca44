/** API keys (scope read) and upload tokens (scope upload): create, list, revoke; and the integration help that uses them. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { generateCredential, isValidPrefix, parseExpiresIn, type CredentialScope } from '../../domain/api-keys.js';
import { auditEvent } from '../../domain/audit.js';
import type { Credential } from '../../store/store.js';
import { ApiError } from '../errors.js';
import { admin, pageContext, sendPage, type PanelDeps } from './panel-context.js';
import { REVEAL_COOKIE, REVEAL_MAX_AGE_S } from './secret-reveal.js';
import { CREDENTIAL_PATH, createdPage, credentialsPage, revokePage } from './views/credentials-page.js';
import { helpPage } from './views/help-page.js';
import type { PageContext } from './views/layout.js';

const SECTION: Record<CredentialScope, string> = { read: '/keys', upload: '/tokens' };

/** Set when the integration help (with its sandbox links) has been opened in this browser. */
export const HELP_SEEN_COOKIE = 'mirador_help_seen';

export function registerCredentialRoutes(app: FastifyInstance, deps: PanelDeps) {
  const { store, credentials } = deps;

  /**
   * The credential named by the URL, if it is the visitor's company's and of
   * this scope; anything else (another company's, a key under /tokens) is
   * answered like an unknown prefix.
   */
  async function ownCredential(request: FastifyRequest, scope: CredentialScope): Promise<Credential> {
    const { company } = admin(request);
    const prefix = (request.params as { prefix: string }).prefix;
    const credential = isValidPrefix(prefix) ? await store.credentialByPrefix(prefix) : null;
    if (!credential || credential.companyId !== company.id || credential.scope !== scope) {
      throw new ApiError('not_found', 'There is no such key or token.');
    }
    return credential;
  }

  app.get('/help', async (request, reply) => {
    // The overview's checklist counts the sandbox as tried once its links have been shown.
    reply.setCookie(HELP_SEEN_COOKIE, '1', { path: '/panel', httpOnly: true, sameSite: 'lax', maxAge: 365 * 24 * 3600 });
    return sendPage(reply, helpPage(pageContext(request, reply, deps), deps.config.publicBaseUrl));
  });

  /** The keys or tokens page, newest first; `error` refuses a form (answered 400). */
  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    scope: CredentialScope,
    notice: (t: PageContext['t']) => string | null,
    error?: (t: PageContext['t']) => string,
  ) {
    const { company } = admin(request);
    const ctx = pageContext(request, reply, deps);
    const list = await store.listCredentials(company.id, scope);
    const page = credentialsPage(ctx, {
      scope,
      companyName: company.name,
      baseUrl: deps.config.publicBaseUrl,
      credentials: list.reverse(),
      notice: notice(ctx.t),
      error: error ? error(ctx.t) : null,
    });
    return error ? sendPage(reply, page, 400) : sendPage(reply, page);
  }

  for (const scope of ['read', 'upload'] as const) {
    const base = SECTION[scope];

    app.get(base, async (request, reply) => {
      const revoked = (request.query as { revoked?: string }).revoked;
      return listPage(request, reply, scope, (t) =>
        revoked && isValidPrefix(revoked) ? t(scope === 'read' ? 'keyRevokedNotice' : 'tokenRevokedNotice', { prefix: revoked }) : null,
      );
    });

    // POST-redirect-GET: the new value is shown by the page this redirects to, once; a refresh
    // of that page shows it no more and creates nothing (secret-reveal.ts says how it travels).
    app.post(base, async (request, reply) => {
      const { company, user, who } = admin(request);
      const form = (request.body ?? {}) as Record<string, unknown>;
      const label = (typeof form.label === 'string' ? form.label.trim().slice(0, 200) : '') || null;
      // The same lifetimes as `mirador key create --expires-in`: empty or absent is never.
      const expiresText = typeof form.expires_in === 'string' ? form.expires_in.trim() : '';
      const lifetime = expiresText === '' ? null : parseExpiresIn(expiresText);
      if (expiresText !== '' && lifetime === null) return listPage(request, reply, scope, () => null, (t) => t('expiresInvalid'));
      const expiresAt = lifetime === null ? null : Date.now() + lifetime;
      const fresh = generateCredential(scope);
      await store.createCredential(
        { companyId: company.id, scope, prefix: fresh.prefix, secretHash: fresh.secretHash, label, expiresAt },
        auditEvent(who, company.id, scope === 'read' ? 'key.create' : 'token.create', {
          prefix: fresh.prefix,
          label,
          expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
        }),
      );
      request.log.info({ company: company.id, scope, prefix: fresh.prefix }, 'panel credential created');
      const sealed = deps.reveals.seal({ userId: user.id, prefix: fresh.prefix, secret: fresh.token });
      reply.setCookie(REVEAL_COOKIE, sealed, { ...deps.sessions.cookieOptions(request, REVEAL_MAX_AGE_S), signed: false });
      return reply.redirect(`${CREDENTIAL_PATH[scope]}/${fresh.prefix}/created`, 303);
    });

    app.get(`${base}/:prefix/created`, async (request, reply) => {
      const credential = await ownCredential(request, scope);
      const { user } = admin(request);
      const secret = deps.reveals.open(request.cookies[REVEAL_COOKIE], user.id, credential.prefix);
      reply.clearCookie(REVEAL_COOKIE, { path: '/panel' });
      const ctx = pageContext(request, reply, deps);
      return sendPage(reply, createdPage(ctx, scope, credential, secret, deps.config.publicBaseUrl));
    });

    // The confirmation step: a page of its own, so it works without the script and from the keyboard.
    app.get(`${base}/:prefix/revoke`, async (request, reply) => {
      const credential = await ownCredential(request, scope);
      if (credential.revokedAt) return reply.redirect(CREDENTIAL_PATH[scope], 303);
      return sendPage(reply, revokePage(pageContext(request, reply, deps), scope, credential));
    });

    app.post(`${base}/:prefix/revoke`, async (request, reply) => {
      const credential = await ownCredential(request, scope);
      const { who } = admin(request);
      const action = scope === 'read' ? 'key.revoke' : 'token.revoke';
      await store.revokeCredential(credential.prefix, auditEvent(who, credential.companyId, action, { prefix: credential.prefix, label: credential.label }));
      // This process refuses it at once; others within the cache's lifetime (under a second).
      credentials.forget(credential.prefix);
      request.log.info({ company: credential.companyId, scope, prefix: credential.prefix }, 'panel credential revoked');
      return reply.redirect(`${CREDENTIAL_PATH[scope]}?revoked=${credential.prefix}`, 303);
    });
  }
}
