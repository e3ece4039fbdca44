import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WakeableSleep } from '../../src/domain/wakeable-sleep.js';

// An hour: any of these tests that waited for the timer instead of the wake-up would time out.
const LONG = 3_600_000;

test('wake() cuts a sleep short', async () => {
  const pause = new WakeableSleep();
  const slept = pause.sleep(LONG);
  pause.wake();
  await slept;
});

test('a wake-up that came while the loop was busy makes the next sleep return at once, once', async () => {
  const pause = new WakeableSleep();
  pause.wake();
  await pause.sleep(LONG);
  // The wake-up was used up: the next sleep waits again until woken.
  let done = false;
  const slept = pause.sleep(LONG).then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(done, false);
  pause.wake();
  await slept;
  assert.equal(done, true);
});

test('a sleep ends by itself after its time', async () => {
  await new WakeableSleep().sleep(1);
});
