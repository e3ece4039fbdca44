/**
 * Issue 17: a filter's whole-item pages are slices of its matches gathered
 * into blocks of GATHER_ITEMS, kept in the chunk cache, from the second ask
 * of a block on (gathered-page.ts). On both stores, through
 * CachedChunkSource: every page, at any offset and size, whatever the budget,
 * asked for the first, second or third time, must be exactly the plain
 * filter of the list; a filter asked for once must keep no block; a page
 * asked for again must read nothing and copy nothing; a filter's text counts
 * in the budget; and blocks of two filters, or of two snapshots, must never
 * be taken for each other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { CachedChunkSource } from '../../src/http/api/cached-chunk-source.js';
import { GATHER_ITEMS, gatheredItems } from '../../src/http/api/gathered-page.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { SnapshotMeta, Store } from '../../src/store/store.js';
import { customer, CUSTOMER_COLUMNS } from '../helpers/records.js';
import { storeFactories } from '../helpers/stores.js';
import { companyWithKey } from '../helpers/test-server.js';

for (const factory of await storeFactories()) {
  describe(`filtered pages from gathered blocks (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let meta: SnapshotMeta;
    let company: { id: number };
    /** Every item in list order, as its bytes. */
    let items: string[];
    const ids = Array.from({ length: 400 }, (_, i) => `C${String(i).padStart(4, '0')}`);
    const at = Date.parse('2026-05-01T00:00:00Z');

    const load = async (suffix: string) => {
      // Items of different lengths (several chunks), accents and € at their edges.
      const rows = ids.map((id, i) => customer(id, `Cliente ñandú ${id}${suffix}`, i + 2, { obs: `€ ${'x'.repeat(300 + ((i * 37) % 500))}` }));
      const staged = await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at }, rows);
      const m = (await store.snapshotMeta(staged.snapshotId))!;
      const chunks = await store.readChunks(m.id, 0, m.chunkStarts.length - 1);
      const list = (JSON.parse(`[${chunks.map((c) => c.bytes.toString('utf8')).join(',')}]`) as unknown[]).map((i) => JSON.stringify(i));
      return { meta: m, items: list };
    };

    before(async () => {
      ({ store, cleanup } = await factory.create());
      ({ company } = await companyWithKey(store, 'gathered'));
      ({ meta, items } = await load(''));
      assert.ok(meta.chunkStarts.length >= 4, `${meta.chunkStarts.length} chunks`);
      assert.equal(items.length, ids.length);
    });
    after(async () => cleanup?.());

    const page = async (source: CachedChunkSource, m: SnapshotMeta, key: string, matched: Uint32Array, a: number, b: number) =>
      (JSON.parse(`[${Buffer.concat(await gatheredItems(source, source.blocks, m, key, matched, a, b)).toString('utf8')}]`) as unknown[]).map((i) => JSON.stringify(i));
    const expected = (list: string[], matched: Uint32Array, a: number, b: number) => Array.from(matched.subarray(a, b), (p) => list[p]!);

    test('any matches, any page, any budget: the plain filter of the list', async () => {
      const sources = [new CachedChunkSource(store, 64 << 20, 0), new CachedChunkSource(store, 96 << 10, 0), new CachedChunkSource(store, 0, 0)];
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.integer({ min: 0, max: ids.length - 1 }), { minLength: 1, maxLength: ids.length }),
          fc.integer({ min: 0, max: 3 }),
          fc.nat(),
          fc.integer({ min: 1, max: 250 }),
          fc.integer({ min: 0, max: sources.length - 1 }),
          async (picked, filterNo, from, limit, s) => {
            const matched = Uint32Array.from(picked.sort((x, y) => x - y));
            const a = from % matched.length;
            const b = Math.min(a + limit, matched.length);
            // Each filter number is one set of matches for this run: keys must not carry blocks across runs.
            const key = `run${picked.join('.')}:${filterNo}`;
            // Copied, then gathered, then from whatever blocks the budget kept.
            for (let ask = 0; ask < 3; ask++) assert.deepEqual(await page(sources[s]!, meta, key, matched, a, b), expected(items, matched, a, b));
          },
        ),
        { numRuns: 60 },
      );
    });

    test('a filter asked for once keeps no block; asked again, its blocks are gathered, then sent as views', async () => {
      const source = new CachedChunkSource(store, 64 << 20, 0);
      // One match in every fifth position: spread over every chunk, too few per chunk to read it whole.
      const matched = Uint32Array.from(ids.keys()).filter((p) => p % 5 === 1);
      const [a, b] = [10, matched.length];
      const blocks = Math.floor((b - 1) / GATHER_ITEMS) + 1;
      assert.equal(blocks, 2, 'the page spans two blocks');
      const want = expected(items, matched, a, b);
      assert.deepEqual(await page(source, meta, 'every-fifth', matched, a, b), want);
      const once = source.stats();
      let held = 0;
      for (let c = 0; c < meta.chunkStarts.length; c++) if (source.holdsChunk(meta, c)) held++;
      assert.equal(held, 0, 'the matches were read alone');
      assert.equal(once.entries, b - a, 'the items sent, kept alone, and no block');
      // Asked again: the blocks are gathered, from the items kept alone (and the store for those of the
      // blocks that the page did not send).
      assert.deepEqual(await page(source, meta, 'every-fifth', matched, a, b), want);
      const twice = source.stats();
      assert.equal(twice.misses - once.misses, a, 'only the block items the first page did not send were read');
      assert.equal(twice.entries, matched.length + blocks, 'and the blocks kept');
      // A third time: views of the two blocks, nothing read.
      const pieces = await gatheredItems(source, source.blocks, meta, 'every-fifth', matched, a, b);
      assert.equal(source.stats().misses, twice.misses, 'nothing read again');
      assert.equal(pieces.length, 2 * blocks - 1, 'one view a block, with a comma between them');
      assert.deepEqual((JSON.parse(`[${Buffer.concat(pieces).toString('utf8')}]`) as unknown[]).map((i) => JSON.stringify(i)), want);
    });

    test("a filter's text counts in the budget with its blocks: a client's long filters cannot hold more than it", async () => {
      const budget = 64 << 10;
      const source = new CachedChunkSource(store, budget, 0);
      const matched = Uint32Array.of(7);
      const itemBytes = Buffer.byteLength(items[7]!);
      // A key longer than the budget: its block is gathered and sent, not kept.
      const long = `q:${'ñ'.repeat(budget / 2)}`;
      for (let ask = 0; ask < 3; ask++) assert.deepEqual(await page(source, meta, long, matched, 0, 1), [items[7]]);
      assert.equal(source.blocks.held(meta, long, 0), undefined);
      assert.ok(source.cachedBytes <= budget, `${source.cachedBytes} bytes held`);
      // A shorter one is kept, and counted with its key.
      const short = `q:${'x'.repeat(4000)}`;
      const before = source.cachedBytes;
      for (let ask = 0; ask < 2; ask++) assert.deepEqual(await page(source, meta, short, matched, 0, 1), [items[7]]);
      assert.ok(source.blocks.held(meta, short, 0), 'kept');
      assert.ok(source.cachedBytes - before >= itemBytes + 2 * short.length, `${source.cachedBytes - before} bytes for a ${itemBytes}-byte block`);
      assert.ok(source.cachedBytes <= budget, `${source.cachedBytes} bytes held`);
    });

    test("two filters' blocks, and two snapshots' blocks, are never taken for each other", async () => {
      const source = new CachedChunkSource(store, 64 << 20, 0);
      const evens = Uint32Array.from(ids.keys()).filter((p) => p % 2 === 0);
      const odds = Uint32Array.from(ids.keys()).filter((p) => p % 2 === 1);
      const thrice = async (m: SnapshotMeta, key: string, matched: Uint32Array, list: string[]) => {
        for (let ask = 0; ask < 3; ask++) assert.deepEqual(await page(source, m, key, matched, 0, 100), expected(list, matched, 0, 100));
      };
      await thrice(meta, 'evens', evens, items);
      await thrice(meta, 'odds', odds, items);
      // The same filter key on the next snapshot (every item changed): its own blocks.
      const next = await load(' (2)');
      assert.notEqual(next.meta.id, meta.id);
      await thrice(next.meta, 'evens', evens, next.items);
      await thrice(meta, 'evens', evens, items);
    });
  });
}
