/**
 * Issue 19, points 3, 4 and 6: webhook delivery to real HTTP receivers on
 * 127.0.0.1 (so these tests set WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE,
 * except where the rules themselves are tested). The delivery loop runs in
 * this process over a real SQLite file; each test owns its endpoints.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { verifyWebhook, WebhookVerificationError } from '../../packages/client/src/index.js';
import { loadConfig, type WebhookConfig } from '../../src/config.js';
import { ImportWorker } from '../../src/imports/import-worker.js';
import type { ClaimedDelivery } from '../../src/store/events.js';
import type { Store } from '../../src/store/store.js';
import { DeliveryLoop } from '../../src/webhooks/delivery-loop.js';
import { checkEndpointUrl, InvalidEndpointUrlError } from '../../src/webhooks/endpoint-url.js';
import type { SendResult } from '../../src/webhooks/send-webhook.js';
import { testEvent } from '../../src/webhooks/test-event.js';
import { generateWebhookSecret } from '../../src/webhooks/webhook-secret.js';
import { customersCsv } from '../helpers/csv.js';
import { sqliteFactory } from '../helpers/stores.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

type Attempt = { delivery: ClaimedDelivery; result: SendResult & { retryAt: number | null } };

/** The loop's attempts as they are recorded, awaited one by one. */
class Attempts {
  private readonly seen: Attempt[] = [];
  private readonly waiters: { when: (a: Attempt[]) => boolean; resolve: () => void }[] = [];
  add(a: Attempt) {
    this.seen.push(a);
    for (const w of this.waiters.filter((w) => w.when(this.seen))) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve();
    }
  }
  async until(when: (a: Attempt[]) => boolean): Promise<Attempt[]> {
    if (!when(this.seen)) await new Promise<void>((resolve) => this.waiters.push({ when, resolve }));
    return this.seen.slice();
  }
}

const TEST_RULES = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_SCHEDULE: '1ms' };

describe('webhook delivery to real receivers', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  const loops: DeliveryLoop[] = [];
  const receivers: Receiver[] = [];
  let n = 0;

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
  });
  // Every test's loops stop with it: a loop with other rules must not take the next test's deliveries.
  afterEach(async () => {
    for (const l of loops.splice(0)) await l.stop();
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await cleanup?.();
  });

  function startLoop(config: Partial<WebhookConfig> & { env?: Record<string, string> } = {}) {
    const { env, ...over } = config;
    const attempts = new Attempts();
    const loop = new DeliveryLoop(store, { ...loadConfig({ ...TEST_RULES, ...env }).webhooks, ...over }, {
      pollMs: 20,
      events: { attempted: (delivery, result) => attempts.add({ delivery, result }) },
    });
    loops.push(loop);
    loop.start();
    return { loop, attempts };
  }
  async function receiver(...args: Parameters<typeof startReceiver>) {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  }
  async function endpoint(url: string, eventTypes: [] = []) {
    const company = await store.createCompany(`wh-${++n}`, `Webhooks ${n}`);
    const secret = generateWebhookSecret();
    return { company, secret, endpoint: await store.createWebhookEndpoint({ companyId: company.id, url, eventTypes, secret }) };
  }

  test('an import’s event is POSTed with its id and a signature that verifyWebhook accepts', async () => {
    const r = await receiver();
    const { company, secret, endpoint: e } = await endpoint(r.url);
    const { attempts } = startLoop();
    const worker = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
    await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'c.csv', source: 'test' }, (async function* () {
      yield customersCsv(3);
    })(), 1 << 20);
    await worker.runOnce();
    const [got] = await r.waitFor(1);
    const feed = await store.listEvents(company.id, null, 0, 10);
    assert.equal(got!.body, feed.bodies[0], 'the body is the event exactly as the feed lists it');
    assert.equal(got!.headers['content-type'], 'application/json');
    const event = verifyWebhook(got!.body, got!.headers['mirador-signature'], secret);
    assert.equal(event.type, 'import.published');
    assert.equal(got!.headers['mirador-event-id'], event.id);
    assert.deepEqual(event.data.counts, { inserted: 3, updated: 0, unchanged: 0, deleted: 0 });
    assert.match(String(got!.headers['mirador-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.throws(() => verifyWebhook(got!.body.replace('"inserted":3', '"inserted":4'), got!.headers['mirador-signature'], secret), WebhookVerificationError);
    assert.throws(() => verifyWebhook(got!.body, got!.headers['mirador-signature'], generateWebhookSecret()), /does not match/);
    await attempts.until((a) => a.some((x) => x.delivery.endpointId === e.id));
    const [delivery] = await store.listDeliveries(e.id, 10);
    assert.equal(delivery!.status, 'delivered');
  });

  test('a receiver answering 500 then 200 gets the event twice, and it ends delivered', async () => {
    const r = await receiver((_req, n, res) => res.writeHead(n === 1 ? 500 : 200).end(n === 1 ? 'down' : 'ok'));
    const { endpoint: e } = await endpoint(r.url);
    const { attempts } = startLoop();
    await store.queueDelivery(e.id, testEvent());
    const seen = await attempts.until((a) => a.filter((x) => x.delivery.endpointId === e.id).length === 2);
    const mine = seen.filter((x) => x.delivery.endpointId === e.id);
    assert.deepEqual(mine.map((x) => [x.result.statusCode, x.result.ok]), [[500, false], [200, true]]);
    assert.ok(mine[0]!.result.retryAt, 'the failure was scheduled for a retry');
    const [a, b] = r.received;
    assert.equal(a!.headers['mirador-event-id'], b!.headers['mirador-event-id']);
    assert.equal(a!.body, b!.body);
    const [delivery] = await store.listDeliveries(e.id, 10);
    assert.deepEqual([delivery!.status, delivery!.attempts, delivery!.lastStatusCode], ['delivered', 2, 200]);
    assert.deepEqual((await store.listAttempts(e.id, 10)).map((x) => x.statusCode), [200, 500]);
  });

  test('failing for the whole retry period: the delivery failed and the endpoint is disabled', async () => {
    const r = await receiver((_req, _n, res) => res.writeHead(503).end());
    const { endpoint: e } = await endpoint(r.url);
    // However many attempts fit in the period (that depends on the machine), the last one says: no more.
    const { attempts } = startLoop({ retryDelaysMs: [5], retryWindowMs: 100 });
    const d = await store.queueDelivery(e.id, testEvent());
    const seen = await attempts.until((a) => a.some((x) => x.delivery.id === d.id && x.result.retryAt === null));
    assert.ok(seen.filter((x) => x.delivery.id === d.id).every((x) => x.result.statusCode === 503));
    assert.equal((await store.deliveryById(d.id))!.status, 'failed');
    assert.equal((await store.webhookEndpointById(e.id))!.disabledReason, 'failing');
  });

  test('SSRF: with both flags off, loopback is refused, by address and by a name that resolves to it; nothing arrives', async () => {
    const rules = { allowHttp: false, allowPrivate: false };
    const r = await receiver();
    const port = new URL(r.url).port;
    assert.throws(() => checkEndpointUrl(r.url, rules), InvalidEndpointUrlError, 'http:// is refused at creation');
    assert.throws(() => checkEndpointUrl(`https://127.0.0.1:${port}/h`, rules), /loopback, private/);
    assert.throws(() => checkEndpointUrl(`https://[::1]:${port}/h`, rules), /loopback, private/);
    assert.throws(() => checkEndpointUrl(`https://169.254.169.254/latest`, rules), /loopback, private/);
    assert.throws(() => checkEndpointUrl(`https://10.0.0.8/h`, rules), /loopback, private/);
    assert.equal(checkEndpointUrl('https://hooks.example.com/x', rules), 'https://hooks.example.com/x');
    // A name is only resolved when a delivery connects: there the resolved address is refused.
    assert.equal(checkEndpointUrl(`https://localhost:${port}/h`, rules), `https://localhost:${port}/h`);

    const { endpoint: byName } = await endpoint(`https://localhost:${port}/h`);
    const { endpoint: byAddress } = await endpoint(`https://127.0.0.1:${port}/h`);
    const { loop, attempts } = startLoop({ allowHttp: false, allowPrivate: false, retryDelaysMs: [60_000] });
    await store.queueDelivery(byName.id, testEvent());
    await store.queueDelivery(byAddress.id, testEvent());
    const refused = await attempts.until((a) => a.length >= 2);
    await loop.stop();
    // With http allowed but private addresses not, the address rule alone refuses loopback.
    const { endpoint: plain } = await endpoint(`http://localhost:${port}/h`);
    const { attempts: httpAttempts } = startLoop({ allowHttp: true, allowPrivate: false, retryDelaysMs: [60_000] });
    await store.queueDelivery(plain.id, testEvent());
    refused.push(...(await httpAttempts.until((a) => a.length >= 1)));
    assert.deepEqual(refused.map((a) => a.delivery.endpointId).sort(), [byName.id, byAddress.id, plain.id].sort());
    for (const a of refused) {
      assert.equal(a.result.ok, false);
      assert.equal(a.result.statusCode, null);
      assert.match(a.result.error!, /Refused to connect to (127\.0\.0\.1|::1)/, a.delivery.url);
    }
    assert.equal(r.received.length, 0, 'no request reached the receiver');
  });

  test('a slow receiver counts as failed at the timeout and does not hold other deliveries up', async () => {
    const slow = await receiver(() => {}); // never answers
    const fast = await receiver();
    const { endpoint: slowEndpoint } = await endpoint(slow.url);
    const { endpoint: fastEndpoint } = await endpoint(fast.url);
    // More slow deliveries than one endpoint may hold at once, queued first.
    for (let i = 0; i < 6; i++) await store.queueDelivery(slowEndpoint.id, testEvent());
    await store.queueDelivery(fastEndpoint.id, testEvent());
    const { attempts } = startLoop({ timeoutMs: 1500 });
    const seen = await attempts.until((a) => a.some((x) => x.delivery.endpointId === fastEndpoint.id) && a.some((x) => x.delivery.endpointId === slowEndpoint.id));
    const order = seen.filter((x) => x.delivery.endpointId === fastEndpoint.id || x.delivery.endpointId === slowEndpoint.id);
    assert.equal(order[0]!.delivery.endpointId, fastEndpoint.id, 'the fast endpoint was served while the slow one hung');
    assert.equal(order[0]!.result.ok, true);
    const timedOut = order.find((x) => x.delivery.endpointId === slowEndpoint.id)!;
    assert.equal(timedOut.result.ok, false);
    assert.equal(timedOut.result.statusCode, null);
    assert.match(timedOut.result.error!, /timeout/);
    assert.ok(timedOut.result.retryAt, 'a timeout is retried like any failure');
    assert.ok(slow.received.length <= 6);
  });

  test('the timeout is 10 s unless configured', () => {
    assert.equal(loadConfig({}).webhooks.timeoutMs, 10_000);
    assert.equal(loadConfig({}).webhooks.retryWindowMs, 72 * 3600 * 1000);
    assert.deepEqual(loadConfig({}).webhooks.retryDelaysMs, [60_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000]);
    assert.equal(loadConfig({}).webhooks.allowHttp, false);
    assert.equal(loadConfig({}).webhooks.allowPrivate, false);
  });

  test('redirects are not followed, and at most 4 KiB of an answer is read', async () => {
    const target = await receiver();
    const redirecting = await receiver((_req, _n, res) => res.writeHead(302, { location: target.url }).end());
    const chatty = await receiver((_req, _n, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(1 << 20)));
    const { endpoint: r1 } = await endpoint(redirecting.url);
    const { endpoint: r2 } = await endpoint(chatty.url);
    const { attempts } = startLoop();
    await store.queueDelivery(r1.id, testEvent());
    await store.queueDelivery(r2.id, testEvent());
    const seen = await attempts.until((a) => a.some((x) => x.delivery.endpointId === r1.id) && a.some((x) => x.delivery.endpointId === r2.id));
    const redirect = seen.find((x) => x.delivery.endpointId === r1.id)!;
    assert.deepEqual([redirect.result.statusCode, redirect.result.ok], [302, false]);
    assert.match(redirect.result.error!, /redirects are not followed/);
    assert.equal(target.received.length, 0);
    const big = seen.find((x) => x.delivery.endpointId === r2.id)!;
    assert.equal(big.result.ok, true);
    assert.equal(big.result.responseBody!.length, 4096);
  });

});
