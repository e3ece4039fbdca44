/**
 * Issue 23, point 5: once the chunk cache is full, a chunk read for a page
 * is kept at its second read, not its first (ClockCache.offer). A chunk read
 * once pushes nothing out; one read again is kept and evicts as before; while
 * the cache has room, the first read keeps it. On both stores, through the
 * asynchronous read and (SQLite) the synchronous one, and the bytes served
 * are the store's every time, kept or not. Over HTTP: a page, plain or thin,
 * is the same bytes under the same ETag whether its chunks were read and
 * dropped, read and kept, or held all along (contract: an ETag names exact bytes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CachedChunkSource } from '../../src/http/api/cached-chunk-source.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Chunk, SnapshotMeta, Store } from '../../src/store/store.js';
import { customer, CUSTOMER_COLUMNS } from '../helpers/records.js';
import { storeFactories } from '../helpers/stores.js';
import { bearer, request } from '../helpers/http.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

for (const factory of await storeFactories()) {
  describe(`a full chunk cache keeps a chunk at its second read (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let meta: SnapshotMeta;
    let chunks: Chunk[];

    before(async () => {
      ({ store, cleanup } = await factory.create());
      const { company } = await companyWithKey(store, 'admission');
      const rows = Array.from({ length: 120 }, (_, i) => {
        const id = `C${String(i).padStart(4, '0')}`;
        return customer(id, `Cliente ${id}`, i + 2, { obs: `ñ ${'y'.repeat(2000 + i)}` });
      });
      const staged = await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-05-01T00:00:00Z') }, rows);
      meta = (await store.snapshotMeta(staged.snapshotId))!;
      chunks = await store.readChunks(meta.id, 0, meta.chunkStarts.length - 1);
      assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
    });
    after(async () => cleanup?.());

    /** Room for the largest chunk and not for a second one. */
    const oneChunkBudget = () => Math.max(...chunks.map((c) => c.bytes.length + c.offsets.byteLength)) + 64;

    const reads: [string, (source: CachedChunkSource, no: number) => Promise<Chunk | undefined>][] = [
      ['asynchronous read', async (source, no) => (await source.chunks(meta, no, no))[0]],
    ];
    if (factory.name === 'sqlite') reads.push(['synchronous read', async (source, no) => source.cachedChunks(meta, no, no)?.[0]]);

    for (const [how, read] of reads) {
      test(`${how}: with room, the first read keeps the chunk`, async () => {
        const source = new CachedChunkSource(store, 64 << 20, 0);
        for (let no = 0; no < chunks.length; no++) {
          assert.deepEqual((await read(source, no))!.bytes, chunks[no]!.bytes);
          assert.ok(source.holdsChunk(meta, no), `chunk ${no} kept`);
        }
      });

      test(`${how}: in a full cache, a chunk read once evicts nothing, and read again it is kept`, async () => {
        const budget = oneChunkBudget();
        const source = new CachedChunkSource(store, budget, 0);
        assert.deepEqual((await read(source, 0))!.bytes, chunks[0]!.bytes);
        assert.ok(source.holdsChunk(meta, 0), 'the first chunk fits an empty cache');
        for (let no = 1; no < chunks.length; no++) {
          const before = no - 1;
          assert.deepEqual((await read(source, no))!.bytes, chunks[no]!.bytes, `chunk ${no}, first read`);
          assert.equal(source.holdsChunk(meta, no), false, `chunk ${no} not kept at its first read`);
          assert.ok(source.holdsChunk(meta, before), `chunk ${before} still held`);
          assert.deepEqual((await read(source, no))!.bytes, chunks[no]!.bytes, `chunk ${no}, second read`);
          assert.ok(source.holdsChunk(meta, no), `chunk ${no} kept at its second read`);
          assert.equal(source.holdsChunk(meta, before), false, `chunk ${before} evicted for it`);
          assert.ok(source.cachedBytes <= budget, `${source.cachedBytes} > ${budget}`);
        }
      });
    }
  });
}

describe('ClockCache.offer', () => {
  test('keeps what fits, keeps in a full cache only what was asked for before, and noteAsk counts as that ask', async () => {
    const { ClockCache } = await import('../../src/http/api/clock-cache.js');
    const entry = () => Buffer.alloc(1000);
    const cache = new ClockCache(2500);
    cache.noteAsk('a');
    assert.equal(cache.offer('a', entry()), true, 'room for it');
    assert.equal(cache.askedBefore('a'), false, 'kept with room: its ask is forgotten too');
    assert.equal(cache.offer('b', entry()), true, 'room for it');
    assert.equal(cache.offer('c', entry()), false, 'full: the first offer only notes the ask');
    assert.equal(cache.has('c'), false);
    assert.equal(cache.askedBefore('c'), true);
    assert.equal(cache.offer('c', entry()), true, 'the second offer keeps it');
    assert.ok(cache.has('c') && cache.bytes <= 2500, 'and something was evicted for it');
    assert.equal(cache.askedBefore('c'), false, 'a kept key is forgotten');
    cache.noteAsk('d');
    assert.equal(cache.offer('d', entry()), true, 'an ask noted before the read (a detail) makes the first offer keep it');
    assert.equal(cache.offer('d', entry()), true, 'held already');
  });
});

for (const factory of await storeFactories()) {
  describe(`pages through a full chunk cache are the bytes and ETags of a roomy one (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let small: TestServer;
    let roomy: TestServer;
    let key: string;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      const made = await companyWithKey(store, 'full-pages');
      key = made.key;
      // ~5 MB of items against a chunk share of 0.75 MiB: the small server's cache is full after a few pages.
      const rows = Array.from({ length: 1500 }, (_, i) => {
        const id = `C${String(i).padStart(5, '0')}`;
        return customer(id, `Cliente ñ ${id}`, i + 2, { obs: `€ ${'z'.repeat(3000 + (i % 50))}` });
      });
      await replaceRecords(store, { companyId: made.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-05-01T00:00:00Z') }, rows);
      small = await startServer(store, { CHUNK_CACHE_MB: '1' });
      roomy = await startServer(store);
    });
    after(async () => {
      await small?.close();
      await roomy?.close();
      await cleanup?.();
    });

    test('each page asked three times of the small server matches the roomy one', async () => {
      const paths: string[] = [];
      for (let offset = 0; offset < 1500; offset += 150) {
        paths.push(`/v1/clientes?limit=100&offset=${offset}`, `/v1/clientes?fields=id_erp,nombre&limit=200&offset=${offset}`);
      }
      const get = async (server: TestServer, path: string) => {
        const res = await request(`${server.baseUrl}${path}`, { headers: { ...bearer(key), 'accept-encoding': 'identity' } });
        assert.equal(res.status, 200, path);
        return { body: res.text(), etag: res.headers.etag };
      };
      for (const path of paths) {
        const expected = await get(roomy, path);
        for (let ask = 1; ask <= 3; ask++) assert.deepEqual(await get(small, path), expected, `${path}, ask ${ask}`);
      }
      // The small server's cache was full, so first reads were served and dropped.
      const metrics = (await request(`${small.baseUrl}/metrics`)).text();
      const metric = (cache: string, name: string) => Number(new RegExp(`^${name}\\{cache="${cache}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
      const held = metric('chunks', 'mirador_read_cache_bytes');
      const share = metric('chunks', 'mirador_read_cache_budget_bytes');
      assert.ok(held > share - 2 * 70_000 && held <= share, `chunks held ${held} of ${share}`);
    });
  });
}
