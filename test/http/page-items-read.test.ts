/**
 * Issue 23: a filtered page whose matches are scattered over chunks not in
 * memory reads those items alone (Store.readItems, one round trip) and keeps
 * them alone, instead of reading, and keeping, a 64 KiB chunk for each; a page
 * that sends a large share of a chunk still reads it whole. On both stores,
 * through CachedChunkSource: the page's bytes must be exactly the plain
 * filter of the list's, whichever way each item was had.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { KIND_SPECS } from '../../src/domain/kinds.js';
import { CachedChunkSource } from '../../src/http/api/cached-chunk-source.js';
import { renderEntries } from '../../src/http/api/subset-page.js';
import type { FieldMask } from '../../src/http/api/subset-query.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { SnapshotMeta, Store } from '../../src/store/store.js';
import { customer, CUSTOMER_COLUMNS } from '../helpers/records.js';
import { storeFactories } from '../helpers/stores.js';
import { companyWithKey } from '../helpers/test-server.js';

const FIELDS = KIND_SPECS.clientes.fields.map((f) => f.name);

for (const factory of await storeFactories()) {
  describe(`filtered pages read scattered items alone (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let meta: SnapshotMeta;
    /** Every item in list order, parsed. */
    let items: Record<string, unknown>[];
    const ids = Array.from({ length: 240 }, (_, i) => `C${String(i).padStart(4, '0')}`);

    before(async () => {
      ({ store, cleanup } = await factory.create());
      const { company } = await companyWithKey(store, 'page-items');
      // Long remarks (several chunks), accents and € at item edges.
      const rows = ids.map((id, i) => customer(id, `Cliente ñandú ${id}`, i + 2, { obs: `€ ${'x'.repeat(1200 + i)}` }));
      const staged = await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-05-01T00:00:00Z') }, rows);
      meta = (await store.snapshotMeta(staged.snapshotId))!;
      assert.ok(meta.chunkStarts.length >= 5, `${meta.chunkStarts.length} chunks`);
      const chunks = await store.readChunks(meta.id, 0, meta.chunkStarts.length - 1);
      items = JSON.parse(`[${chunks.map((c) => c.bytes.toString('utf8')).join(',')}]`) as Record<string, unknown>[];
      assert.equal(items.length, ids.length);
    });
    after(async () => cleanup?.());

    const expected = (positions: number[], mask: FieldMask | null) =>
      positions.map((p) => {
        if (mask === null) return JSON.stringify(items[p]);
        const kept = new Set([...FIELDS.filter((_, j) => mask.keep[j]), ...(mask.data ? ['data'] : []), 'actualizado_at']);
        return JSON.stringify(Object.fromEntries(Object.entries(items[p]!).filter(([k]) => kept.has(k))));
      });
    const render = async (source: CachedChunkSource, positions: number[], mask: FieldMask | null) => {
      const pieces = await renderEntries(source, meta, Uint32Array.from(positions), mask);
      return (JSON.parse(`[${Buffer.concat(pieces).toString('utf8')}]`) as unknown[]).map((i) => JSON.stringify(i));
    };

    test('one match in each chunk: the items are read alone, kept alone, and found again without the store', async () => {
      const source = new CachedChunkSource(store, 64 << 20, 0);
      const positions = Array.from(meta.chunkStarts, (start, c) => start + (c % 3));
      assert.deepEqual(await render(source, positions, null), expected(positions, null));
      const stats = source.stats();
      assert.equal(stats.misses, positions.length, 'one read item per match');
      assert.equal(stats.entries, positions.length, 'the items are kept, no chunk');
      for (let c = 0; c < meta.chunkStarts.length; c++) assert.equal(source.holdsChunk(meta, c), false, `chunk ${c} not read`);
      const itemBytes = positions.reduce((n, p) => n + Buffer.byteLength(JSON.stringify(items[p])), 0);
      assert.ok(source.cachedBytes < itemBytes + 400 * positions.length, `${source.cachedBytes} bytes kept for ${itemBytes} bytes of items`);
      // Asked for again, with `fields` and data too: from memory.
      assert.deepEqual(await render(source, positions, null), expected(positions, null));
      const mask = { keep: FIELDS.map((_, j) => j < 2), data: true };
      assert.deepEqual(await render(source, positions, mask), expected(positions, mask));
      assert.equal(source.stats().misses - stats.misses, meta.chunkStarts.length, 'only the thin chunks were read');
    });

    test('a page that sends a quarter or more of a chunk reads it whole', async () => {
      const source = new CachedChunkSource(store, 64 << 20, 0);
      const from = meta.chunkStarts[1]!;
      const size = meta.chunkStarts[2]! - from;
      const positions = Array.from({ length: Math.ceil(size / 4) }, (_, i) => from + i * 2).filter((p) => p < from + size);
      assert.ok(positions.length >= size / 4);
      assert.deepEqual(await render(source, positions, null), expected(positions, null));
      assert.equal(source.holdsChunk(meta, 1), true);
      assert.equal(source.stats().entries, 1);
    });

    test('a chunk in memory serves its matches; the others are read alone', async () => {
      const source = new CachedChunkSource(store, 64 << 20, 0);
      await source.chunks(meta, 0, 0);
      const positions = [1, meta.chunkStarts[2]! + 3];
      const before = source.stats().misses;
      assert.deepEqual(await render(source, positions, null), expected(positions, null));
      assert.equal(source.stats().misses - before, 1, 'the item of chunk 2 alone');
      assert.equal(source.holdsChunk(meta, 2), false);
    });

    test('any matches, any fields, any budget: the plain filter of the list', async () => {
      const f = FIELDS.length;
      const sources = [new CachedChunkSource(store, 64 << 20, 0), new CachedChunkSource(store, 8 << 10, 0), new CachedChunkSource(store, 0, 0)];
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.integer({ min: 0, max: ids.length - 1 }), { maxLength: 60 }),
          fc.integer({ min: 0, max: ids.length - 1 }),
          fc.integer({ min: 0, max: 40 }),
          fc.option(
            fc.record({ keep: fc.array(fc.boolean(), { minLength: f, maxLength: f }), data: fc.boolean() }).map((m) => ({ keep: m.keep.map((k, j) => k || j === 0), data: m.data })),
            { nil: null },
          ),
          fc.integer({ min: 0, max: sources.length - 1 }),
          async (picked, runStart, runLength, mask, s) => {
            const run = Array.from({ length: Math.min(runLength, ids.length - runStart) }, (_, i) => runStart + i);
            const positions = [...new Set([...picked, ...run])].sort((a, b) => a - b);
            assert.deepEqual(await render(sources[s]!, positions, mask), expected(positions, mask));
          },
        ),
        { numRuns: 80 },
      );
    });
  });
}
