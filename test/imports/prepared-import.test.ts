/**
 * `mirador import` prepares an import while it stores the file, on a store
 * that can (imports/prepared-import.ts): what it prepared is used only for
 * exactly the stored bytes, and a preparation that fails or is not used
 * leaves no snapshot behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { queueLocalFile, type LocalUpload } from '../../src/imports/prepared-import.js';
import { UploadTooLargeError, type Store } from '../../src/store/store.js';
import { customersCsv } from '../helpers/csv.js';
import { postgresFactory, sqliteFactory } from '../helpers/stores.js';

async function* bytes(b: Buffer): AsyncGenerator<Buffer> {
  // In pieces, as a file is read.
  for (let at = 0; at < b.length; at += 4096) yield b.subarray(at, at + 4096);
}

const readAll = async (source: AsyncIterable<Buffer>) => {
  const parts: Buffer[] = [];
  for await (const p of source) parts.push(p);
  return Buffer.concat(parts);
};

const factory = await postgresFactory();

describe('imports prepared while the file is stored (PostgreSQL)', { skip: factory.skip }, () => {
  let store: Store;
  let databaseUrl: string;
  let cleanup: () => Promise<void>;
  let client: pg.Client;
  let worker: ImportWorker;
  let companyId: number;

  before(async () => {
    ({ store, databaseUrl, cleanup } = await factory.create());
    client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    worker = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
    companyId = (await store.createCompany('prepared', 'Prepared')).id;
  });
  after(async () => {
    await client?.end();
    await cleanup?.();
  });

  /** Snapshots written but neither live nor superseded: what a preparation left behind. */
  const unpublished = async () =>
    (await client.query(`SELECT count(*)::int AS n FROM snapshots WHERE state IN ('staging', 'staged')`)).rows[0].n as number;

  const upload = (reads: Buffer[]): LocalUpload => {
    let opened = 0;
    return {
      companyId,
      kind: 'clientes',
      filename: 'clientes.csv',
      source: 'cli',
      sizeBytes: reads[0]!.length,
      open: () => bytes(reads[Math.min(opened++, reads.length - 1)]!),
    };
  };

  test('prepared while stored, then concluded with no second parse: the stored upload is the file', async () => {
    const file = customersCsv(300);
    const { job, prepared } = await queueLocalFile(store, upload([file]), 1 << 30, { prepare: true });
    assert.ok(prepared, 'prepared');
    assert.equal(job.status, 'queued');
    assert.ok((await readAll(store.readImportFile(job.id))).equals(file));
    assert.equal(await unpublished(), 1);
    const ran = (await worker.runOnce(prepared))!;
    assert.deepEqual([ran.job.id, ran.prepared, ran.report.status, ran.report.inserted], [job.id, true, 'succeeded', 300]);
    assert.equal(await store.liveSnapshotId(companyId, 'clientes'), prepared.snapshot.snapshotId);
    assert.equal(await unpublished(), 0);
  });

  test('a file that changes between the two reads: the preparation is dropped and the stored bytes are imported', async () => {
    const stored = customersCsv(300, (i) => `Almacenado ${i}`);
    const changed = customersCsv(300, (i) => `Cambiado ${i}`);
    const { job, prepared } = await queueLocalFile(store, upload([stored, changed]), 1 << 30, { prepare: true });
    assert.equal(prepared, null);
    assert.equal(await unpublished(), 0);
    const ran = (await worker.runOnce())!;
    assert.equal(ran.job.id, job.id);
    assert.equal(ran.report.updated, 300);
    const live = (await store.readChunks((await store.liveSnapshotId(companyId, 'clientes'))!, 0, 0))[0]!;
    assert.match(live.bytes.toString(), /Almacenado 0/);
  });

  test('a broken file: nothing prepared, and the queue reports the error as usual', async () => {
    const broken = Buffer.from('CODIGO;01_NOMBRE_COMERCIAL\nC1;Uno\nC2;"Dos\n');
    const { job, prepared } = await queueLocalFile(store, upload([broken]), 1 << 30, { prepare: true });
    assert.equal(prepared, null);
    assert.equal(await unpublished(), 0);
    const ran = (await worker.runOnce())!;
    assert.equal(ran.job.id, job.id);
    assert.equal(ran.report.error?.code, 'bad_quote');
  });

  test('an upload refused as too large: the error, and no snapshot left behind', async () => {
    const file = customersCsv(2000);
    await assert.rejects(queueLocalFile(store, upload([file]), 10_000, { prepare: true }), UploadTooLargeError);
    assert.equal(await unpublished(), 0);
  });

  test('without waiting (prepare: false), nothing is prepared', async () => {
    const { job, prepared } = await queueLocalFile(store, upload([customersCsv(10)]), 1 << 30, { prepare: false });
    assert.equal(prepared, null);
    assert.equal(await unpublished(), 0);
    assert.equal((await worker.runOnce())!.job.id, job.id);
  });
});

describe('imports prepared while the file is stored (SQLite)', () => {
  test('SQLite stores first and prepares nothing: one connection cannot write both at once', async () => {
    const { store, cleanup } = await sqliteFactory.create();
    try {
      assert.equal(store.writesWhileStoring, false);
      const { id } = await store.createCompany('lite', 'Lite');
      const file = customersCsv(50);
      const { job, prepared } = await queueLocalFile(
        store,
        { companyId: id, kind: 'clientes', filename: 'c.csv', source: 'cli', sizeBytes: file.length, open: () => bytes(file) },
        1 << 30,
        { prepare: true },
      );
      assert.equal(prepared, null);
      assert.equal(job.status, 'queued');
    } finally {
      await cleanup();
    }
  });
});
