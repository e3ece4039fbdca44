/**
 * ClockMap (src/domain/clock-map.ts): entries leave by CLOCK over insertion
 * order, a hit only marks (it moves nothing), and a marked entry gets one
 * second chance.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClockMap } from '../../src/domain/clock-map.js';

function mapOf(...keys: string[]): ClockMap<string, number> {
  const map = new ClockMap<string, number>();
  keys.forEach((k, i) => map.set(k, i));
  return map;
}

test('with nothing used, entries leave in the order they came', () => {
  const map = mapOf('a', 'b', 'c');
  assert.deepEqual(map.evict(), ['a', 0]);
  assert.deepEqual(map.evict(), ['b', 1]);
  assert.deepEqual(map.evict(), ['c', 2]);
  assert.equal(map.evict(), undefined);
  assert.equal(map.size, 0);
});

test('a hit moves nothing: the order a pass takes is unchanged', () => {
  const map = mapOf('a', 'b', 'c');
  assert.equal(map.get('a'), 0);
  assert.equal(map.get('c'), 2);
  assert.equal(map.get('z'), undefined);
  assert.deepEqual([...map.keys()], ['a', 'b', 'c']);
});

test('a used entry is passed over once, goes last unmarked, and leaves on the next pass', () => {
  const map = mapOf('a', 'b', 'c');
  map.get('a');
  assert.deepEqual(map.evict(), ['b', 1]);
  assert.deepEqual([...map.keys()], ['c', 'a']);
  assert.deepEqual(map.evict(), ['c', 2]);
  assert.deepEqual(map.evict(), ['a', 0]);
});

test('when every entry was used, a pass unmarks them all and the first leaves', () => {
  const map = mapOf('a', 'b');
  map.get('a');
  map.get('b');
  assert.deepEqual(map.evict(), ['a', 0]);
  assert.deepEqual(map.evict(), ['b', 1]);
});

test('peek and has are not uses', () => {
  const map = mapOf('a', 'b');
  assert.equal(map.peek('a'), 0);
  assert.equal(map.has('a'), true);
  assert.equal(map.has('z'), false);
  assert.deepEqual(map.evict(), ['a', 0]);
});

test('set on a key held replaces its value and keeps its place and mark; a new key goes last', () => {
  const map = mapOf('a', 'b');
  map.get('a');
  map.set('a', 10);
  map.set('c', 2);
  assert.deepEqual([...map.keys()], ['a', 'b', 'c']);
  assert.deepEqual(map.evict(), ['b', 1]);
  assert.deepEqual(map.evict(), ['c', 2]);
  assert.deepEqual(map.evict(), ['a', 10]);
});

test('delete takes an entry out wherever it is', () => {
  const map = mapOf('a', 'b', 'c');
  assert.equal(map.delete('b'), true);
  assert.equal(map.delete('b'), false);
  assert.equal(map.size, 2);
  assert.deepEqual([...map.keys()], ['a', 'c']);
});
