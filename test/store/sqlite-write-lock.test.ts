/**
 * SQLite: the store's write transactions take the write lock when they begin
 * (BEGIN IMMEDIATE). One that began as a read and wrote later failed at once
 * with SQLITE_BUSY whenever another connection (the server's import worker
 * writing a heartbeat, say) committed in between: its snapshot was stale, and
 * no busy timeout can help that. CI met it once, as an import held by its
 * deletion guard ending in an internal error.
 *
 * Here another connection, in a thread of its own, holds the write lock with
 * a change of its own and commits it while the store's transaction waits. The
 * test checks that the store's call began before that commit (else it retries
 * with a longer hold, and fails if it never manages the interleave), so that
 * it can only pass by surviving it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { Store } from '../../src/store/store.js';
import { customersCsv } from '../helpers/csv.js';
import { sqliteFactory } from '../helpers/stores.js';
import { companyWithKey } from '../helpers/test-server.js';

/** The other connection: takes the write lock, changes a row, says so, holds it `holdMs`, commits, says when. */
const HOLDER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 10000');
db.exec('BEGIN IMMEDIATE');
db.prepare('UPDATE imports SET heartbeat_at = ? WHERE id = ?').run(Date.now(), workerData.otherId);
parentPort.postMessage({ locked: true });
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
db.exec('COMMIT');
parentPort.postMessage({ committedAt: Date.now() });
db.close();
`;

describe('SQLite write transactions survive a commit by another connection while they wait', () => {
  let store: Store;
  let file: string;
  let cleanup: () => Promise<void>;
  let companyId: number;

  before(async () => {
    const made = await sqliteFactory.create();
    ({ store, cleanup } = made);
    file = made.databaseUrl.slice('sqlite:'.length);
    companyId = (await companyWithKey(store, 'write-lock')).company.id;
  });
  after(async () => cleanup?.());

  const newImport = () =>
    store.createImport({ companyId, kind: 'clientes', filename: 'c.csv', source: 'test' }, (async function* () {
      yield customersCsv(3);
    })(), 1 << 20);

  /** Runs `write` while the other connection holds the lock and then commits; true when `write` began before that commit. */
  async function interleaved(write: () => Promise<void>, holdMs: number): Promise<boolean> {
    const other = await newImport();
    const worker = new Worker(HOLDER, {
      eval: true,
      workerData: { file, otherId: other.id, holdMs, driver: new URL(import.meta.resolve('better-sqlite3')).pathname },
    });
    const messages: { locked?: boolean; committedAt?: number }[] = [];
    const next = () =>
      new Promise<{ locked?: boolean; committedAt?: number }>((resolve, reject) => {
        const m = messages.shift();
        if (m) return resolve(m);
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    worker.on('message', () => {});
    assert.deepEqual(await next(), { locked: true });
    const began = Date.now();
    await write();
    const { committedAt } = await next();
    await worker.terminate();
    return began < committedAt!;
  }

  for (const [name, write] of [
    ['holdImport (read the status, then write the hold and its event)', async (id: number) => store.holdImport(id, 0, { held: true })],
    ['rejectImport after a hold (read the import, then write the rejection)', async (id: number) => {
      await store.holdImport(id, 0, { held: true });
      await store.rejectImport(id, { rejected: true });
    }],
  ] as const) {
    test(name, async () => {
      let exercised = false;
      for (let holdMs = 200; holdMs <= 6400 && !exercised; holdMs *= 2) {
        const job = await newImport();
        exercised = await interleaved(() => write(job.id), holdMs);
        const status = (await store.importById(job.id))?.status;
        assert.ok(status === 'awaiting_confirmation' || status === 'rejected', `status ${status}`);
      }
      assert.ok(exercised, 'the store call never began while the other connection held the lock');
    });
  }
});
