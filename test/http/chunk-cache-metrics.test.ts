/**
 * Issue 23, point 5: GET /metrics reports the chunk cache's hits and misses
 * (the tenants benchmark reads its hit rate from them), on both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ImportWorker } from '../../src/imports/import-worker.js';
import type { Store } from '../../src/store/store.js';
import { customersCsv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { storeFactories } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

for (const factory of await storeFactories()) {
  describe(`chunk cache metrics (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let key: string;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      server = await startServer(store);
      const { company, key: k } = await companyWithKey(store, 'cache-metrics');
      key = k;
      await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'c.csv', source: 'test' }, (async function* () {
        yield customersCsv(5);
      })(), 1 << 20);
      await new ImportWorker(store, { snapshotRetentionMs: 60_000 }).runOnce();
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    const counters = async () => {
      const text = (await request(`${server.baseUrl}/metrics`)).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
      return { hits: value('mirador_chunk_cache_hits_total'), misses: value('mirador_chunk_cache_misses_total'), bytes: value('mirador_chunk_cache_bytes') };
    };

    test('a first read of a chunk is a miss, the next ones are hits, and the cache says what it holds', async () => {
      const before = await counters();
      assert.equal(before.misses, 0);
      const detail = async (id: string) => assert.equal((await request(`${server.baseUrl}/v1/clientes/${id}`, { headers: bearer(key) })).status, 200);
      await detail('C000001');
      const first = await counters();
      assert.ok(first.misses > 0, 'the first detail reads its chunk from the store');
      assert.ok(first.bytes > 0);
      // The cache has room: the first miss read the chunk whole and kept it, so the next details in it are hits.
      await detail('C000002');
      await detail('C000003');
      const third = await counters();
      assert.equal(third.misses, first.misses, 'the kept chunk is not read again');
      assert.ok(third.hits >= first.hits + 2, `${third.hits} hits after ${first.hits}`);
      assert.equal(third.bytes, first.bytes);
    });
  });
}
