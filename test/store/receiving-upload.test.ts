/**
 * `Store.readReceivingUpload`: an upload read while it is still being
 * received (PostgreSQL, where the store `writesWhileStoring`), from which
 * `serve`'s import process prepares the import. Blobs are written here by
 * hand, in the order a test needs (createImport writes two at a time, so
 * blob k+1 may land before blob k). To know that the reader has looked and
 * found a blob missing, a test holds `imports` locked and waits until the
 * reader's look at the import's status waits for that lock: no timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { UploadGoneError, type Store } from '../../src/store/store.js';
import { postgresFactory, sqliteFactory } from '../helpers/stores.js';
import { waitUntil } from '../helpers/timing.js';

const factory = await postgresFactory();

describe('reading an upload while it is received (PostgreSQL)', { skip: factory.skip }, () => {
  let store: Store;
  let sql: pg.Client;
  let cleanup: () => Promise<void>;
  let databaseUrl: string;
  let companyId: number;

  before(async () => {
    ({ store, cleanup, databaseUrl } = await factory.create());
    sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    companyId = (await store.createCompany('receiving', 'Receiving')).id;
  });
  after(async () => {
    await sql?.end();
    await cleanup?.();
  });

  /** A new import, `receiving`, with no blob yet. */
  const receiving = async (): Promise<number> =>
    (
      await sql.query(
        `INSERT INTO imports (company_id, kind, status, filename, source, created_at) VALUES ($1, 'clientes', 'receiving', 'c.csv', 'test', $2) RETURNING id`,
        [companyId, Date.now()],
      )
    ).rows[0].id;
  const addBlob = (on: pg.Client, id: number, seq: number, text: string) =>
    on.query('INSERT INTO import_blobs (import_id, seq, bytes) VALUES ($1, $2, $3)', [id, seq, Buffer.from(text)]);
  const setStatus = (on: pg.Client, id: number, status: string) => on.query('UPDATE imports SET status = $2 WHERE id = $1', [id, status]);

  /**
   * Runs `during` once the reader, asked for its next blob (`pending`), has looked for it and is
   * waiting to read the import's status: `imports` is locked meanwhile, in a transaction that
   * `during` may write in, and that commits before the reader's look goes on. Fails when the
   * reader answers instead of looking.
   */
  async function whileReaderLooks(pending: Promise<unknown>, during: (tx: pg.Client) => Promise<unknown> = async () => {}) {
    let answered = false;
    pending.then(
      () => (answered = true),
      () => (answered = true),
    );
    const tx = new pg.Client({ connectionString: databaseUrl });
    await tx.connect();
    try {
      await tx.query('BEGIN');
      await tx.query('LOCK TABLE imports IN ACCESS EXCLUSIVE MODE');
      let looking = false;
      await waitUntil('the reader to look at the import', async () => {
        const waiting = await sql.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        looking = waiting.rows[0].n > 0;
        return looking || answered;
      });
      assert.ok(looking, 'the reader answered instead of waiting for the missing blob');
      await during(tx);
      await tx.query('COMMIT');
    } finally {
      await tx.end();
    }
  }

  const text = (r: IteratorResult<Buffer>) => (r.done ? 'done' : r.value.toString());

  /** A receiving upload with one blob, 'first', and a reader that has read it. */
  async function readPastFirst() {
    const id = await receiving();
    await addBlob(sql, id, 0, 'first');
    const reader = store.readReceivingUpload(id, new AbortController().signal)[Symbol.asyncIterator]();
    assert.equal(text(await reader.next()), 'first');
    return { id, reader };
  }

  test('blobs come in order, blob k waited for when k+1 landed first, and the read ends once the upload is queued', async () => {
    const id = await receiving();
    const reader = store.readReceivingUpload(id, new AbortController().signal)[Symbol.asyncIterator]();
    await addBlob(sql, id, 1, 'second');
    const first = reader.next();
    // It found blob 0 missing while receiving: it must wait for it, not end nor skip to blob 1.
    await whileReaderLooks(first);
    await addBlob(sql, id, 0, 'first');
    assert.equal(text(await first), 'first');
    assert.equal(text(await reader.next()), 'second');
    const third = reader.next();
    await whileReaderLooks(third);
    await addBlob(sql, id, 2, 'third');
    assert.equal(text(await third), 'third');
    const end = reader.next();
    await whileReaderLooks(end);
    await setStatus(sql, id, 'queued');
    assert.equal(text(await end), 'done');
  });

  test('the last blob committed with the end of the upload, after the reader found it missing, is still read', async () => {
    const { id, reader } = await readPastFirst();
    const last = reader.next();
    // Between the reader's look for blob 1 and its look at the status, blob 1 lands and the upload is queued.
    await whileReaderLooks(last, async (tx) => {
      await addBlob(tx, id, 1, 'last');
      await setStatus(tx, id, 'queued');
    });
    assert.equal(text(await last), 'last');
    assert.equal(text(await reader.next()), 'done');
  });

  test('an upload cut off and removed: the read throws UploadGoneError', async () => {
    const { id, reader } = await readPastFirst();
    const next = reader.next();
    const thrown = assert.rejects(next, (err: unknown) => err instanceof UploadGoneError && err.importId === id);
    await whileReaderLooks(next);
    // What createImport does when the body fails.
    await sql.query('DELETE FROM import_blobs WHERE import_id = $1', [id]);
    await sql.query('DELETE FROM imports WHERE id = $1', [id]);
    await thrown;
  });

  test('aborted while it waits: the read throws at once, even if the upload then ends', async () => {
    const id = await receiving();
    const stop = new AbortController();
    const reader = store.readReceivingUpload(id, stop.signal)[Symbol.asyncIterator]();
    const next = reader.next();
    const thrown = assert.rejects(next, { name: 'AbortError' });
    await whileReaderLooks(next);
    stop.abort();
    // Were the signal not heeded, the read would now end quietly instead.
    await setStatus(sql, id, 'queued');
    await thrown;
  });
});

describe('reading an upload while it is received (SQLite)', () => {
  test('SQLite applies an upload once stored (writesWhileStoring is false): it has no such read', async () => {
    const { store, cleanup } = await sqliteFactory.create();
    try {
      assert.equal(store.writesWhileStoring, false);
      assert.throws(() => store.readReceivingUpload(1, new AbortController().signal), /writesWhileStoring/);
    } finally {
      await cleanup();
    }
  });
});
