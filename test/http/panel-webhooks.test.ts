/**
 * Issue 19, point 2: webhook endpoints in the panel — create with event
 * types (the secret shown once, with a copy button), list, disable/enable,
 * delete, send a test event, the attempts log and "send again"; Spanish
 * first and English; strict CSP; and an administrator of one company never
 * sees or changes another's endpoints or deliveries.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { signedIn, startPanelServer, type PanelClient, type PanelServer } from '../helpers/panel.js';
import { sqliteFactory } from '../helpers/stores.js';

describe('webhooks in the panel', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: PanelServer;
  let a: PanelClient;
  let b: PanelClient;
  let aCompanyId: number;

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startPanelServer(store);
    const sa = await signedIn(server, store, 'hooks-a');
    a = sa.client;
    aCompanyId = sa.company.id;
    b = (await signedIn(server, store, 'hooks-b')).client;
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  /** Posts the create form as a browser does: `events` repeated once per ticked box. */
  async function create(client: PanelClient, url: string, events: string[]) {
    await client.get('/panel/webhooks');
    const body = new URLSearchParams({ _csrf: client.csrf, url });
    for (const e of events) body.append('events', e);
    return client.request('/panel/webhooks', { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }

  test('create: the secret once, with a copy button; the list; bad URLs refused with nothing created', async () => {
    const page = await a.get('/panel/webhooks');
    assert.equal(page.status, 200);
    assert.match(page.text, /Añadir un endpoint/);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.doesNotMatch(page.text, /<script(?![^>]*\bsrc=)/, 'no inline script');
    assert.doesNotMatch(page.text, /\son[a-z]+=/i, 'no inline event handler');

    for (const [url, why] of [
      ['http://hooks.example.com/x', /https:\/\//],
      ['https://127.0.0.1/x', /loopback, private/],
      ['not a url', /not an absolute URL/],
    ] as const) {
      const refused = await create(a, url, []);
      assert.equal(refused.status, 400, url);
      assert.match(refused.text, /No se ha añadido el endpoint/);
      assert.match(refused.text, why);
    }
    const badType = await create(a, 'https://hooks.example.com/x', ['import.exploded']);
    assert.equal(badType.status, 400);
    assert.equal((await store.listWebhookEndpoints(aCompanyId)).length, 0, 'nothing was created');

    const created = await create(a, 'https://hooks.example.com/mirador', ['import.failed', 'import.published']);
    assert.equal(created.status, 303, 'POST-redirect-GET: a refresh creates nothing');
    assert.match(created.location ?? '', /^\/panel\/webhooks\/\d+\/created$/);
    const shown = await a.get(created.location!);
    const secret = /value="(whsec_[0-9A-Za-z]+)"/.exec(shown.text)?.[1];
    assert.ok(secret, 'the secret is in the page');
    assert.match(shown.text, /data-copy="new-secret"/);
    const again = await a.get(created.location!);
    assert.equal(again.status, 200);
    assert.ok(!again.text.includes(secret), 'shown once: a refresh finds it gone');
    assert.match(again.text, /solo se muestra una vez/);
    const [endpoint] = await store.listWebhookEndpoints(aCompanyId);
    assert.equal(endpoint!.secret, secret);
    assert.deepEqual(endpoint!.eventTypes, ['import.failed', 'import.published']);
    const list = await a.get('/panel/webhooks');
    assert.match(list.text, /https:\/\/hooks\.example\.com\/mirador/);
    assert.ok(!list.text.includes(secret), 'shown once: never again');
    assert.ok(!(await a.get(`/panel/webhooks/${endpoint!.id}`)).text.includes(secret));
  });

  test('an endpoint: test event, disable/enable, the attempts log and send again, delete', async () => {
    await create(a, 'https://hooks.example.com/second', []);
    const endpoint = (await store.listWebhookEndpoints(aCompanyId)).at(-1)!;
    const path = `/panel/webhooks/${endpoint.id}`;
    assert.match((await a.get(path)).text, /Todos/, 'no types ticked: every type');

    const queued = await a.post(`${path}/test`);
    assert.equal(queued.status, 303);
    assert.equal(queued.location, `${path}?done=test`);
    const [delivery] = await store.listDeliveries(endpoint.id, 10);
    assert.equal(delivery!.eventType, 'webhook.test');
    assert.equal(delivery!.status, 'pending', 'queued, not sent on the request path');

    // One failed attempt, as the delivery loop records it.
    const [claimed] = await store.claimDeliveries('test:1:a', 1, 60_000, []);
    await store.finishDelivery(claimed!.id, 'test:1:a', { at: Date.now(), durationMs: 1234, statusCode: 500, ok: false, error: 'Answered 500.', responseBody: null, retryAt: null });
    const log = await a.get(path);
    assert.match(log.text, /Intentos/);
    assert.match(log.text, new RegExp(delivery!.eventId));
    assert.match(log.text, />500</);
    assert.match(log.text, /1,2 s/);
    assert.match(log.text, /Fallida/);
    assert.match(log.text, /<time datetime="/);
    const again = await a.post(`${path}/deliveries/${delivery!.id}/resend`);
    assert.equal(again.status, 303);
    assert.equal((await store.deliveryById(delivery!.id))!.status, 'pending');

    // The delivery failed for a whole period, so the endpoint was disabled as failing.
    assert.equal((await store.webhookEndpointById(endpoint.id))!.disabledReason, 'failing');
    assert.match((await a.get(path)).text, /Desactivado: fallaba/);
    await a.get(path);
    assert.equal((await a.post(`${path}/enable`)).status, 303);
    assert.equal((await store.webhookEndpointById(endpoint.id))!.disabledAt, null);
    await a.get(path);
    assert.equal((await a.post(`${path}/disable`)).status, 303);
    assert.equal((await store.webhookEndpointById(endpoint.id))!.disabledReason, 'manual');

    const confirm = await a.get(`${path}/delete`);
    assert.match(confirm.text, /No se puede deshacer/);
    const gone = await a.post(`${path}/delete`);
    assert.equal(gone.location, `/panel/webhooks?deleted=${endpoint.id}`);
    assert.equal(await store.webhookEndpointById(endpoint.id), null);

    // The audit trail names the administrator and what changed; disabling as failing (the delivery loop) is no one's action.
    const trail = (await store.listAudit(aCompanyId, { actions: ['webhook.create', 'webhook.update', 'webhook.delete'], limit: 10 })).filter(
      (e) => e.details.webhook_id === endpoint.id,
    );
    assert.deepEqual(
      trail.map((e) => [e.action, e.details.enabled ?? null]),
      [['webhook.delete', null], ['webhook.update', false], ['webhook.update', true], ['webhook.create', null]],
    );
    assert.ok(trail.every((e) => e.actor.includes('@') && e.ip !== null), JSON.stringify(trail));
  });

  test('English on request', async () => {
    await a.get('/panel/webhooks');
    await a.post('/panel/lang', { lang: 'en', back: '/panel/webhooks' });
    const page = await a.get('/panel/webhooks');
    assert.match(page.text, /Add an endpoint/);
    assert.match(page.text, /new data published/);
    await a.post('/panel/lang', { lang: 'es', back: '/panel/webhooks' });
  });

  test("another company's endpoints and deliveries: 404 everywhere, nothing changed", async () => {
    await create(a, 'https://hooks.example.com/secret-of-a', []);
    const endpoint = (await store.listWebhookEndpoints(aCompanyId)).at(-1)!;
    const delivery = await store.queueDelivery(endpoint.id, { publicId: 'evt_x', type: 'webhook.test', body: '{}' });
    const list = await b.get('/panel/webhooks');
    assert.doesNotMatch(list.text, /secret-of-a/);
    const base = `/panel/webhooks/${endpoint.id}`;
    for (const path of [base, `${base}/delete`]) {
      const res = await b.get(path);
      assert.equal(res.status, 404, path);
      assert.doesNotMatch(res.text, /secret-of-a/);
    }
    for (const path of [`${base}/disable`, `${base}/test`, `${base}/delete`, `${base}/deliveries/${delivery.id}/resend`]) {
      await b.get('/panel/webhooks');
      assert.equal((await b.post(path)).status, 404, path);
    }
    // A's own delivery under B's (existing) endpoint id is not reachable either.
    await create(b, 'https://hooks.example.com/b', []);
    const bEndpoint = (await store.listWebhookEndpoints((await store.companyBySlug('hooks-b'))!.id))[0]!;
    await b.get('/panel/webhooks');
    assert.equal((await b.post(`/panel/webhooks/${bEndpoint.id}/deliveries/${delivery.id}/resend`)).status, 404);
    const after = (await store.webhookEndpointById(endpoint.id))!;
    assert.equal(after.disabledAt, null);
    assert.equal((await store.listDeliveries(endpoint.id, 10)).length, 1, 'no test event was queued');
  });
});
