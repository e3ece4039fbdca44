/**
 * A detail whose key, live record, chunk (and compressed body) are in memory
 * is answered without a promise (api-routes.ts `detailNow`). These pin that
 * such answers are the very answers the general path gives — status, headers
 * and bytes — and that everything the general path refuses, it still refuses.
 * Two servers share one store: a cold one answers through the general path, a
 * warm one from memory; a counting view of the store tells which path ran.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { openStore } from '../../src/store/open-store.js';
import { bearer, request, type RawResponse } from '../helpers/http.js';
import { customer, customers, CUSTOMER_COLUMNS, range } from '../helpers/records.js';
import { storeFactories } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

/** The store, with a count of the calls each of its methods gets. */
function counting(store: Store): { store: Store; calls: Map<string, number>; reset(): void } {
  const calls = new Map<string, number>();
  const view = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: view, calls, reset: () => calls.clear() };
}

/** Store methods the general path of a detail calls; the in-memory path calls none of them. */
const GENERAL_PATH = ['findLiveRecord', 'findRecord', 'liveSnapshotId', 'snapshotMeta', 'readChunks', 'credentialByPrefix'];
const generalCalls = (calls: Map<string, number>) => GENERAL_PATH.filter((m) => calls.has(m));

/** Headers that differ between any two responses by design. */
const PER_RESPONSE = new Set(['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset', 'keep-alive', 'connection']);
const comparable = (res: RawResponse) =>
  Object.fromEntries(Object.entries(res.headers).filter(([k]) => !PER_RESPONSE.has(k)).sort(([a], [b]) => a.localeCompare(b)));

for (const factory of await storeFactories()) {
  describe(`details answered from memory (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let databaseUrl: string;
    let cleanup: () => Promise<void>;
    let key: string;
    let companyId: number;
    const servers: TestServer[] = [];
    const at = Date.parse('2026-04-01T00:00:00Z');

    before(async () => {
      ({ store, databaseUrl, cleanup } = await factory.create());
      ({ key, company: { id: companyId } } = await companyWithKey(store, 'memo'));
      await replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at }, customers(range(40)));
    });
    after(async () => {
      for (const s of servers) await s.close();
      await cleanup?.();
    });

    /** A server over a counting view of the store. */
    const serve = async (env: Record<string, string> = {}) => {
      const spy = counting(store);
      const server = await startServer(spy.store, env);
      servers.push(server);
      const url = (path: string) => server.baseUrl + path;
      /**
       * The response to a request answered from memory. A key's cached entry lives 500 ms, so on
       * a busy machine the request after the warm-up may find it expired and take the general
       * path (which refreshes it): then it is asked again.
       */
      const fromMemory = async (path: string, headers: Record<string, string>) => {
        for (let attempt = 0; attempt < 10; attempt++) {
          spy.reset();
          const res = await request(url(path), { headers });
          if (generalCalls(spy.calls).length === 0) return res;
        }
        assert.fail(`${path} ${JSON.stringify(headers)}: never answered from memory (${generalCalls(spy.calls).join(', ')})`);
      };
      return { ...spy, url, fromMemory };
    };

    test('identity, gzip, br and 304: the same status, headers and bytes as the general path', async () => {
      const cold = await serve();
      const warm = await serve();
      const path = '/v1/clientes/C000007';
      for (const encoding of ['identity', 'gzip', 'br']) {
        const headers = { ...bearer(key), 'accept-encoding': encoding };
        // The warm server's first request fills its caches (and compresses); from then on it answers from memory.
        await request(warm.url(path), { headers });
        const fromMemory = await warm.fromMemory(path, headers);
        cold.reset();
        const general = await request(cold.url(path), { headers });
        assert.notDeepEqual(generalCalls(cold.calls), [], `${encoding}: the cold server took the general path`);
        assert.equal(fromMemory.status, 200);
        assert.equal(fromMemory.status, general.status);
        assert.deepEqual(comparable(fromMemory), comparable(general), encoding);
        assert.deepEqual(fromMemory.body, general.body, encoding);
        if (encoding === 'gzip') assert.equal(JSON.parse(gunzipSync(fromMemory.body).toString()).item.id_erp, 'C000007');
        assert.match(String(fromMemory.headers['x-request-id']), /./);
        assert.match(String(fromMemory.headers['ratelimit-remaining']), /^\d+$/);

        const conditional = { ...headers, 'if-none-match': String(general.headers.etag) };
        const notModified = await warm.fromMemory(path, conditional);
        const cold2 = await serve();
        const general304 = await request(cold2.url(path), { headers: conditional });
        assert.equal(notModified.status, 304);
        assert.equal(general304.status, 304);
        assert.deepEqual(comparable(notModified), comparable(general304), `${encoding} 304`);
        assert.equal(notModified.body.length, 0);
      }
    });

    test('issue 23: a detail through the RecordIndex, and one with nothing cached, give the same status, headers and bytes', async () => {
      // Cold: its own store (no record positions kept) and no chunk cache, so every detail reads its record and chunk.
      const coldStore = await openStore(databaseUrl);
      const cold = await startServer(coldStore, { CHUNK_CACHE_MB: '0' });
      servers.push({ ...cold, close: async () => (await cold.close(), await coldStore.close()) });
      const warm = await serve();
      const ids = range(40);
      // Lookups load the snapshot's RecordIndex (after 16); then a detail reads no record from the store.
      for (const id of ids.slice(0, 16)) await request(warm.url(`/v1/clientes/${id}`), { headers: bearer(key) });
      const deadline = Date.now() + 60_000;
      for (let i = 16; ; i = 16 + ((i - 15) % 24)) {
        warm.reset();
        await request(warm.url(`/v1/clientes/${ids[i]}`), { headers: bearer(key) });
        if (!warm.calls.has('cachedRecord') && !warm.calls.has('findRecord') && !warm.calls.has('findLiveRecord')) break;
        assert.ok(Date.now() < deadline, 'the RecordIndex was never used');
        await new Promise((r) => setTimeout(r, 10));
      }
      for (const id of [...ids, 'C999999']) {
        for (const encoding of ['identity', 'gzip']) {
          const headers = { ...bearer(key), 'accept-encoding': encoding };
          const path = `/v1/clientes/${id}`;
          const viaIndex = await request(warm.url(path), { headers });
          const general = await request(cold.baseUrl + path, { headers });
          assert.equal(viaIndex.status, general.status, `${id} ${encoding}`);
          assert.deepEqual(comparable(viaIndex), comparable(general), `${id} ${encoding}`);
          if (general.status !== 200) {
            // An error's body names its request: the rest must match.
            const { request_id: _a, ...mine } = viaIndex.json() as Record<string, unknown>;
            const { request_id: _b, ...theirs } = general.json() as Record<string, unknown>;
            assert.deepEqual(mine, theirs, `${id} ${encoding}`);
            assert.equal(mine.error, 'not_found');
            continue;
          }
          assert.deepEqual(viaIndex.body, general.body, `${id} ${encoding}`);
          const conditional = { ...headers, 'if-none-match': String(general.headers.etag) };
          const [a, b] = [await request(warm.url(path), { headers: conditional }), await request(cold.baseUrl + path, { headers: conditional })];
          assert.equal(a.status, 304);
          assert.deepEqual(comparable(a), comparable(b), `${id} ${encoding} 304`);
        }
      }
      assert.equal(warm.calls.get('findRecord') ?? 0, 0);
    });

    test('a request id sent by the client is echoed, and a 304 is not counted against the limit', async () => {
      const warm = await serve();
      const path = '/v1/clientes/C000003';
      const first = await request(warm.url(path), { headers: bearer(key) });
      const etag = String(first.headers.etag);
      const res = await warm.fromMemory(path, { ...bearer(key), 'x-request-id': 'sync-abc.1' });
      assert.equal(res.headers['x-request-id'], 'sync-abc.1');
      const window = Math.floor(Date.now() / 60_000);
      const remaining = Number(res.headers['ratelimit-remaining']);
      const seen: number[] = [];
      for (let i = 0; i < 3; i++) {
        const nm = await request(warm.url(path), { headers: { ...bearer(key), 'if-none-match': etag } });
        assert.equal(nm.status, 304);
        seen.push(Number(nm.headers['ratelimit-remaining']));
      }
      seen.push(Number((await request(warm.url(path), { headers: bearer(key) })).headers['ratelimit-remaining']));
      // Counts restart with each minute's window: compared only when none began meanwhile.
      if (Math.floor(Date.now() / 60_000) === window) assert.deepEqual(seen, [remaining, remaining, remaining, remaining - 1]);
    });

    test('a wrong secret, another scope or no key is refused even when the key is cached', async () => {
      const warm = await serve();
      const path = '/v1/clientes/C000001';
      assert.equal((await request(warm.url(path), { headers: bearer(key) })).status, 200);
      const wrongSecret = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
      const upload = `upl_${key.slice(4)}`;
      for (const headers of [bearer(wrongSecret), bearer(upload), {}, { authorization: `Basic ${key}` }]) {
        const res = await request(warm.url(path), { headers });
        assert.equal(res.status, 401, JSON.stringify(headers));
        assert.equal(res.json().ok, false);
      }
      // An id the snapshot lacks is a 404 from the general path, with the key warm.
      assert.equal((await request(warm.url('/v1/clientes/NOPE'), { headers: bearer(key) })).status, 404);
    });

    test('a 304 comes after authentication: a wrong key with the right ETag is refused', async () => {
      const warm = await serve();
      const path = '/v1/clientes/C000004';
      const etag = String((await warm.fromMemory(path, bearer(key))).headers.etag);
      assert.equal((await warm.fromMemory(path, { ...bearer(key), 'if-none-match': etag })).status, 304);
      const wrongSecret = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
      for (const headers of [bearer(wrongSecret), {}]) {
        assert.equal((await request(warm.url(path), { headers: { ...headers, 'if-none-match': etag } })).status, 401, JSON.stringify(headers));
      }
    });

    test('a key of another company, with the same id warm in memory, reads only its own record', async () => {
      const other = await companyWithKey(store, 'memo-other');
      await replaceRecords(store, { companyId: other.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at }, [customer('C000009', 'Otra S.A.')]);
      const warm = await serve();
      const path = '/v1/clientes/C000009';
      const mine = await warm.fromMemory(path, bearer(key));
      const theirs = await warm.fromMemory(path, bearer(other.key));
      assert.equal(mine.json().item.nombre, 'Cliente C000009');
      assert.equal(theirs.json().item.nombre, 'Otra S.A.');
      assert.notEqual(mine.headers.etag, theirs.headers.etag);
      // An id only the first company has is the other's 404, warm or not.
      await warm.fromMemory('/v1/clientes/C000010', bearer(key));
      assert.equal((await request(warm.url('/v1/clientes/C000010'), { headers: bearer(other.key) })).status, 404);
    });

    test('a key revoked by another process is refused within a second, though its detail was answered from memory', async () => {
      const revoked = await companyWithKey(store, 'memo-revoked');
      await replaceRecords(store, { companyId: revoked.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at }, [customer('C000001')]);
      const warm = await serve();
      const path = '/v1/clientes/C000001';
      await warm.fromMemory(path, bearer(revoked.key));
      // Through the store directly, as another instance would: this server learns it from its cache's lifetime.
      const at0 = Date.now();
      await store.revokeCredential(revoked.prefix);
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() - at0)));
      assert.equal((await request(warm.url(path), { headers: bearer(revoked.key) })).status, 401);
    });

    test('the limit is enforced: the request over it gets the 429, counted once', async () => {
      const path = '/v1/clientes/C000002';
      // Windows are fixed minutes: one that turns between two of these requests starts the count
      // again (3, 3, 2, 1). A sequence that saw the count not go down, or its fifth request let
      // through, is asked again on a fresh server; a minute cannot turn twice in three tries.
      for (let attempt = 1; ; attempt++) {
        const warm = await serve({ RATE_LIMIT_PER_MINUTE: '4' });
        const seen: number[] = [];
        for (let i = 0; i < 4; i++) {
          const res = await request(warm.url(path), { headers: bearer(key) });
          assert.equal(res.status, 200, `request ${i + 1}`);
          seen.push(Number(res.headers['ratelimit-remaining']));
        }
        const over = await request(warm.url(path), { headers: bearer(key) });
        const turned = seen.some((n, i) => i > 0 && n >= seen[i - 1]!) || over.status === 200;
        if (turned && attempt < 3) continue;
        assert.deepEqual(seen, [3, 2, 1, 0]);
        assert.equal(over.status, 429);
        assert.equal(over.json().error, 'rate_limited');
        assert.match(String(over.headers['retry-after']), /^\d+$/);
        assert.equal(over.headers['ratelimit-remaining'], '0');
        return;
      }
    });

    test('after another connection publishes, a warm server answers the new record', async () => {
      const warm = await serve();
      const path = '/v1/clientes/C000005';
      const before = await request(warm.url(path), { headers: bearer(key) });
      await request(warm.url(path), { headers: bearer(key) });
      const other = await openStore(databaseUrl);
      try {
        const changed = customers(range(40)).map((r) => (r.fields[0] === 'C000005' ? customer('C000005', 'Renamed S.L.', r.line) : r));
        await replaceRecords(other, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: at + 60_000 }, changed);
      } finally {
        await other.close();
      }
      // SQLite: at once. PostgreSQL: once the notification is read, within moments.
      const deadline = Date.now() + HANG_GUARD_MS;
      let after = await request(warm.url(path), { headers: bearer(key) });
      while (after.headers.etag === before.headers.etag && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        after = await request(warm.url(path), { headers: bearer(key) });
      }
      assert.notEqual(after.headers.etag, before.headers.etag);
      assert.equal(after.json().item.nombre, 'Renamed S.L.');
      // And the old tag is answered with the new body, not a 304.
      const stale = await request(warm.url(path), { headers: { ...bearer(key), 'if-none-match': String(before.headers.etag) } });
      assert.equal(stale.status, 200);
      assert.equal(stale.json().item.nombre, 'Renamed S.L.');
    });
  });
}
