/**
 * A preparation never runs beside a gzip segment pass in the same process
 * (memory, see ImportWorker): a pass in progress stops between two batches
 * for it and is given back, and is made again once the import is done. The
 * pass's writes wait behind a lock the test holds, so the test knows the pass
 * is in progress when the upload begins: no timing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { customersCsv } from '../helpers/csv.js';
import { postgresFactory } from '../helpers/stores.js';
import { waitUntil } from '../helpers/timing.js';

async function* pieces(...parts: Promise<Buffer | null>[]): AsyncGenerator<Buffer> {
  for (const part of parts) {
    const bytes = await part;
    if (bytes) yield bytes;
  }
}

/** A value the test hands over later. */
function later<T>() {
  let give!: (value: T) => void;
  const value = new Promise<T>((resolve) => (give = resolve));
  return { value, give };
}

const factory = await postgresFactory();

describe('a preparation and a segment pass (PostgreSQL)', { skip: factory.skip }, () => {
  test('a segment pass in progress stops between two batches for a preparation, and is made again after the import', async () => {
    const { store, cleanup, databaseUrl } = await factory.create();
    const lock = new pg.Client({ connectionString: databaseUrl });
    await lock.connect();
    const segmented: number[] = [];
    const finished = new Map<number, boolean>();
    const worker = new ImportWorker(store, {
      snapshotRetentionMs: 60_000,
      pollMs: 20,
      makeSegments: true,
      prepareUploads: true,
      events: { segmented: (id) => segmented.push(id), finished: (job, _report, prepared) => finished.set(job.id, prepared) },
    });
    try {
      // A live snapshot of several batches of segments (64 chunks each), published without them.
      const served = await store.createCompany('served', 'Served');
      const first = await store.createImport({ companyId: served.id, kind: 'clientes', filename: 'c.csv', source: 'test' }, pieces(Promise.resolve(customersCsv(40_000))), 1 << 30);
      assert.equal((await new ImportWorker(store, { snapshotRetentionMs: 60_000 }).runOnce())?.job.id, first.id);
      const live = (await store.liveSnapshotId(served.id, 'clientes'))!;
      assert.ok((await store.chunksWithoutSegments(live)).length > 2 * 64);

      await lock.query('BEGIN');
      await lock.query('LOCK TABLE chunk_segments IN ACCESS EXCLUSIVE MODE');
      worker.start();
      await waitUntil('the segment pass to write its first batch', async () => {
        const waiting = await lock.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        return waiting.rows[0].n > 0;
      });

      // Another company's upload begins while the pass is in progress.
      const other = await store.createCompany('uploading', 'Uploading');
      const file = customersCsv(40_000);
      const rest = later<Buffer | null>();
      let named = false;
      const storing = store.createImport(
        { companyId: other.id, kind: 'clientes', filename: 'c.csv', source: 'token:test' },
        pieces(Promise.resolve(file.subarray(0, 1.25 * 1024 * 1024)), rest.value),
        1 << 30,
        (id) => {
          worker.prepare(id, null);
          named = true;
        },
      );
      await waitUntil('the worker to be asked to prepare the import', () => named);
      assert.equal(worker.preparationState(), null, 'not begun beside the pass');

      await lock.query('COMMIT');
      await waitUntil('the preparation to read the first blob', () => (worker.preparationState()?.bytesRead ?? 0) > 0);
      const pass = await lock.query('SELECT segments_claimed_at, segments_done_at FROM snapshots WHERE id = $1', [live]);
      assert.deepEqual(pass.rows[0], { segments_claimed_at: null, segments_done_at: null }, 'the pass was stopped and given back');
      assert.equal(segmented.length, 0, 'no pass completed');
      assert.ok((await store.chunksWithoutSegments(live)).length > 0, 'stopped midway');

      rest.give(file.subarray(1.25 * 1024 * 1024));
      const job = await storing;
      worker.wake();
      await waitUntil('the import to end', () => finished.has(job.id));
      assert.equal(finished.get(job.id), true, 'concluded from the preparation');
      await waitUntil('the pass to be made again', () => segmented.includes(live));
      assert.deepEqual(await store.chunksWithoutSegments(live), []);
    } finally {
      await lock.query('ROLLBACK').catch(() => {});
      await lock.end();
      await worker.stop();
      await cleanup();
    }
  });
});
