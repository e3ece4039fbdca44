/**
 * Issue 19, point 1: GET /v1/eventos (a key's company's events, the list
 * envelope, limit/offset/updated_since on created_at, ETag) and
 * GET /v1/sandbox/eventos (fixed events), over real HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ImportWorker } from '../../src/imports/import-worker.js';
import type { Store } from '../../src/store/store.js';
import { customersCsv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { sqliteFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const ENVELOPE = ['ok', 'total', 'limit', 'offset', 'has_more', 'next_offset', 'items'];

describe('the event feed over HTTP', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let worker: ImportWorker;
  let key: string;
  let otherKey: string;

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startServer(store);
    worker = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
    const a = await companyWithKey(store, 'feed-a');
    const b = await companyWithKey(store, 'feed-b');
    key = a.key;
    otherKey = b.key;
    for (const [companyId, rows] of [[a.company.id, 3], [a.company.id, 4], [b.company.id, 2], [a.company.id, 5]] as const) {
      await store.createImport({ companyId, kind: 'clientes', filename: 'c.csv', source: 'test' }, (async function* () {
        yield customersCsv(rows);
      })(), 1 << 20);
      await worker.runOnce();
      await new Promise((r) => setTimeout(r, 3));
    }
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  const get = (path: string, headers: Record<string, string> = bearer(key)) => request(`${server.baseUrl}${path}`, { headers });

  test('a company’s events, oldest first, in the list envelope; another company sees only its own', async () => {
    const res = await get('/v1/eventos');
    assert.equal(res.status, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ENVELOPE);
    assert.deepEqual([body.total, body.limit, body.offset, body.has_more, body.next_offset], [3, 100, 0, false, 3]);
    assert.deepEqual(body.items.map((e: any) => e.data.counts.inserted), [3, 1, 1]);
    assert.ok(body.items.every((e: any) => e.type === 'import.published'));
    const times = body.items.map((e: any) => e.created_at);
    assert.deepEqual([...times].sort(), times);
    const other = (await get('/v1/eventos', bearer(otherKey))).json();
    assert.equal(other.total, 1);
    assert.ok(!other.items.some((e: any) => body.items.some((m: any) => m.id === e.id)));
  });

  test('limit, offset and updated_since (on created_at, inclusive), with the usual errors', async () => {
    const all = (await get('/v1/eventos')).json().items;
    const page = (await get('/v1/eventos?limit=1&offset=1')).json();
    assert.deepEqual([page.total, page.has_more, page.next_offset], [3, true, 2]);
    assert.deepEqual(page.items.map((e: any) => e.id), [all[1].id]);
    const since = (await get(`/v1/eventos?updated_since=${encodeURIComponent(all[1].created_at)}`)).json();
    assert.deepEqual(since.items.map((e: any) => e.id), [all[1].id, all[2].id]);
    assert.equal(since.total, 2);
    assert.equal((await get('/v1/eventos?offset=99')).json().items.length, 0);
    for (const bad of ['limit=0', 'limit=1001', 'offset=-1', 'updated_since=yesterday', 'limit=1&limit=2']) {
      const r = await get(`/v1/eventos?${bad}`);
      assert.equal(r.status, 400, bad);
      assert.equal(r.json().error, 'invalid_parameter');
    }
    assert.equal((await get('/v1/eventos?snapshot=whatever&q=x')).status, 200, 'other parameters are ignored');
  });

  test('authentication like every /v1 route; ETag and 304; other methods 405', async () => {
    assert.equal((await get('/v1/eventos', {})).status, 401);
    assert.equal((await get('/v1/eventos', {})).json().error, 'auth_required');
    assert.equal((await get('/v1/eventos', bearer(`${key}x`))).json().error, 'unauthorized');
    const first = await get('/v1/eventos');
    const etag = String(first.headers.etag);
    assert.match(etag, /^"/);
    assert.equal(first.headers['cache-control'], 'private, max-age=0, must-revalidate');
    assert.equal((await get('/v1/eventos', { ...bearer(key), 'if-none-match': etag })).status, 304);
    assert.equal((await get('/v1/eventos', { ...bearer(otherKey), 'if-none-match': etag })).status, 200, 'another company’s body, another tag');
    const post = await request(`${server.baseUrl}/v1/eventos`, { method: 'POST', headers: bearer(key) });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD, OPTIONS');
  });

  test('the sandbox: fixed events, every type, the same bytes every time, no key', async () => {
    const a = await get('/v1/sandbox/eventos', {});
    const b = await get('/v1/sandbox/eventos', {});
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, b.body);
    const body = a.json();
    assert.deepEqual(Object.keys(body), ['ok', 'sandbox', ...ENVELOPE.slice(1)]);
    assert.equal(body.sandbox, true);
    assert.ok(body.total >= 10);
    assert.deepEqual(new Set(body.items.map((e: any) => e.type)), new Set(['import.published', 'import.held', 'import.failed']));
    for (const e of body.items) {
      assert.deepEqual(Object.keys(e), ['id', 'type', 'created_at', 'data']);
      assert.equal(e.data.snapshot === null, e.type !== 'import.published');
    }
    const since = (await get('/v1/sandbox/eventos?updated_since=2026-11-16&limit=2', {})).json();
    assert.ok(since.items.every((e: any) => e.created_at >= '2026-11-16'));
    assert.equal(since.items.length, 2);
    assert.equal(since.has_more, true);
    assert.equal(a.headers['cache-control'], 'public, max-age=3600');
  });
});
