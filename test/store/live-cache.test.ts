/** The in-memory live pointers and record positions a serving store keeps (src/store/live-cache.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiveCache } from '../../src/store/live-cache.js';
import type { RecordRef } from '../../src/store/store.js';

const ref = (pos: number): RecordRef => ({ pos, hash: Buffer.alloc(32, pos), actualizadoAt: 1000 + pos });

test('a live pointer read before forgetLive is not remembered after it', () => {
  const cache = new LiveCache();
  cache.rememberLive(cache.currentEpoch, 1, 'clientes', 10);
  assert.equal(cache.liveSnapshotId(1, 'clientes'), 10);
  assert.equal(cache.liveSnapshotId(1, 'obras'), undefined);
  // A lookup starts, a publication is learnt of, then the lookup's (older) answer arrives.
  const epoch = cache.currentEpoch;
  cache.forgetLive();
  assert.equal(cache.liveSnapshotId(1, 'clientes'), undefined);
  cache.rememberLive(epoch, 1, 'clientes', 10);
  assert.equal(cache.liveSnapshotId(1, 'clientes'), undefined);
  cache.rememberLive(cache.currentEpoch, 1, 'clientes', 11);
  assert.equal(cache.liveSnapshotId(1, 'clientes'), 11);
  // "Never imported" is an answer too.
  cache.rememberLive(cache.currentEpoch, 2, 'clientes', null);
  assert.equal(cache.liveSnapshotId(2, 'clientes'), null);
});

test('record positions: per snapshot, the least used evicted first (CLOCK), long ids never kept', () => {
  const cache = new LiveCache(3);
  cache.rememberRecord(1, 'A', ref(0));
  cache.rememberRecord(1, 'B', ref(1));
  cache.rememberRecord(2, 'A', ref(5));
  assert.equal(cache.record(1, 'A')?.pos, 0); // used: a second chance
  cache.rememberRecord(2, 'C', ref(6)); // evicts 1:B, not used since it was kept
  assert.equal(cache.record(1, 'B'), undefined);
  assert.equal(cache.record(1, 'A')?.pos, 0);
  assert.equal(cache.record(2, 'A')?.pos, 5);
  assert.equal(cache.record(2, 'C')?.pos, 6);
  assert.equal(cache.size.records, 3);
  // Ids with the separator in them stay distinct.
  cache.rememberRecord(1, '2:A', ref(9));
  assert.equal(cache.record(1, '2:A')?.pos, 9);
  assert.equal(cache.record(2, 'A')?.pos, 5);
  cache.rememberRecord(1, 'x'.repeat(129), ref(7));
  assert.equal(cache.record(1, 'x'.repeat(129)), undefined);
  // forgetLive leaves positions alone: snapshots never change.
  cache.forgetLive();
  assert.equal(cache.record(1, '2:A')?.pos, 9);
});

test("a kind's superseded snapshot loses its positions once the new live snapshot is learnt of", () => {
  const cache = new LiveCache();
  cache.rememberLive(cache.currentEpoch, 1, 'clientes', 10);
  cache.rememberLive(cache.currentEpoch, 1, 'obras', 20);
  cache.rememberRecord(10, 'A', ref(0));
  cache.rememberRecord(10, 'B', ref(1));
  cache.rememberRecord(20, 'A', ref(2));
  cache.rememberRecord(100, 'A', ref(3)); // "10" is a prefix of "100:": it must stay
  // The same pointer learnt again (a commit elsewhere moved data_version): nothing is dropped.
  cache.forgetLive();
  cache.rememberLive(cache.currentEpoch, 1, 'clientes', 10);
  assert.equal(cache.size.records, 4);
  // A publication: the clientes of snapshot 10 go, the obras of snapshot 20 and snapshot 100 stay.
  cache.forgetLive();
  cache.rememberLive(cache.currentEpoch, 1, 'clientes', 11);
  assert.equal(cache.record(10, 'A'), undefined);
  assert.equal(cache.record(10, 'B'), undefined);
  assert.equal(cache.record(20, 'A')?.pos, 2);
  assert.equal(cache.record(100, 'A')?.pos, 3);
  assert.equal(cache.size.records, 2);
  // A stale answer (an epoch ago) drops nothing either.
  cache.rememberRecord(11, 'A', ref(4));
  const epoch = cache.currentEpoch;
  cache.forgetLive();
  cache.rememberLive(epoch, 1, 'clientes', 12);
  assert.equal(cache.record(11, 'A')?.pos, 4);
  // A kind left with no live snapshot drops its last one's too.
  cache.rememberLive(cache.currentEpoch, 1, 'clientes', null);
  assert.equal(cache.record(11, 'A'), undefined);
});
