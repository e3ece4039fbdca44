/** Issue 22, point 4: the soak's memory verdict compares the medians of the first and last thirds. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rssVerdict } from '../../bench/rss-verdict.js';

test('a series that swings without a trend passes, whatever its first and last samples', () => {
  // Sample against sample, 300 → 400 would be +33%; the level does not move.
  const swinging = [300, 400, 310, 390, 320, 380, 305, 395, 315, 385, 310, 400];
  const v = rssVerdict(swinging);
  assert.ok(Math.abs(v.growthPct) < 10, `${v.growthPct}`);
});

test('a series that climbs fails', () => {
  const climbing = Array.from({ length: 12 }, (_, i) => 300 + i * 10);
  const v = rssVerdict(climbing);
  assert.equal(v.first, 315);
  assert.equal(v.last, 395);
  assert.ok(v.growthPct > 10);
});

test('fewer than three samples cannot be judged', () => {
  assert.throws(() => rssVerdict([1, 2]), /needs at least 3/);
});
