/**
 * When may a worker take over another's running import? A dead process on this host at
 * once; a silent one elsewhere after 30 s; a live process on this host only after a long
 * silence, since a loaded machine can hold its heartbeat back (issue 18, point 10: two
 * instances behind HAProxy both started one upload).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { after, before, test } from 'node:test';
import { workerIsGone } from '../../src/imports/import-worker.js';

const NOW = Date.UTC(2026, 10, 27, 12);
const SECOND = 1000;
let living: ReturnType<typeof spawn>;

before(async () => {
  living = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((resolve) => living.once('spawn', resolve));
});
after(() => {
  living.kill('SIGKILL');
});

const here = (pid: number) => `${hostname()}:${pid}:0:abcdef`;

test('a live worker process on this host keeps its import through a long silent stretch', () => {
  assert.equal(workerIsGone(here(living.pid!), NOW - 60 * SECOND, NOW), false);
  assert.equal(workerIsGone(here(living.pid!), NOW - 10 * 60 * SECOND, NOW), false);
  // A silence this long is no longer a busy machine: the pid may have been reused.
  assert.equal(workerIsGone(here(living.pid!), NOW - 16 * 60 * SECOND, NOW), true);
});

test('a dead worker process on this host is gone at once, however fresh its heartbeat', async () => {
  const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => dead.once('exit', resolve));
  assert.equal(workerIsGone(here(dead.pid!), NOW, NOW), true);
});

test('a worker on another host is gone once its heartbeat is 30 s old', () => {
  const elsewhere = 'another-host.example:12345:0:abcdef';
  assert.equal(workerIsGone(elsewhere, NOW - 10 * SECOND, NOW), false);
  assert.equal(workerIsGone(elsewhere, NOW - 31 * SECOND, NOW), true);
});
