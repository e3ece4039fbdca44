/**
 * A re-import on SQLite stages only the bodies of its new and changed records
 * (src/store/previous-records.ts, issue 23): an unchanged record's body is
 * read back from the previous snapshot's chunk when the layout needs it
 * (PostgreSQL stages them all). The snapshot must be exactly what staging
 * every body gives: a property
 * test compares every item, byte for byte and in list order, with a model
 * (unchanged items as the previous snapshot holds them, the others rendered
 * by a first import of their own), over several nights of random changes,
 * removals and additions arriving in random orders and batches. Once per store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { writeRecords, type RecordInput } from '../../src/snapshots/write-records.js';
import { DuplicateIdError, type StagedSnapshot, type Store } from '../../src/store/store.js';
import { customer, CUSTOMER_COLUMNS } from '../helpers/records.js';
import type { StoreFactory } from '../helpers/stores.js';
import { allChunks, itemsOf } from './chunk-sharing-suite.js';

const DAY = 24 * 3600 * 1000;
const FIRST = Date.parse('2026-10-01T02:00:00.000Z');

/** A customer with remarks long enough for about 100 items a chunk, at a version. */
const row = (id: string, version: number, line: number): RecordInput =>
  customer(id, `Cliente ${id} v${version}`, line, { obs: `Observaciones ${id} `.repeat(25) });

const id = (n: number) => `C${String(n).padStart(5, '0')}`;

type Order = 'sorted' | 'reversed' | 'shuffled' | 'sorted, a few swapped';

interface Night {
  changed: number[];
  removed: number[];
  added: number;
  order: Order;
  batch: number;
  seed: number;
}

const nightArb = fc.record({
  changed: fc.array(fc.nat(), { maxLength: 40 }),
  removed: fc.array(fc.nat(), { maxLength: 10 }),
  added: fc.nat({ max: 20 }),
  order: fc.constantFrom<Order>('sorted', 'reversed', 'shuffled', 'sorted, a few swapped'),
  batch: fc.integer({ min: 1, max: 400 }),
  seed: fc.nat(),
});

function arrange(ids: string[], order: Order, seed: number): string[] {
  let s = seed || 1;
  const random = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const out = [...ids].sort();
  if (order === 'reversed') out.reverse();
  // Fewer than two ids have no order to break (and swapping in an empty list would add an undefined one).
  const swaps = out.length < 2 ? 0 : order === 'shuffled' ? out.length : order === 'sorted, a few swapped' ? 3 : 0;
  for (let k = 0; k < swaps; k++) {
    const i = Math.floor(random() * out.length);
    const j = order === 'shuffled' ? Math.floor(random() * (i + 1)) : Math.floor(random() * out.length);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function batches<T>(all: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size));
  return out;
}

export function unstagedBodiesSuite(factory: StoreFactory) {
  describe(`re-imports stage what they must, and lay out exact bytes (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let slugs = 0;

    before(async () => {
      ({ store, cleanup } = await factory.create());
    });
    after(async () => cleanup?.());

    const company = async () => (await store.createCompany(`unstaged-${factory.name}-${++slugs}`, 'Unstaged')).id;
    async function load(companyId: number, input: RecordInput[][], at: number): Promise<StagedSnapshot> {
      const staged = await writeRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at }, input);
      await store.publishSnapshot(staged.snapshotId);
      return staged;
    }
    const itemsById = async (snapshotId: number) =>
      new Map(itemsOf(await allChunks(store, snapshotId)).map((b) => [(JSON.parse(b.toString('utf8')) as { id_erp: string }).id_erp, b]));

    test('every item of every night is the bytes a model expects, in its order; and the bodies each store stages', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 450 }), fc.array(nightArb, { minLength: 1, maxLength: 3 }), async (size, nights: Night[]) => {
          const companyId = await company();
          let next = size + 1;
          const version = new Map<string, number>(Array.from({ length: size }, (_, k) => [id(k + 1), 0]));
          const input = (ids: string[], batch: number) => batches(ids.map((i, k) => row(i, version.get(i)!, k + 2)), batch);
          const first = await load(companyId, input([...version.keys()], 100), FIRST);
          // The model: the list in order, each item's bytes.
          let order = [...version.keys()].sort();
          let bytes = await itemsById(first.snapshotId);
          for (const [n, night] of nights.entries()) {
            const at = FIRST + (n + 1) * DAY;
            const live = [...version.keys()];
            const touched = new Set<string>();
            // A night after one that removed every record has none to change or remove.
            for (const k of live.length > 0 ? night.changed : []) touched.add(live[k % live.length]!);
            for (const k of live.length > 0 ? night.removed : []) {
              const gone = live[k % live.length]!;
              if (version.delete(gone)) touched.delete(gone);
            }
            for (const i of touched) version.set(i, version.get(i)! + 1);
            for (let k = 0; k < night.added; k++) {
              version.set(id(next), 0);
              touched.add(id(next++));
            }
            const staged = await load(companyId, input(arrange([...version.keys()], night.order, night.seed), night.batch), at);
            // PostgreSQL stages every body (postgres-snapshot-writer.ts says why); SQLite only the new and changed ones.
            assert.equal(staged.bodiesStaged, factory.name === 'sqlite' ? touched.size : version.size, 'bodies staged');
            // Unchanged items keep their bytes and order; the others come last, in id order, as a first import renders them.
            const fresh = touched.size > 0 ? await itemsById((await load(await company(), input([...touched].sort(), 500), at)).snapshotId) : new Map<string, Buffer>();
            order = [...order.filter((i) => version.has(i) && !touched.has(i)), ...[...touched].sort()];
            bytes = new Map(order.map((i) => [i, touched.has(i) ? fresh.get(i)! : bytes.get(i)!]));
            const items = itemsOf(await allChunks(store, staged.snapshotId));
            assert.equal(items.length, order.length);
            for (const [k, item] of items.entries()) {
              assert.ok(item.equals(bytes.get(order[k]!)!), `night ${n + 1}, position ${k} (${order[k]}): ${item.toString('utf8', 0, 80)}`);
            }
          }
        }),
        { numRuns: 12 },
      );
    });

    test('a re-import repeating an unchanged record is refused with both lines, and the live snapshot stays', async () => {
      const companyId = await company();
      const ids = Array.from({ length: 300 }, (_, k) => id(k + 1));
      const first = await load(companyId, [ids.map((i, k) => row(i, 0, k + 2))], FIRST);
      // Unchanged both times: once right after itself (in id order), once far out of order.
      for (const [repeated, at] of [
        [ids[5]!, 6],
        [ids[10]!, 250],
      ] as const) {
        const again = [...ids.slice(0, at), repeated, ...ids.slice(at)];
        const input = [again.map((i, k) => row(i, 0, k + 2))];
        const err = await writeRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: FIRST + DAY }, input).then(
          () => null,
          (e: unknown) => e,
        );
        assert.ok(err instanceof DuplicateIdError, String(err));
        assert.deepEqual(err.duplicates, [{ idErp: repeated, line: at + 2, firstLine: ids.indexOf(repeated) + 2 }]);
        assert.equal(await store.liveSnapshotId(companyId, 'clientes'), first.snapshotId);
      }
    });
  });
}
