/**
 * `serve`'s import worker prepares an import while its upload is still being
 * stored (imports/upload-preparation.ts), on PostgreSQL: it reads the blobs as
 * they land, concludes the import from the preparation once it claims it, and
 * serves exactly what the same file imported the ordinary way serves; a cut-off
 * upload, another import claimed meanwhile and a broken file all end as they
 * would without it, with nothing staged left behind. The uploads' bodies are
 * fed by the test, piece by piece, so the test decides when each one arrives.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { UploadPreparation } from '../../src/imports/upload-preparation.js';
import type { ImportReport } from '../../src/imports/import-report.js';
import type { Store } from '../../src/store/store.js';
import { customersCsv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { sqlCounter, type SqlCounter } from '../helpers/sql-count.js';
import { postgresFactory, sqliteFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';
import { signedIn } from '../helpers/panel.js';
import { waitUntil } from '../helpers/timing.js';

/** An upload's body that the test hands over piece by piece, as a slow client sends it. */
class SlowBody implements AsyncIterable<Buffer> {
  private readonly pieces: (Buffer | Error | null)[] = [];
  private wake: (() => void) | null = null;

  send(piece: Buffer) {
    this.push(piece);
  }
  end() {
    this.push(null);
  }
  cutOff(err: Error) {
    this.push(err);
  }
  private push(p: Buffer | Error | null) {
    this.pieces.push(p);
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    for (;;) {
      while (this.pieces.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
      const piece = this.pieces.shift()!;
      if (piece === null) return;
      if (piece instanceof Error) throw piece;
      yield piece;
    }
  }
}

async function* whole(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}

/** More than one blob (1 MiB) of the store: the first piece lands as a blob while the rest is held back. */
const FIRST_PIECE = 1.25 * 1024 * 1024;
const ROWS = 40_000;
const MAX_BYTES = 1 << 30;

/** A report without what differs between two imports of the same file (their ids and durations). */
const comparable = (r: ImportReport) => ({ ...r, import_id: 0, duration_ms: 0 });

const factory = await postgresFactory();

describe('imports prepared while the server stores their upload (PostgreSQL)', { skip: factory.skip }, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let counter: SqlCounter;

  before(async () => {
    let databaseUrl: string;
    ({ store, cleanup, databaseUrl } = await factory.create());
    counter = sqlCounter(databaseUrl);
  });
  after(async () => {
    await counter?.close();
    await cleanup?.();
  });

  /** Snapshots of a company written but neither live nor superseded: what a preparation could leave behind. */
  const unpublished = (companyId: number) =>
    counter.count(`SELECT count(*) AS n FROM snapshots WHERE company_id = $1 AND state IN ('staging', 'staged')`, [companyId]);

  /** A worker as `serve`'s import process runs it, its loop started, and what it reports. */
  function startWorker() {
    const finished = new Map<number, { report: ImportReport; prepared: boolean }>();
    const errors: unknown[] = [];
    const worker = new ImportWorker(store, {
      snapshotRetentionMs: 60_000,
      pollMs: 20,
      prepareUploads: true,
      events: {
        finished: (job, report, prepared) => finished.set(job.id, { report, prepared }),
        error: (err) => errors.push(err),
      },
    });
    worker.start();
    return {
      worker,
      errors,
      async ended(importId: number) {
        // The HTTP process wakes the worker once an upload is queued.
        worker.wake();
        await waitUntil(`import ${importId} to end`, () => finished.has(importId));
        return finished.get(importId)!;
      },
    };
  }

  /** Runs `body` with a worker and an API server of its own, then checks the worker reported no error and stops both. */
  async function withWorkerAndServer(body: (w: ReturnType<typeof startWorker>, server: TestServer) => Promise<void>) {
    const w = startWorker();
    const server = await startServer(store);
    try {
      await body(w, server);
      assert.deepEqual(w.errors, []);
    } finally {
      await w.worker.stop();
      await server.close();
    }
  }

  /**
   * Starts storing `file` for `companyId` as an upload through the server does, naming the new
   * import to the worker at once; sends its first piece and waits until the worker's preparation
   * has parsed it while the rest is still held back.
   */
  async function uploadSlowly(w: ReturnType<typeof startWorker>, companyId: number, file: Buffer) {
    const body = new SlowBody();
    let importId = 0;
    const storing = store.createImport({ companyId, kind: 'clientes', filename: 'clientes.csv', source: 'token:test' }, body, MAX_BYTES, (id) => {
      importId = id;
      w.worker.prepare(id, null);
    });
    storing.catch(() => {});
    body.send(file.subarray(0, FIRST_PIECE));
    await waitUntil('the preparation to read the first blob', () => (w.worker.preparationState()?.bytesRead ?? 0) > 0);
    assert.equal(w.worker.preparationState()?.importId, importId);
    assert.equal((await store.importById(importId))?.status, 'receiving', 'read while the upload is still being received');
    return { importId, body, storing, rest: () => (body.send(file.subarray(FIRST_PIECE)), body.end(), storing) };
  }

  /** Everything the list serves for a key, each item without `actualizado_at` (each import's own time). */
  async function served(server: TestServer, key: string): Promise<{ total: number; items: string }> {
    const items: unknown[] = [];
    let total = 0;
    for (let offset = 0; offset === 0 || offset < total; offset += 1000) {
      const res = await request(`${server.baseUrl}/v1/clientes?limit=1000&offset=${offset}`, { headers: bearer(key) });
      assert.equal(res.status, 200, res.text());
      total = res.json().total;
      items.push(...res.json().items.map((item: Record<string, unknown>) => ({ ...item, actualizado_at: undefined })));
    }
    return { total, items: JSON.stringify(items) };
  }

  test('prepared from the blobs as they land, concluded when claimed, and serving what an ordinary import serves', async () => {
    await withWorkerAndServer(async (w, server) => {
      const prepared = await companyWithKey(store, 'prep-same');
      const ordinary = await companyWithKey(store, 'prep-ordinary');
      // A first import (records written as they arrive), then a re-import changing 1% (staged and compared).
      const versions = [customersCsv(ROWS), customersCsv(ROWS, (i) => (i % 100 === 0 ? `Cambiado ${i}` : `Cliente ${i}`))];
      for (const file of versions) {
        const upload = await uploadSlowly(w, prepared.company.id, file);
        const job = await upload.rest();
        const viaPreparation = await w.ended(job.id);
        assert.equal(viaPreparation.prepared, true, 'concluded from the preparation');
        assert.equal(viaPreparation.report.status, 'succeeded');

        const plain = await store.createImport({ companyId: ordinary.company.id, kind: 'clientes', filename: 'clientes.csv', source: 'token:test' }, whole(file), MAX_BYTES);
        const applied = await w.ended(plain.id);
        assert.equal(applied.prepared, false);
        assert.deepEqual(comparable(viaPreparation.report), comparable(applied.report));
        assert.equal(viaPreparation.report.bytes, file.length, 'the stored size, unknown when the preparation began');

        const [a, b] = [await served(server, prepared.key), await served(server, ordinary.key)];
        assert.equal(a.total, ROWS);
        assert.equal(a.items, b.items);
        assert.equal(await unpublished(prepared.company.id), 0);
      }
    });
  });

  test('an upload cut off mid-way: the preparation ends, nothing is left staged, and the previous data still serves', async () => {
    await withWorkerAndServer(async (w, server) => {
      const { company, key } = await companyWithKey(store, 'prep-cut');
      const first = await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'v1.csv', source: 'test' }, whole(customersCsv(500)), MAX_BYTES);
      assert.equal((await w.ended(first.id)).report.status, 'succeeded');
      const before = await served(server, key);

      const upload = await uploadSlowly(w, company.id, customersCsv(ROWS, (i) => `Nuevo ${i}`));
      upload.body.cutOff(new Error('the client went away'));
      await assert.rejects(upload.storing, /went away/);
      await waitUntil('the preparation to be given up', () => w.worker.preparationState() === null);
      assert.equal(await store.importById(upload.importId), null);
      assert.equal(await unpublished(company.id), 0);
      assert.deepEqual(await served(server, key), before);
    });
  });

  test('another import claimed while one is prepared: the preparation is given up first, and both imports end right', async () => {
    await withWorkerAndServer(async (w, server) => {
      const slow = await companyWithKey(store, 'prep-slow');
      const other = await companyWithKey(store, 'prep-other');
      const slowFile = customersCsv(ROWS, (i) => `Lento ${i}`);
      const upload = await uploadSlowly(w, slow.company.id, slowFile);

      const queued = await store.createImport({ companyId: other.company.id, kind: 'clientes', filename: 'c.csv', source: 'test' }, whole(customersCsv(700)), MAX_BYTES);
      // Applied while the slow upload is still held back: the preparation did not wait for it.
      const applied = await w.ended(queued.id);
      assert.deepEqual([applied.report.status, applied.report.inserted, applied.prepared], ['succeeded', 700, false]);
      assert.equal((await store.importById(upload.importId))?.status, 'receiving');
      assert.equal(w.worker.preparationState(), null, 'given up before the other import was applied');
      assert.equal(await unpublished(slow.company.id), 0);

      const job = await upload.rest();
      const later = await w.ended(job.id);
      assert.deepEqual([later.report.status, later.report.inserted, later.prepared], ['succeeded', ROWS, false]);
      assert.equal((await served(server, slow.key)).total, ROWS);
      assert.equal((await served(server, other.key)).total, 700);
      assert.equal(await unpublished(slow.company.id), 0);
    });
  });

  test('a broken file: the import fails with the same error as without preparation', async () => {
    const w = startWorker();
    try {
      const prepared = await companyWithKey(store, 'prep-broken');
      const ordinary = await companyWithKey(store, 'prep-broken-plain');
      // An unclosed quote in the last row, past the first blob the preparation reads while receiving.
      const file = Buffer.concat([customersCsv(ROWS), Buffer.from('C9999999;"sin cerrar\r\n')]);
      const upload = await uploadSlowly(w, prepared.company.id, file);
      const job = await upload.rest();
      const viaPreparation = await w.ended(job.id);
      const plain = await store.createImport({ companyId: ordinary.company.id, kind: 'clientes', filename: 'clientes.csv', source: 'token:test' }, whole(file), MAX_BYTES);
      const applied = await w.ended(plain.id);
      assert.equal(applied.report.status, 'failed');
      assert.equal(applied.report.error?.code, 'bad_quote');
      assert.deepEqual(comparable(viaPreparation.report), comparable(applied.report));
      assert.equal(viaPreparation.prepared, false);
      assert.equal(await unpublished(prepared.company.id), 0);
      assert.deepEqual(w.errors, []);
    } finally {
      await w.worker.stop();
    }
  });

  test("an upload through the panel's form is prepared too", async () => {
    const prepared = new Map<number, boolean>();
    // Turning only when woken, as by the server: prepare when the upload begins, claim once it is queued.
    const worker = new ImportWorker(store, {
      snapshotRetentionMs: 60_000,
      pollMs: 60_000,
      prepareUploads: true,
      events: { finished: (job, _report, wasPrepared) => prepared.set(job.id, wasPrepared) },
    });
    worker.start();
    const server = await startServer(store, {}, {
      onImportQueued: () => worker.wake(),
      onImportReceiving: (importId, declaredBytes) => worker.prepare(importId, declaredBytes),
    });
    try {
      const { client } = await signedIn(server, store, 'prep-form');
      const res = await client.upload('clientes', customersCsv(ROWS));
      assert.equal(res.status, 201, res.text);
      const id = res.json().import_id as number;
      await waitUntil('the import to end', () => prepared.has(id));
      assert.equal(prepared.get(id), true);
      assert.equal((await store.importById(id))?.status, 'succeeded');
    } finally {
      await worker.stop();
      await server.close();
    }
  });

  test('a worker stopped while it prepares: nothing is left staged, and the upload is applied later as any other', async () => {
    const w = startWorker();
    const { company } = await companyWithKey(store, 'prep-stop');
    const upload = await uploadSlowly(w, company.id, customersCsv(ROWS));
    await w.worker.stop();
    assert.equal(w.worker.preparationState(), null);
    const job = await upload.rest();
    assert.equal(await unpublished(company.id), 0);
    const next = startWorker();
    try {
      const applied = await next.ended(job.id);
      assert.deepEqual([applied.report.status, applied.prepared], ['succeeded', false]);
    } finally {
      await next.worker.stop();
    }
  });

  test('a preparation waiting for its upload is stalled after the wait limit, or the whole limit, and never once it has ended', async () => {
    const { company } = await companyWithKey(store, 'prep-stall');
    const file = customersCsv(ROWS);
    const body = new SlowBody();
    let importId = 0;
    const storing = store.createImport({ companyId: company.id, kind: 'clientes', filename: 'clientes.csv', source: 'token:test' }, body, MAX_BYTES, (id) => (importId = id));
    body.send(file.subarray(0, FIRST_PIECE));
    await waitUntil('the import row', () => importId > 0);
    const HOUR = 3_600_000;
    // One whose wait for a blob may last an hour but whose whole may not last at all; one the reverse.
    const whole = new UploadPreparation(store, importId, null, {}, { stallMs: HOUR, maxMs: 0 });
    const waits = new UploadPreparation(store, importId, null, {}, { stallMs: 0, maxMs: HOUR });
    try {
      await waitUntil('both to read the first blob and wait for the next', () => whole.bytesRead > 0 && waits.bytesRead > 0 && whole.stalled() && waits.stalled());
      const now = Date.now();
      assert.equal(whole.stalled(now + HOUR / 2), true, 'past the whole limit');
      assert.equal(waits.stalled(now + HOUR / 2), true, 'past the wait limit');
      const patient = new UploadPreparation(store, importId, null, {}, { stallMs: HOUR, maxMs: HOUR });
      await waitUntil('the third to wait', () => patient.bytesRead > 0);
      assert.equal(patient.stalled(Date.now() + HOUR / 2), false, 'within both limits');
      patient.abort();
      await patient.outcome();
      assert.equal(patient.stalled(Date.now() + 2 * HOUR), false, 'ended: never stalled');
    } finally {
      body.send(file.subarray(FIRST_PIECE));
      body.end();
      await storing;
      await whole.giveUp();
      await waits.giveUp();
    }
    assert.equal(await unpublished(company.id), 0);
  });
});

describe('imports prepared while the server stores their upload (SQLite)', () => {
  test('SQLite stores first: the worker prepares nothing and applies the stored upload', async () => {
    const { store, cleanup } = await sqliteFactory.create();
    const preparing: number[] = [];
    const finished = new Map<number, boolean>();
    const worker = new ImportWorker(store, {
      snapshotRetentionMs: 60_000,
      pollMs: 20,
      prepareUploads: true,
      events: { preparing: (id) => preparing.push(id), finished: (job, _report, prepared) => finished.set(job.id, prepared) },
    });
    worker.start();
    try {
      const { id } = await store.createCompany('lite', 'Lite');
      const job = await store.createImport({ companyId: id, kind: 'clientes', filename: 'c.csv', source: 'test' }, whole(customersCsv(50)), MAX_BYTES, (importId) =>
        worker.prepare(importId, null),
      );
      worker.wake();
      await waitUntil('the import to end', () => finished.has(job.id));
      assert.equal(finished.get(job.id), false);
      assert.deepEqual(preparing, []);
      assert.equal((await store.importById(job.id))?.status, 'succeeded');
    } finally {
      await worker.stop();
      await cleanup();
    }
  });
});
