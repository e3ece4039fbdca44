/**
 * Webhook endpoints in the panel: list and create (the secret answered in
 * the page itself, once), one endpoint's page, enable/disable, delete with a
 * confirmation page, "send a test event" and "send again". Every route finds
 * the endpoint through the visitor's company: another company's endpoint or
 * delivery is answered like an unknown one. Deliveries are only queued here;
 * the delivery loop sends them (never on the request path).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebhookEndpoint } from '../../store/events.js';
import { checkEndpointUrl, InvalidEndpointUrlError } from '../../webhooks/endpoint-url.js';
import { parseEventTypes, testEvent, UnknownEventTypeError } from '../../webhooks/test-event.js';
import { webhookCreateAudit, webhookDeleteAudit, webhookUpdateAudit } from '../../webhooks/webhook-audit.js';
import { generateWebhookSecret } from '../../webhooks/webhook-secret.js';
import { ApiError } from '../errors.js';
import { admin, pageContext, sendPage, type PanelDeps } from './panel-context.js';
import { REVEAL_COOKIE, REVEAL_MAX_AGE_S } from './secret-reveal.js';
import { createdPage, deletePage, endpointPage, WEBHOOKS_PATH, webhooksPage, type WebhooksView } from './views/webhooks-page.js';
import { webhookWords } from './views/webhook-words.js';

const ATTEMPTS_SHOWN = 100;
/** What a sealed reveal is bound to (keys use their prefix): never a key prefix, which has 8 characters of a-z0-9. */
const revealId = (endpointId: number) => `webhook:${endpointId}`;
const NOTICES = ['test', 'resent', 'disabled', 'enabled'] as const;

export function registerWebhookRoutes(app: FastifyInstance, deps: PanelDeps) {
  const { store } = deps;
  const rules = deps.config.webhooks;

  async function ownEndpoint(request: FastifyRequest): Promise<WebhookEndpoint> {
    const { company } = admin(request);
    const raw = (request.params as { id: string }).id;
    const endpoint = /^[1-9][0-9]{0,15}$/.test(raw) ? await store.webhookEndpointById(Number(raw)) : null;
    if (!endpoint || endpoint.companyId !== company.id) throw new ApiError('not_found', 'There is no such webhook endpoint.');
    return endpoint;
  }

  async function listPage(request: FastifyRequest, reply: FastifyReply, view: Omit<WebhooksView, 'endpoints' | 'allowHttp'>, status = 200) {
    const { company } = admin(request);
    const endpoints = await store.listWebhookEndpoints(company.id);
    return sendPage(reply, webhooksPage(pageContext(request, reply, deps), { ...view, endpoints, allowHttp: rules.allowHttp }), status);
  }

  app.get('/webhooks', async (request, reply) => {
    const w = webhookWords(request.panel!.lang);
    const deleted = (request.query as { deleted?: string }).deleted;
    const notice = deleted && /^\d{1,16}$/.test(deleted) ? { text: w.deletedNotice.replace('{id}', deleted), kind: 'success' as const } : null;
    return listPage(request, reply, { notice });
  });

  // POST-redirect-GET, as for keys: the secret travels sealed to the page the POST redirects to,
  // which shows it once (secret-reveal.ts); a refresh creates nothing and shows it no more.
  app.post('/webhooks', async (request, reply) => {
    const { company, user, who } = admin(request);
    const w = webhookWords(request.panel!.lang);
    const form = (request.body ?? {}) as Record<string, unknown>;
    const rawUrl = typeof form.url === 'string' ? form.url : '';
    const rawEvents = Array.isArray(form.events) ? form.events.filter((x): x is string => typeof x === 'string') : typeof form.events === 'string' ? [form.events] : [];
    let url: string;
    let eventTypes;
    try {
      url = checkEndpointUrl(rawUrl, rules);
      eventTypes = parseEventTypes(rawEvents);
    } catch (err) {
      if (!(err instanceof InvalidEndpointUrlError || err instanceof UnknownEventTypeError)) throw err;
      const notice = { text: w.notAdded.replace('{reason}', err.message), kind: 'error' as const };
      return listPage(request, reply, { notice, form: { url: rawUrl.slice(0, 2048), events: rawEvents } }, 400);
    }
    const secret = generateWebhookSecret();
    const endpoint = await store.createWebhookEndpoint({ companyId: company.id, url, eventTypes, secret }, webhookCreateAudit(who, company.id, url, eventTypes));
    request.log.info({ company: company.id, endpoint: endpoint.id }, 'panel webhook endpoint created');
    const sealed = deps.reveals.seal({ userId: user.id, prefix: revealId(endpoint.id), secret });
    reply.setCookie(REVEAL_COOKIE, sealed, { ...deps.sessions.cookieOptions(request, REVEAL_MAX_AGE_S), signed: false });
    return reply.redirect(`${WEBHOOKS_PATH}/${endpoint.id}/created`, 303);
  });

  app.get('/webhooks/:id/created', async (request, reply) => {
    const endpoint = await ownEndpoint(request);
    const { user } = admin(request);
    const secret = deps.reveals.open(request.cookies[REVEAL_COOKIE], user.id, revealId(endpoint.id));
    reply.clearCookie(REVEAL_COOKIE, { path: '/panel' });
    return sendPage(reply, createdPage(pageContext(request, reply, deps), endpoint, secret));
  });

  app.get('/webhooks/:id', async (request, reply) => {
    const endpoint = await ownEndpoint(request);
    const w = webhookWords(request.panel!.lang);
    const done = (request.query as { done?: string }).done;
    const text: Record<(typeof NOTICES)[number], string> = {
      test: w.testQueued,
      resent: w.resendQueued,
      disabled: w.disabledNotice,
      enabled: w.enabledNotice,
    };
    const notice = NOTICES.includes(done as (typeof NOTICES)[number]) ? { text: text[done as (typeof NOTICES)[number]], kind: 'success' as const } : null;
    const [deliveries, attempts] = await Promise.all([store.listDeliveries(endpoint.id, 500), store.listAttempts(endpoint.id, ATTEMPTS_SHOWN)]);
    return sendPage(reply, endpointPage(pageContext(request, reply, deps), { endpoint, deliveries, attempts, notice }));
  });

  for (const enabled of [true, false]) {
    app.post(`/webhooks/:id/${enabled ? 'enable' : 'disable'}`, async (request, reply) => {
      const endpoint = await ownEndpoint(request);
      await store.setWebhookEndpointEnabled(endpoint.id, enabled, webhookUpdateAudit(admin(request).who, endpoint, enabled));
      request.log.info({ company: endpoint.companyId, endpoint: endpoint.id, enabled }, 'panel webhook endpoint changed');
      return reply.redirect(`${WEBHOOKS_PATH}/${endpoint.id}?done=${enabled ? 'enabled' : 'disabled'}`, 303);
    });
  }

  app.post('/webhooks/:id/test', async (request, reply) => {
    const endpoint = await ownEndpoint(request);
    await store.queueDelivery(endpoint.id, testEvent());
    return reply.redirect(`${WEBHOOKS_PATH}/${endpoint.id}?done=test`, 303);
  });

  app.post('/webhooks/:id/deliveries/:delivery/resend', async (request, reply) => {
    const endpoint = await ownEndpoint(request);
    const raw = (request.params as { delivery: string }).delivery;
    const delivery = /^[1-9][0-9]{0,15}$/.test(raw) ? await store.deliveryById(Number(raw)) : null;
    if (!delivery || delivery.endpointId !== endpoint.id) throw new ApiError('not_found', 'There is no such delivery.');
    await store.redeliver(delivery.id);
    return reply.redirect(`${WEBHOOKS_PATH}/${endpoint.id}?done=resent`, 303);
  });

  // The confirmation step: a page of its own, so it works without the script and from the keyboard.
  app.get('/webhooks/:id/delete', async (request, reply) => {
    const endpoint = await ownEndpoint(request);
    return sendPage(reply, deletePage(pageContext(request, reply, deps), endpoint));
  });

  app.post('/webhooks/:id/delete', async (request, reply) => {
    const endpoint = await ownEndpoint(request);
    await store.deleteWebhookEndpoint(endpoint.id, webhookDeleteAudit(admin(request).who, endpoint));
    request.log.info({ company: endpoint.companyId, endpoint: endpoint.id }, 'panel webhook endpoint deleted');
    return reply.redirect(`${WEBHOOKS_PATH}?deleted=${endpoint.id}`, 303);
  });
}
