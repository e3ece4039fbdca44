/** API keys (scope read) and upload tokens (scope upload): create, list, revoke; and the integration help that uses them. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { generateCredential, isValidPrefix, parseExpiresIn, type CredentialScope } from '../../domain/api-keys.js';
import { auditEvent } from '../../domain/audit.js';
import type { Credential } from '../../store/store.js';
import { ApiError } from '../errors.js';
import { admin, pageContext, sendPage, type PanelDeps } from './panel-context.js';
import { CREDENTIAL_PATH, credentialsPage, revokePage } from './views/credentials-page.js';
import { helpPage } from './views/help-page.js';
import type { PageContext } from './views/layout.js';

const SECTION: Record<CredentialScope, string> = { read: '/keys', upload: '/tokens' };

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

  app.get('/help', async (request, reply) => sendPage(reply, helpPage(pageContext(request, reply, deps), deps.config.publicBaseUrl)));

  /** The keys or tokens page, newest first; `created` is shown once, right after creation. */
  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    scope: CredentialScope,
    created: { token: string; prefix: string; expiresAt: Date | null } | null,
    notice: (t: PageContext['t']) => string | null,
    status?: number,
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
      created,
      notice: notice(ctx.t),
      error: error ? error(ctx.t) : null,
    });
    return status === undefined ? sendPage(reply, page) : sendPage(reply, page, status);
  }

  for (const scope of ['read', 'upload'] as const) {
    const base = SECTION[scope];

    app.get(base, async (request, reply) => {
      const revoked = (request.query as { revoked?: string }).revoked;
      return listPage(request, reply, scope, null, (t) =>
        revoked && isValidPrefix(revoked) ? t(scope === 'read' ? 'keyRevokedNotice' : 'tokenRevokedNotice', { prefix: revoked }) : null,
      );
    });

    // Answers the page itself rather than redirecting: the full value must not travel in a URL or a cookie.
    app.post(base, async (request, reply) => {
      const { company, who } = admin(request);
      const form = (request.body ?? {}) as Record<string, unknown>;
      const label = (typeof form.label === 'string' ? form.label.trim().slice(0, 200) : '') || null;
      // The same lifetimes as `mirador key create --expires-in`: empty or absent is never.
      const expiresText = typeof form.expires_in === 'string' ? form.expires_in.trim() : '';
      const lifetime = expiresText === '' ? null : parseExpiresIn(expiresText);
      if (expiresText !== '' && lifetime === null) {
        return listPage(request, reply, scope, null, () => null, 400, (t) => t('expiresInvalid'));
      }
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
      const created = { token: fresh.token, prefix: fresh.prefix, expiresAt: expiresAt === null ? null : new Date(expiresAt) };
      return listPage(request, reply, scope, created, () => null, 201);
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
