/** Signing in and out, and the language switch. */
import type { FastifyInstance } from 'fastify';
import { auditEvent, userActor } from '../../domain/audit.js';
import { dummyPasswordHash, MAX_PASSWORD_LENGTH, normaliseEmail, verifyPassword } from '../../domain/passwords.js';
import { isLang } from './i18n.js';
import { pageContext, safePanelPath, sendPage, type PanelDeps } from './panel-context.js';
import { LANG_COOKIE } from './panel-session.js';
import { signInPage } from './views/sign-in-page.js';

type Form = Record<string, unknown>;
const text = (v: unknown) => (typeof v === 'string' ? v : '');

export function registerAuthRoutes(app: FastifyInstance, deps: PanelDeps) {
  const { store, sessions, throttle } = deps;

  app.get('/sign-in', { config: { panelAccess: 'public' } }, async (request, reply) => {
    if (request.panel?.user) return reply.redirect('/panel', 303);
    const query = request.query as Form;
    const ctx = pageContext(request, reply, deps);
    const notice = query.bye ? ctx.t('signedOut') : query.expired ? ctx.t('sessionExpired') : null;
    return sendPage(reply, signInPage(ctx, { notice, next: safePanelPath(query.next) ?? undefined }));
  });

  app.post('/sign-in', { config: { panelAccess: 'public' } }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const email = normaliseEmail(text(form.email)).slice(0, 254);
    const password = text(form.password).slice(0, MAX_PASSWORD_LENGTH);
    const next = safePanelPath(form.next) ?? undefined;

    const wait = await throttle.retryAfter(email);
    if (wait > 0) {
      const ctx = pageContext(request, reply, deps);
      reply.header('Retry-After', String(wait));
      const error = ctx.t('signInThrottled', { minutes: Math.ceil(wait / 60) });
      return sendPage(reply, signInPage(ctx, { email, error, next }), 429);
    }

    const user = email ? await store.userByEmail(email) : null;
    // An unknown email costs the same scrypt as a wrong password: timing tells nothing.
    const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyPasswordHash()));
    if (!user || !ok) {
      const locked = await throttle.failed(email);
      request.log.info({ event: 'sign_in_failed' }, 'panel sign-in failed');
      // Only an existing account's company has a trail to write to; unknown emails are in the log.
      // Not awaited: the answer must take as long whether the account exists or not.
      if (user) {
        const details = { email, ...(locked > 0 ? { locked_seconds: locked } : {}) };
        store
          .recordAudit(auditEvent(userActor(email, request.ip), user.companyId, 'session.sign_in_failed', details))
          .catch((err: unknown) => request.log.error({ err }, 'audit: failed sign-in not recorded'));
      }
      const ctx = pageContext(request, reply, deps);
      return sendPage(reply, signInPage(ctx, { email, error: ctx.t('signInFailed'), next }), 401);
    }
    await throttle.succeeded(email);
    sessions.start(request, reply, user.id);
    await store.recordAudit(auditEvent(userActor(user.email, request.ip), user.companyId, 'session.sign_in', { user_id: user.id }));
    request.log.info({ event: 'sign_in', user: user.id, company: user.companyId }, 'panel sign-in');
    return reply.redirect(next ?? '/panel', 303);
  });

  app.post('/sign-out', { config: { panelAccess: 'public' } }, async (request, reply) => {
    const visitor = request.panel;
    if (visitor?.user && visitor.company) {
      await store.recordAudit(auditEvent(userActor(visitor.user.email, request.ip), visitor.company.id, 'session.sign_out', { user_id: visitor.user.id }));
    }
    sessions.end(reply);
    return reply.redirect('/panel/sign-in?bye=1', 303);
  });

  // Remembered for a year; public, since the sign-in page has the switch too.
  app.post('/lang', { config: { panelAccess: 'public' } }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const lang = isLang(form.lang) ? form.lang : 'es';
    reply.setCookie(LANG_COOKIE, lang, { ...sessions.cookieOptions(request, 365 * 86400), signed: false });
    return reply.redirect(safePanelPath(form.back) ?? '/panel', 303);
  });
}
