/**
 * While the chunk cache fills, a serving process lets V8's old generation
 * grow four times its live size (src/http/cache-fill-growth.ts): the rule,
 * when it is off, and that V8 takes the flag in a running process. That a real
 * `mirador serve` starts the watch is in heap-growth.test.ts; what it does
 * to a cold start is measured by the api bench (docs/performance.md).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { CacheFillGrowth, FILL_GROWTH_PERCENT, FILL_STEP_BYTES, watchCacheFill } from '../../src/http/cache-fill-growth.js';

const MiB = 1024 * 1024;
const budgetBytes = 400 * MiB;
const heapUsedBytes = 25 * MiB;

function rule() {
  const sets: number[] = [];
  const growth = new CacheFillGrowth((percent) => sets.push(percent));
  return { growth, sets, look: (bytes: number, heap = heapUsedBytes) => growth.look({ bytes, budgetBytes, heapUsedBytes: heap }) };
}

describe('old-generation growth while the chunk cache fills', () => {
  test('the first look only notes where the cache is', () => {
    const { growth, sets, look } = rule();
    look(100 * MiB);
    assert.deepEqual(sets, []);
    assert.equal(growth.active, false);
  });

  test('growing by a step or more between two looks sets the growth once; a look without growth gives V8 its rule back', () => {
    const { growth, sets, look } = rule();
    look(0);
    look(FILL_STEP_BYTES);
    assert.deepEqual(sets, [FILL_GROWTH_PERCENT]);
    assert.equal(growth.active, true);
    look(FILL_STEP_BYTES * 3);
    look(FILL_STEP_BYTES * 10);
    assert.deepEqual(sets, [FILL_GROWTH_PERCENT], 'set once while it fills');
    look(FILL_STEP_BYTES * 10 + 1);
    assert.deepEqual(sets, [FILL_GROWTH_PERCENT, 0]);
    assert.equal(growth.active, false);
  });

  test('growth under a step, or a cache that shrank, is not filling', () => {
    const { sets, look } = rule();
    look(10 * MiB);
    look(10 * MiB + FILL_STEP_BYTES - 1);
    look(5 * MiB);
    assert.deepEqual(sets, []);
  });

  test('not while the cache has less room left than the headroom it would give (three times the heap in use)', () => {
    const { sets, look } = rule();
    const headroom = (heapUsedBytes * FILL_GROWTH_PERCENT) / 100;
    look(budgetBytes - headroom - 2 * FILL_STEP_BYTES - 1);
    look(budgetBytes - headroom - FILL_STEP_BYTES - 1);
    assert.deepEqual(sets, [FILL_GROWTH_PERCENT], 'room for the headroom: filling');
    look(budgetBytes - headroom + FILL_STEP_BYTES);
    assert.deepEqual(sets, [FILL_GROWTH_PERCENT, 0], 'still growing, but short of room: V8 its rule back');
    const larger = rule();
    larger.look(0);
    larger.look(FILL_STEP_BYTES, budgetBytes);
    assert.deepEqual(larger.sets, [], 'a heap as large as the budget never gets the growth');
  });

  test('reset gives V8 its rule back only when it was changed', () => {
    const { growth, sets, look } = rule();
    growth.reset();
    assert.deepEqual(sets, []);
    look(0);
    look(FILL_STEP_BYTES);
    growth.reset();
    assert.deepEqual(sets, [FILL_GROWTH_PERCENT, 0]);
    assert.equal(growth.active, false);
  });

  test("off with a small budget (heap-growth.ts holds that one) and when node's command line sets the growth", () => {
    const cache = () => ({ bytes: 0, budgetBytes: 24 * MiB });
    assert.equal(watchCacheFill(cache, 32 * MiB, []), null);
    assert.equal(watchCacheFill(cache, 512 * MiB, ['--heap-growing-percent=0']), null);
    assert.equal(watchCacheFill(cache, 512 * MiB, ['--heap_growing_percent', '50']), null);
    const watch = watchCacheFill(cache, 512 * MiB, ['--max-semi-space-size=4']);
    assert.ok(watch);
    watch.stop();
    assert.equal(watch.growth.active, false);
  });

  test('V8 takes a growth set in a running process at its next full collection, and 0 gives it its own rule back', () => {
    // The calls the watch makes, in a process of its own; --trace-gc-verbose prints the factor each full collection's limit took.
    const script = `
      const v8 = require('node:v8');
      globalThis.gc();
      v8.setFlagsFromString('--heap-growing-percent=50');
      console.log('FIFTY');
      globalThis.gc();
      v8.setFlagsFromString('--heap-growing-percent=${FILL_GROWTH_PERCENT}');
      console.log('FILL');
      globalThis.gc();
      v8.setFlagsFromString('--heap-growing-percent=0');
      console.log('ZERO');
      globalThis.gc();`;
    const run = spawnSync(process.execPath, ['--expose-gc', '--trace-gc-verbose', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const factors = (part: string) => [...part.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)$/gm)].map((m) => Number(m[1]));
    const [, fifty, fill, zero] = run.stdout.split(/^(?:FIFTY|FILL|ZERO)$/m);
    assert.deepEqual(factors(fifty!), [1.5], run.stdout.slice(0, 3000));
    assert.deepEqual(factors(fill!), [1 + FILL_GROWTH_PERCENT / 100]);
    assert.equal(factors(zero!).length, 1);
    assert.notEqual(factors(zero!)[0], 1.5, "V8's own rule, no longer the 50% set before");
  });
});
