/**
 * Issue 23: a detail whose chunk is not in memory, once the cache is full,
 * reads only its item from the store (Store.readItem), and the chunk is read
 * whole, and kept, the second time one of its items misses; while the cache
 * has room, the first miss reads the chunk and keeps it. On both stores: the
 * bytes must be exactly the chunk's, a first miss in a full cache keeps no
 * chunk, and one with room keeps it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chunkKey } from '../../src/http/api/cache-sizes.js';
import { CHUNK_TARGET_BYTES } from '../../src/store/chunk-builder.js';
import { CachedChunkSource } from '../../src/http/api/cached-chunk-source.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Chunk, SnapshotMeta, Store } from '../../src/store/store.js';
import { customer, CUSTOMER_COLUMNS } from '../helpers/records.js';
import { storeFactories } from '../helpers/stores.js';
import { companyWithKey } from '../helpers/test-server.js';

for (const factory of await storeFactories()) {
  describe(`a detail's miss keeps its chunk while the cache has room, else reads its item alone first (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let meta: SnapshotMeta;
    let chunks: Chunk[];
    const ids = Array.from({ length: 200 }, (_, i) => `C${String(i).padStart(4, '0')}`);
    const itemAt = (pos: number) => {
      const c = chunks.find((x) => pos >= x.firstPos && pos < x.firstPos + x.offsets.length - 1)!;
      const k = pos - c.firstPos;
      return c.bytes.subarray(c.offsets[k]!, c.offsets[k + 1]! - 1);
    };

    before(async () => {
      ({ store, cleanup } = await factory.create());
      const { company } = await companyWithKey(store, 'items');
      // Accents and long remarks: several chunks, multi-byte UTF-8 at item edges.
      const rows = ids.map((id, i) => customer(id, `Cliente ñandú ${id}`, i + 2, { obs: `€ ${'x'.repeat(1500 + i)}` }));
      const staged = await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-05-01T00:00:00Z') }, rows);
      meta = (await store.snapshotMeta(staged.snapshotId))!;
      chunks = await store.readChunks(meta.id, 0, meta.chunkStarts.length - 1);
      assert.ok(chunks.length >= 4, `${chunks.length} chunks`);
    });
    after(async () => cleanup?.());

    /** A budget of one chunk and less than two chunks' room: every first miss finds the cache full. */
    const fullBudget = () => {
      const largest = Math.max(...chunks.map((c) => c.bytes.length + c.offsets.byteLength));
      assert.ok(largest + 64 < 2 * CHUNK_TARGET_BYTES, `a chunk of ${largest} bytes`);
      return largest + 64;
    };

    test('in a full cache, every item, read alone and then from a kept chunk, is the chunk bytes', async () => {
      const source = new CachedChunkSource(store, fullBudget(), 0);
      for (let pos = 0; pos < meta.count; pos++) assert.deepEqual(await source.item(meta, pos), itemAt(pos), `pos ${pos}`);
      for (let pos = meta.count - 1; pos >= 0; pos--) assert.deepEqual(await source.item(meta, pos), itemAt(pos), `pos ${pos} again`);
    });

    test('with room in the cache, the first miss keeps its chunk, and every item is then in memory', async () => {
      const source = new CachedChunkSource(store, 64 << 20, 0);
      const read = store.readItemNow ? (pos: number) => source.cachedItem(meta, pos) : (pos: number) => source.item(meta, pos);
      assert.deepEqual(await read(meta.chunkStarts[1]!), itemAt(meta.chunkStarts[1]!));
      assert.equal(source.stats().entries, 1, 'the first miss kept the chunk');
      assert.equal(source.stats().misses, 1);
      for (let pos = 0; pos < meta.count; pos++) assert.deepEqual(await source.item(meta, pos), itemAt(pos), `pos ${pos}`);
      // One read per chunk, and each is now in memory: every item answers at once.
      assert.equal(source.stats().misses, chunks.length);
      for (let pos = 0; pos < meta.count; pos++) assert.deepEqual(source.cachedItem(meta, pos), itemAt(pos), `pos ${pos}`);
    });

    test('in a full cache, a first miss keeps no chunk; the second miss in that chunk keeps it', async () => {
      const source = new CachedChunkSource(store, fullBudget(), 0);
      const [first, second] = [meta.chunkStarts[2]!, meta.chunkStarts[2]! + 1];
      const readNow = store.readItemNow ? (pos: number) => source.cachedItem(meta, pos) : undefined;
      assert.deepEqual(readNow ? readNow(first) : await source.item(meta, first), itemAt(first));
      assert.equal(source.cachedBytes, 0, 'the first miss read the item, not the chunk');
      assert.equal(source.stats().entries, 0);
      assert.deepEqual(await source.item(meta, second), itemAt(second));
      assert.equal(source.stats().entries, 1, 'the second miss kept the chunk');
      // The chunk's bytes and offsets, and its key's (two bytes a character).
      assert.equal(source.cachedBytes, chunks[2]!.bytes.length + chunks[2]!.offsets.byteLength + 2 * chunkKey(meta.id, 2).length);
      // Now in memory: no store read at all.
      const before = source.stats().misses;
      for (let pos = meta.chunkStarts[2]!; pos < meta.chunkStarts[3]!; pos++) assert.deepEqual(source.cachedItem(meta, pos), itemAt(pos));
      assert.equal(source.stats().misses, before);
    });
  });
}
