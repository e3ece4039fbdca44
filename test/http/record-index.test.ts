/**
 * Issue 23: a detail's record from a per-snapshot RecordIndex (store/record-index.ts)
 * kept in the chunk cache (CachedChunkSource), on both stores. The index must
 * answer exactly what the store answers, for every id and for ids it lacks, and
 * stay inside CHUNK_CACHE_MB: evicted like a chunk, never kept when it alone is
 * larger than the budget.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CachedChunkSource } from '../../src/http/api/cached-chunk-source.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import { RecordIndex, RecordIndexBuilder, type RecordRow } from '../../src/store/record-index.js';
import type { SnapshotMeta, Store } from '../../src/store/store.js';
import { customer, CUSTOMER_COLUMNS } from '../helpers/records.js';
import { storeFactories } from '../helpers/stores.js';
import { companyWithKey } from '../helpers/test-server.js';

const hashOf = (s: string) => createHash('sha256').update(s).digest().subarray(0, 16);

test('RecordIndex finds every id, with its position and hash, and no other', () => {
  // Ids of every shape a CSV may hold: accents, astral characters, lookalikes, prefixes of each other, empty.
  const ids = ['C1', 'C10', 'C100', 'c1', 'Ñandú', '𝒳-1', '𝒳-10', '', ' C1', 'C1 ', 'a"b', 'x\\y'];
  for (let i = 0; i < 5000; i++) ids.push(`K${i.toString(36)}`);
  const rows: RecordRow[] = ids.map((idErp, pos) => ({ idErp, pos: pos * 3, hash: hashOf(idErp) }));
  const index = RecordIndex.build([...rows].reverse());
  assert.equal(index.count, ids.length);
  for (const r of rows) {
    const k = index.find(r.idErp);
    assert.ok(k >= 0, JSON.stringify(r.idErp));
    assert.equal(index.position(k), r.pos);
    assert.deepEqual(index.hash(k), r.hash);
  }
  for (const absent of ['C2', 'C1000', 'ñandú', '𝒳', '𝒳-100', 'K', 'Kzzzzz', 'C1  ']) assert.equal(index.find(absent), -1, absent);
  assert.equal(RecordIndex.build([]).find('C1'), -1);
  // Compact: well under 100 bytes a record for ids like these.
  assert.ok(index.byteLength < ids.length * 100, `${index.byteLength} bytes`);
});

test('RecordIndexBuilder, a page at a time, makes the index build makes at once, and refuses rows past its capacity', () => {
  const ids = Array.from({ length: 1000 }, (_, i) => (i % 5 === 0 ? `Ñ-${i}` : `C${i}`));
  const rows: RecordRow[] = ids.map((idErp, pos) => ({ idErp, pos, hash: hashOf(idErp) }));
  const builder = new RecordIndexBuilder(rows.length);
  for (let from = 0; from < rows.length; from += 96) assert.equal(builder.add(rows.slice(from, from + 96)), true);
  assert.equal(builder.add([]), true);
  assert.equal(builder.size, rows.length);
  assert.equal(builder.add(rows.slice(0, 1)), false, 'past the capacity');
  const paged = builder.finish();
  const whole = RecordIndex.build(rows);
  assert.equal(paged.count, whole.count);
  assert.equal(paged.byteLength, whole.byteLength);
  for (const r of rows) {
    const k = paged.find(r.idErp);
    assert.equal(paged.position(k), r.pos);
    assert.deepEqual(paged.hash(k), r.hash);
  }
  assert.equal(paged.find('C1000'), -1);
  // Fewer rows than the capacity (a snapshot swept meanwhile): what came, and nothing else.
  const short = new RecordIndexBuilder(10);
  short.add(rows.slice(0, 3));
  const three = short.finish();
  assert.equal(three.count, 3);
  assert.equal(three.find(rows[3]!.idErp), -1);
  // Kept in a cache: the hashes of a small index do not hold a slab of Node's shared pool.
  const hashes = three.hash(0);
  assert.equal(hashes.buffer.byteLength, 10 * 16);
});

for (const factory of await storeFactories()) {
  describe(`record index over a store (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let meta: SnapshotMeta;
    const ids = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `Ñ-${i}` : `C${String(i).padStart(5, '0')}`));

    before(async () => {
      ({ store, cleanup } = await factory.create());
      const { company } = await companyWithKey(store, 'rx');
      // Long observations: several chunks, so that a tiny budget holds the index or a few chunks, not both.
      const rows = ids.map((id, i) => customer(id, `Cliente ${id}`, i + 2, { obs: 'x'.repeat(2000) }));
      const staged = await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-05-01T00:00:00Z') }, rows);
      meta = (await store.snapshotMeta(staged.snapshotId))!;
      assert.ok(meta.chunkStarts.length >= 4, `${meta.chunkStarts.length} chunks`);
    });
    after(async () => cleanup?.());

    test('readRecordPage pages through every record in id_erp byte order, as findRecord has them', async () => {
      const seen: RecordRow[] = [];
      for (let after: string | null = null; ; ) {
        const page = await store.readRecordPage(meta.id, after, 64);
        seen.push(...page);
        if (page.length < 64) break;
        after = page[page.length - 1]!.idErp;
      }
      const sorted = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      assert.deepEqual(
        seen.map((r) => r.idErp),
        sorted,
      );
      for (const r of seen) {
        const found = (await store.findRecord(meta.id, r.idErp))!;
        assert.equal(r.pos, found.pos);
        assert.deepEqual(r.hash, found.hash);
      }
    });

    test('the index answers what the store answers, time included', async () => {
      const source = new CachedChunkSource(store, 64 << 20, 0);
      const index = (await source.recordIndex(meta))!;
      assert.equal(index.count, ids.length);
      for (const id of [...ids, 'C99999', 'ñ-7', '']) {
        assert.deepEqual(await source.record(meta, id), await store.findRecord(meta.id, id), id);
        assert.deepEqual(source.cachedRecord(meta, id), await store.findRecord(meta.id, id), id);
      }
    });

    test('lookups load the index by themselves once they are enough, and then read no record from the store', async () => {
      const source = new CachedChunkSource(store, 64 << 20, 16);
      for (const id of ids.slice(0, 16)) await source.record(meta, id);
      const loaded = await source.recordIndex(meta); // the load the 16th lookup started, awaited
      assert.ok(loaded);
      const calls = { findRecord: 0, cachedRecord: 0 };
      const counted = new Proxy(store, {
        get: (target, prop, receiver) => {
          if (prop === 'findRecord' || prop === 'cachedRecord') calls[prop]++;
          return Reflect.get(target, prop, receiver) as unknown;
        },
      });
      // Same cache, viewed through a counting store: a source reads its store on every miss.
      Object.assign(source, { store: counted });
      for (const id of ids) assert.equal((await source.record(meta, id))?.pos, (await store.findRecord(meta.id, id))!.pos);
      assert.equal(source.cachedRecord(meta, 'C99999'), null);
      assert.deepEqual(calls, { findRecord: 0, cachedRecord: 0 });
    });

    test('under a tiny budget the index is evicted like a chunk, and lookups stay right', async () => {
      const probe = new CachedChunkSource(store, 64 << 20, 0);
      const indexBytes = (await probe.recordIndex(meta))!.byteLength;
      const chunkBytes = (await store.readChunks(meta.id, 0, 0))[0]!.bytes.length;
      // Room for the index and one chunk, not two chunks more.
      const budget = indexBytes + chunkBytes + 1024;
      const source = new CachedChunkSource(store, budget, 0);
      await source.recordIndex(meta);
      assert.ok(source.cachedRecord(meta, ids[5]!));
      // Twice each: a full cache keeps a chunk at its second read (ClockCache.offer).
      for (let c = 0; c < meta.chunkStarts.length; c++) {
        for (let read = 0; read < 2; read++) {
          await source.chunks(meta, c, c);
          assert.ok(source.cachedBytes <= budget, `${source.cachedBytes} > ${budget}`);
        }
      }
      assert.equal(source.holdsRecordIndex(meta), false, 'the index was evicted by the chunks read after it');
      for (const id of ids) assert.deepEqual(await source.record(meta, id), await store.findRecord(meta.id, id), id);
      assert.ok(source.cachedBytes <= budget);

      // Smaller than the index alone: never kept, never read again; lookups go to the store.
      const tiny = new CachedChunkSource(store, indexBytes - 1, 0);
      for (const id of ids) assert.deepEqual(await tiny.record(meta, id), await store.findRecord(meta.id, id), id);
      assert.equal(tiny.holdsRecordIndex(meta), false);
      assert.equal(tiny.cachedBytes, 0);
    });
  });
}
