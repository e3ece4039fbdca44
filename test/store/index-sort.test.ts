/**
 * radixOrder (index-sort.ts) is a stable ascending order of 32-bit keys,
 * whichever digit width it picks for the number of keys, and from a given
 * starting order as well (byteOrder sorts by a second key that way).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { radixOrder } from '../../src/store/index-sort.js';

/** The stable order the radix sort must give: by key, ties in the starting order. */
function stableOrder(keys: Uint32Array, start: readonly number[]): number[] {
  return start
    .map((k, rank) => ({ k, rank }))
    .sort((a, b) => keys[a.k]! - keys[b.k]! || a.rank - b.rank)
    .map((e) => e.k);
}

const key = fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 40 }), fc.constantFrom(0, 0x7ff, 0x800, 0x3fffff, 0x400000, 0xffffffff));

test('few keys (11-bit digits): a stable ascending order, from the identity or a given order', () => {
  fc.assert(
    fc.property(fc.array(key, { maxLength: 3000 }), fc.integer(), (values, seed) => {
      const keys = Uint32Array.from(values);
      const identity = values.map((_, i) => i);
      assert.deepEqual([...radixOrder(keys)], stableOrder(keys, identity));
      // A shuffled start: ties keep its order.
      const start = [...identity].sort((a, b) => ((a * 2654435761 + seed) >>> 0) % 1009 - ((b * 2654435761 + seed) >>> 0) % 1009);
      assert.deepEqual([...radixOrder(keys, Uint32Array.from(start))], stableOrder(keys, start));
    }),
    { numRuns: 200 },
  );
});

test('many keys (16-bit digits): a stable ascending order', () => {
  const n = 150_000;
  let x = 12345;
  const keys = new Uint32Array(n);
  // Half drawn from few values (ties), half from the whole range.
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    keys[i] = i % 2 === 0 ? x % 50 : x;
  }
  const identity = Array.from({ length: n }, (_, i) => i);
  assert.deepEqual([...radixOrder(keys)], stableOrder(keys, identity));
});
