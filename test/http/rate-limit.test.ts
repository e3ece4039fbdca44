/** Issue 8, point 1: rate limits per key and per sandbox client, with their headers. */
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { bearer, request } from '../helpers/http.js';
import { sqliteFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';
import { awayFromMinuteBoundary } from '../helpers/timing.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function redisAnswers(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
const redisSkip = (await redisAnswers()) || process.env.CI === 'true' ? false : `Redis suite skipped: nothing answers at ${REDIS_URL}`;
if (redisSkip) process.stderr.write(`${redisSkip}\n`);

describe('rate limits', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startServer(store, { RATE_LIMIT_PER_MINUTE: '5', SANDBOX_RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: 'true' });
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  test('every authenticated response carries RateLimit headers; the 6th request is 429 with Retry-After', async () => {
    await awayFromMinuteBoundary();
    const { key } = await companyWithKey(store, 'limited');
    for (let i = 1; i <= 5; i++) {
      const res = await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) });
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-limit'], '5');
      assert.equal(res.headers['ratelimit-remaining'], String(5 - i));
      const reset = Number(res.headers['ratelimit-reset']);
      assert.ok(reset >= 0 && reset <= 60);
    }
    const limited = await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) });
    assert.equal(limited.status, 429);
    const body = limited.json();
    assert.equal(body.error, 'rate_limited');
    assert.equal(body.request_id, limited.headers['x-request-id']);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(limited.headers['ratelimit-limit'], '5');
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    // Another key has its own budget.
    const other = await companyWithKey(store, 'unlimited-neighbour');
    assert.equal((await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(other.key) })).status, 200);
  });

  test('a 304 does not count; bad requests do', async () => {
    await awayFromMinuteBoundary();
    const { key } = await companyWithKey(store, 'polling');
    const first = await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) });
    assert.equal(first.headers['ratelimit-remaining'], '4');
    for (let i = 0; i < 10; i++) {
      const cond = await request(`${server.baseUrl}/v1/clientes`, { headers: { ...bearer(key), 'if-none-match': String(first.headers.etag) } });
      assert.equal(cond.status, 304);
      assert.equal(cond.headers['ratelimit-remaining'], '4');
    }
    const bad = await request(`${server.baseUrl}/v1/clientes?limit=0`, { headers: bearer(key) });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers['ratelimit-remaining'], '3');
    const missing = await request(`${server.baseUrl}/v1/clientes/NOPE`, { headers: bearer(key) });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['ratelimit-remaining'], '2');
  });

  test('the sandbox is limited per client address', async () => {
    await awayFromMinuteBoundary();
    const from = (ip: string) => request(`${server.baseUrl}/v1/sandbox/obras?limit=1`, { headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < 3; i++) assert.equal((await from('10.9.0.1')).status, 200);
    const limited = await from('10.9.0.1');
    assert.equal(limited.status, 429);
    assert.equal(limited.json().error, 'rate_limited');
    assert.equal((await from('10.9.0.2')).status, 200, 'another address has its own budget');
  });

  describe('shared through Redis', { skip: redisSkip }, () => {
    test('two instances with REDIS_URL share one count per key', async () => {
      await awayFromMinuteBoundary();
      const env = { RATE_LIMIT_PER_MINUTE: '4', REDIS_URL };
      const a = await startServer(store, env);
      const b = await startServer(store, env);
      try {
        const { key } = await companyWithKey(store, `shared-${Date.now()}`);
        const statuses = [];
        for (let i = 0; i < 6; i++) {
          const target = i % 2 === 0 ? a : b;
          statuses.push((await request(`${target.baseUrl}/v1/clientes`, { headers: bearer(key) })).status);
        }
        assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
});
