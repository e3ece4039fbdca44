/**
 * Issue 23, point 5 (RSS ≤ CHUNK_CACHE_MB + 200 MB): every cache of the read
 * path that grows with the data holds at most its share of CHUNK_CACHE_MB
 * (src/http/api/read-cache-budget.ts). The real server, under a 1 MiB budget
 * and a load that would fill each cache many times over, reports each cache's
 * bytes against its share on GET /metrics after every batch of requests; the
 * caches are also driven alone, as real objects over a real store.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import { splitReadCacheBudget } from '../../src/http/api/read-cache-budget.js';
import { CompressedBodyCache } from '../../src/http/api/send-body.js';
import { TombstoneCache, tombstonesBytes } from '../../src/http/api/tombstone-cache.js';
import { renderTombstones } from '../../src/http/api/merged-page.js';
import { readGuard, writeGuard } from '../../src/imports/deletion-guard.js';
import { ImportWorker } from '../../src/imports/import-worker.js';
import type { Store } from '../../src/store/store.js';
import { customersCsv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { storeFactories } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const MIB = 1024 * 1024;

test('the shares add up to CHUNK_CACHE_MB exactly: chunks 12/16; compressed bodies, filter matches, tombstones and thin projections 1/16 each', () => {
  for (const total of [0, 1, 15, 16, 17, MIB, 32 * MIB, 512 * MIB, 512 * MIB + 7]) {
    const b = splitReadCacheBudget(total);
    assert.equal(b.total, total);
    assert.equal(b.chunks + b.compressedBodies + b.filterMatches + b.tombstones + b.thinProjections, total, `total ${total}`);
    for (const share of [b.compressedBodies, b.filterMatches, b.tombstones, b.thinProjections]) assert.equal(share, Math.floor(total / 16));
  }
  assert.deepEqual(splitReadCacheBudget(512 * MIB), { total: 512 * MIB, chunks: 384 * MIB, compressedBodies: 32 * MIB, filterMatches: 32 * MIB, tombstones: 32 * MIB, thinProjections: 32 * MIB });
  for (const bad of [-1, 1.5, Number.NaN]) assert.throws(() => splitReadCacheBudget(bad), /whole number of bytes/);
});

test('the compressed-body cache never holds more than its budget, however many bodies go through it', async () => {
  const budget = 64 * 1024;
  const cache = new CompressedBodyCache(budget);
  let most = 0;
  for (let i = 0; i < 100; i++) {
    // Random bytes do not compress: each body is ~5 KB compressed, 100 of them ~8 times the budget.
    const raw = randomBytes(5000);
    const out = await cache.get(`"b${i}-br"`, 'br', () => [raw]);
    assert.deepEqual(brotliDecompressSync(out), raw);
    assert.ok(cache.cachedBytes <= budget, `${cache.cachedBytes} > ${budget} after body ${i}`);
    most = Math.max(most, cache.cachedBytes);
  }
  assert.ok(most > budget / 2, 'the cache was used, not merely empty');
});

/** Customers in 8 name groups (`q=g3` matches an eighth of them), `removed` of the last ones left out. */
const customers = (n: number, removed = 0) => customersCsv(n - removed, (i) => `Cliente g${i % 8} n${i}`);

async function importCustomers(store: Store, companyId: number, csv: Buffer) {
  await store.createImport({ companyId, kind: 'clientes', filename: 'c.csv', source: 'test' }, (async function* () {
    yield csv;
  })(), 64 * MIB);
  await new ImportWorker(store, { snapshotRetentionMs: 3_600_000 }).runOnce();
}

for (const factory of await storeFactories()) {
  describe(`read caches within CHUNK_CACHE_MB (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let key: string;
    let companyId: number;
    /** Oldest first. */
    let snapshots: number[];
    const N = 20_000;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      server = await startServer(store, { CHUNK_CACHE_MB: '1' });
      const made = await companyWithKey(store, 'read-budget');
      key = made.key;
      companyId = made.company.id;
      // Later imports remove a few records each; the mass-deletion guard is not what is tested.
      await writeGuard(store, companyId, { ...(await readGuard(store, companyId)), enabled: false });
      // Each snapshot's tombstones are every removal so far: 0, 100, 200, 300 (~37 KB a hundred).
      for (const removed of [0, 100, 200, 300]) await importCustomers(store, companyId, customers(N, removed));
      snapshots = (await store.listImports(companyId, 'clientes', 4)).map((j) => j.snapshotId!).reverse();
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    const uses = async () => {
      const text = (await request(`${server.baseUrl}/metrics`)).text();
      const read = (metric: string) => {
        const out = new Map<string, number>();
        for (const m of text.matchAll(new RegExp(`^${metric}\\{cache="(\\w+)"\\} (\\d+)$`, 'gm'))) out.set(m[1]!, Number(m[2]));
        return out;
      };
      return { bytes: read('mirador_read_cache_bytes'), budgets: read('mirador_read_cache_budget_bytes') };
    };

    test('under load, each cache stays within its share of a 1 MiB budget, and the shares add up to it', async () => {
      const { budgets } = await uses();
      assert.deepEqual([...budgets.keys()].sort(), ['chunks', 'compressed_bodies', 'filter_matches', 'thin_projections', 'tombstones']);
      assert.equal([...budgets.values()].reduce((a, b) => a + b, 0), MIB);
      const most = new Map<string, number>();
      const check = async (after: string) => {
        const { bytes } = await uses();
        for (const [cache, budget] of budgets) {
          const held = bytes.get(cache)!;
          assert.ok(held <= budget, `${cache}: ${held} bytes held, its share is ${budget} (after ${after})`);
          most.set(cache, Math.max(most.get(cache) ?? 0, held));
        }
      };
      const get = async (path: string, headers: Record<string, string> = {}) => {
        const res = await request(`${server.baseUrl}${path}`, { headers: { ...bearer(key), ...headers } });
        assert.equal(res.status, 200, path);
      };

      // Details across the whole id space: chunks (~3 MB of items) and the record index.
      for (let i = 1; i <= N - 300; i += 97) await get(`/v1/clientes/C${String(i).padStart(6, '0')}`);
      await check('details');
      // Brotli pages at many offsets: each ~10 KB compressed, 40 of them.
      for (let offset = 0; offset < N - 300; offset += 500) await get(`/v1/clientes?limit=500&offset=${offset}`, { 'accept-encoding': 'br' });
      await check('compressed lists');
      // Filters whose matches are 10 KB each (an eighth of the customers), and smaller ones.
      for (let g = 0; g < 8; g++) await get(`/v1/clientes?q=g${g}&limit=10`);
      for (let n = 1; n < 10; n++) await get(`/v1/clientes?q=n${n}&limit=10`);
      await check('filters');
      // Thin pages over the whole list, for two field sets: every chunk's projection, twice.
      for (const fields of ['id_erp,nombre', 'id_erp,email,telefono,direccion']) {
        for (let offset = 0; offset < N - 300; offset += 500) await get(`/v1/clientes?fields=${fields}&limit=500&offset=${offset}`);
      }
      await check('thin pages');
      // Tombstones of each snapshot, pinned: ~37, 74 and 110 KB against a 64 KB share.
      for (const id of snapshots) {
        const meta = (await store.snapshotMeta(id))!;
        await get(`/v1/clientes?include_deleted=true&limit=10&snapshot=${meta.publicId}`);
      }
      await check('include_deleted');

      for (const cache of budgets.keys()) assert.ok((most.get(cache) ?? 0) > 0, `${cache} was used`);
    });

    test('the tombstone cache keeps the most recent snapshots within its budget, and a snapshot larger than it not at all', async () => {
      const withTombstones = snapshots.slice(1);
      const sizes = await Promise.all(withTombstones.map(async (id) => tombstonesBytes(renderTombstones(await store.readTombstones(id)))));
      assert.ok(sizes[0]! > 0 && sizes[0]! < sizes[1]! && sizes[1]! < sizes[2]!, `tombstone bytes ${sizes.join(', ')}`);

      // Room for the last two, not for all three.
      const budget = sizes[1]! + sizes[2]!;
      const cache = new TombstoneCache(store, budget);
      for (const id of withTombstones) {
        assert.deepEqual(await cache.of(id), renderTombstones(await store.readTombstones(id)));
        assert.ok(cache.cachedBytes <= budget, `${cache.cachedBytes} > ${budget}`);
      }
      assert.equal(cache.cachedBytes, sizes[1]! + sizes[2]!, 'the oldest went, the last two stay');

      const small = new TombstoneCache(store, sizes[2]! - 1);
      assert.equal((await small.of(withTombstones[2]!)).length, 300);
      assert.equal(small.cachedBytes, 0, 'larger than the whole budget: served, not kept');
    });
  });
}
