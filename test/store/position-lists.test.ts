/**
 * The position-list algebra filters are answered with (store/snapshot-index.ts):
 * the union of a repeated filter's values and the intersection of several
 * filters, against a plain set computation, over random ascending lists.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { intersectAll, unionDisjoint } from '../../src/store/snapshot-index.js';

const ascending = (xs: Iterable<number>) => Uint32Array.from([...new Set(xs)].sort((a, b) => a - b));

test('unionDisjoint: any number of disjoint ascending lists, empty ones included, is their sorted union', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 400 }),
      fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 400 }),
      fc.integer({ min: 1, max: 7 }),
      (values, owners, k) => {
        // Each value goes to one of k lists (a value no list takes is dropped): disjoint by construction.
        const lists = Array.from({ length: k }, (_, i) => ascending(values.filter((_, j) => (owners[j] ?? 0) % k === i)));
        const union = unionDisjoint(lists);
        assert.deepEqual([...union], [...ascending(lists.flatMap((l) => [...l]))]);
      },
    ),
    { numRuns: 300 },
  );
});

test('unionDisjoint of nothing, or of empty lists, is empty; of one list, that list', () => {
  assert.equal(unionDisjoint([]).length, 0);
  assert.equal(unionDisjoint([new Uint32Array(0), new Uint32Array(0)]).length, 0);
  const one = Uint32Array.of(3, 9, 27);
  assert.deepEqual([...unionDisjoint([new Uint32Array(0), one, new Uint32Array(0)])], [3, 9, 27]);
});

test('intersectAll: ascending lists of any sizes intersect as sets do', () => {
  fc.assert(
    fc.property(fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { maxLength: 200 }), { minLength: 1, maxLength: 4 }), (raw) => {
      const lists = raw.map(ascending);
      const expected = [...lists[0]!].filter((x) => lists.every((l) => l.includes(x)));
      assert.deepEqual([...intersectAll(lists)], expected);
    }),
    { numRuns: 300 },
  );
});
