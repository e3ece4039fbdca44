/**
 * Issue 23, point 5: once the chunk cache is full, a chunk read for a page
 * is kept at its second read, not its first (ClockCache.offer). A chunk read
 * once pushes nothing out; one read again is kept and evicts as before; while
 * the cache has room, the first read keeps it. On both stores, through the
 * asynchronous read and (SQLite) the synchronous one, and the bytes served
 * are the store's every time, kept or not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CachedChunkSource } from '../../src/http/api/cached-chunk-source.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Chunk, SnapshotMeta, Store } from '../../src/store/store.js';
import { customer, CUSTOMER_COLUMNS } from '../helpers/records.js';
import { storeFactories } from '../helpers/stores.js';
import { companyWithKey } from '../helpers/test-server.js';

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
