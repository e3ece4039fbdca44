/**
 * The Store contract of the import queue: uploads stored durably and
 * streamed, the claim rules (oldest first, one at a time per company and
 * kind, never the same job twice — also between two connections at once),
 * progress, failure, recovery, and publishing with an import. Run once per
 * store, on a store of its own (claims see the whole queue).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { Kind } from '../../src/domain/kinds.js';
import { openStore } from '../../src/store/open-store.js';
import { UploadTooLargeError, type ImportJob, type Store } from '../../src/store/store.js';
import type { StoreFactory } from '../helpers/stores.js';
import { batches, spec, staged } from './store-suite.js';

const MiB = 1024 * 1024;

async function* parts(...buffers: Buffer[]): AsyncGenerator<Buffer> {
  for (const b of buffers) yield b;
}

async function readAll(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const b of source) out.push(b);
  return Buffer.concat(out);
}

export function storeQueueSuite(factory: StoreFactory) {
  describe(`Store import queue (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let databaseUrl: string;
    let cleanup: () => Promise<void>;
    let slugs = 0;
    const company = async () => (await store.createCompany(`q-${++slugs}`, `Queue ${slugs}`)).id;
    const upload = (companyId: number, kind: Kind = 'clientes', body = Buffer.from('CODIGO\nC1\n')) =>
      store.createImport({ companyId, kind, filename: `${kind}.csv`, source: 'cli' }, parts(body), 10 * MiB);

    before(async () => {
      ({ store, databaseUrl, cleanup } = await factory.create());
    });
    after(async () => {
      await cleanup?.();
    });
    // Each test starts with an empty queue: whatever an earlier one left is claimed and failed.
    beforeEach(async () => {
      for (let job = await store.claimImport('drain'); job; job = await store.claimImport('drain')) {
        await store.failImport(job.id, 'drained', null);
      }
    });

    test('createImport stores the streamed upload; readImportFile returns the same bytes', async () => {
      const companyId = await company();
      const pieces = [randomBytes(700_000), randomBytes(900_000), randomBytes(17), randomBytes(MiB + 5)];
      const job = await store.createImport(
        { companyId, kind: 'articulos', filename: 'artículos.csv', source: 'token:abcd1234' },
        parts(...pieces),
        10 * MiB,
      );
      const expected = Buffer.concat(pieces);
      assert.deepEqual(
        { ...job, createdAt: null },
        {
          id: job.id, companyId, kind: 'articulos', status: 'queued', filename: 'artículos.csv', sizeBytes: expected.length,
          source: 'token:abcd1234', createdAt: null, startedAt: null, finishedAt: null, rowsRead: 0, bytesRead: 0,
          attempts: 0, report: null, error: null, snapshotId: null, fileRemovedAt: null,
        },
      );
      assert.ok(job.createdAt instanceof Date);
      assert.deepEqual(await store.importById(job.id), job);
      assert.ok((await readAll(store.readImportFile(job.id))).equals(expected));
      const empty = await store.createImport({ companyId, kind: 'obras', filename: 'e.csv', source: 'cli' }, parts(), MiB);
      assert.equal(empty.sizeBytes, 0);
      assert.equal((await readAll(store.readImportFile(empty.id))).length, 0);
      assert.equal(await store.importById(999_999), null);
    });

    test('an upload over maxBytes throws UploadTooLargeError and stores nothing', async () => {
      const companyId = await company();
      const tooBig = store.createImport(
        { companyId, kind: 'clientes', filename: 'big.csv', source: 'cli' },
        parts(randomBytes(MiB), randomBytes(MiB), randomBytes(MiB)),
        2 * MiB + 10,
      );
      await assert.rejects(tooBig, (e) => e instanceof UploadTooLargeError && e.maxBytes === 2 * MiB + 10);
      assert.deepEqual(await store.listImports(companyId), []);
      assert.equal(await store.claimImport('w'), null);
    });

    test('copyImport queues a new import of the same file; the original is untouched', async () => {
      const companyId = await company();
      const bytes = Buffer.concat([randomBytes(MiB + 3), randomBytes(1000)]);
      const original = await store.createImport(
        { companyId, kind: 'obras', filename: 'obras.csv', source: 'cli' },
        parts(bytes),
        10 * MiB,
      );
      assert.equal((await store.claimImport('w'))?.id, original.id);
      await store.failImport(original.id, 'bad mapping', null);
      const copy = (await store.copyImport(original.id, 'panel'))!;
      assert.ok(copy.id > original.id);
      assert.deepEqual(
        [copy.companyId, copy.kind, copy.status, copy.filename, copy.sizeBytes, copy.source, copy.attempts, copy.report],
        [companyId, 'obras', 'queued', 'obras.csv', bytes.length, 'panel', 0, null],
      );
      assert.ok((await readAll(store.readImportFile(copy.id))).equals(bytes));
      assert.ok((await readAll(store.readImportFile(original.id))).equals(bytes));
      assert.equal((await store.importById(original.id))!.status, 'failed');
      assert.equal((await store.claimImport('w'))?.id, copy.id, 'the copy is claimable like any upload');
      assert.equal(await store.copyImport(999_999, 'panel'), null);
    });

    test('listImports: newest first, by kind, limited', async () => {
      const companyId = await company();
      const a = await upload(companyId, 'clientes');
      const b = await upload(companyId, 'obras');
      const c = await upload(companyId, 'clientes');
      assert.deepEqual((await store.listImports(companyId)).map((j) => j.id), [c.id, b.id, a.id]);
      assert.deepEqual((await store.listImports(companyId, 'clientes')).map((j) => j.id), [c.id, a.id]);
      assert.deepEqual((await store.listImports(companyId, undefined, 1)).map((j) => j.id), [c.id]);
      assert.deepEqual(await store.listImports(await company()), []);
    });

    test('claims: oldest first, one at a time per company and kind', async () => {
      const x = await company();
      const y = await company();
      const j1 = await upload(x, 'clientes');
      const j2 = await upload(x, 'clientes');
      const j3 = await upload(x, 'articulos');
      const j4 = await upload(y, 'clientes');
      const first = (await store.claimImport('w1'))!;
      assert.equal(first.id, j1.id);
      assert.equal(first.status, 'running');
      assert.equal(first.attempts, 1);
      assert.ok(first.startedAt instanceof Date);
      assert.equal((await store.claimImport('w2'))?.id, j3.id, 'j2 waits for j1 of the same company and kind');
      assert.equal((await store.claimImport('w3'))?.id, j4.id);
      assert.equal(await store.claimImport('w4'), null);
      await store.failImport(j1.id, 'bad file', { reason: 'test' });
      assert.equal((await store.claimImport('w5'))?.id, j2.id);
      assert.equal(await store.claimImport('w6'), null);
    });

    test('two connections claiming at once never take the same job, nor two of one company and kind', async () => {
      const other = await openStore(databaseUrl);
      try {
        const companies = [await company(), await company(), await company()];
        const kinds: Kind[] = ['clientes', 'articulos', 'obras', 'avisos-correctivo'];
        const jobs: ImportJob[] = [];
        for (const c of companies) for (const k of kinds) jobs.push(await upload(c, k));
        const claimAll = async (s: Store, worker: string) => {
          const got: number[] = [];
          for (let j = await s.claimImport(worker); j; j = await s.claimImport(worker)) got.push(j.id);
          return got;
        };
        const results = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => claimAll(i % 2 ? store : other, `w${i}`)));
        const claimed = results.flat().sort((a, b) => a - b);
        assert.deepEqual(claimed, jobs.map((j) => j.id).sort((a, b) => a - b));
        // Several jobs of one company and kind: exactly one is taken, however many claim at once.
        const c = await company();
        for (let i = 0; i < 4; i++) await upload(c, 'clientes');
        const wave = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? store : other).claimImport(`v${i}`)));
        assert.equal(wave.filter((j) => j !== null).length, 1);
      } finally {
        await other.close();
      }
    });

    test('heartbeatImport records progress of a running import; failImport ends it', async () => {
      const job = await upload(await company());
      assert.equal((await store.claimImport('w'))?.id, job.id);
      await store.heartbeatImport(job.id, { rowsRead: 120, bytesRead: 4096 });
      const running = (await store.importById(job.id))!;
      assert.deepEqual([running.rowsRead, running.bytesRead], [120, 4096]);
      await store.failImport(job.id, 'Line 3: bad quote', { errors: [{ line: 3 }] });
      const failed = (await store.importById(job.id))!;
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error, 'Line 3: bad quote');
      assert.deepEqual(failed.report, { errors: [{ line: 3 }] });
      assert.ok(failed.finishedAt instanceof Date);
      await store.heartbeatImport(job.id, { rowsRead: 999, bytesRead: 999 });
      assert.equal((await store.importById(job.id))!.rowsRead, 120, 'no progress once ended');
    });

    test('recoverImports requeues the job of a gone worker, and fails it after maxAttempts', async () => {
      const job = await upload(await company());
      const alive = await upload(await company());
      assert.equal((await store.claimImport('dead-worker'))?.id, job.id);
      assert.equal((await store.claimImport('live-worker'))?.id, alive.id);
      const seen: [string, number][] = [];
      const isGone = (worker: string, heartbeatAt: number) => {
        seen.push([worker, heartbeatAt]);
        return worker === 'dead-worker';
      };
      assert.equal(await store.recoverImports(isGone, 2), 1);
      assert.ok(seen.every(([, t]) => typeof t === 'number' && Math.abs(t - Date.now()) < 60_000));
      const requeued = (await store.importById(job.id))!;
      assert.deepEqual([requeued.status, requeued.startedAt, requeued.attempts], ['queued', null, 1]);
      assert.equal((await store.claimImport('dead-worker'))?.id, job.id);
      assert.equal((await store.importById(job.id))!.attempts, 2);
      assert.equal(await store.recoverImports(isGone, 2), 1);
      const failed = (await store.importById(job.id))!;
      assert.equal(failed.status, 'failed');
      assert.match(failed.error ?? '', /interrupted 2 times/);
      assert.equal(await store.recoverImports(isGone, 2), 0);
      assert.equal((await store.importById(alive.id))!.status, 'running');
    });

    test('publishSnapshot with an import ends it as succeeded with its report', async () => {
      const companyId = await company();
      const job = await upload(companyId);
      assert.equal((await store.claimImport('w'))?.id, job.id);
      const s = await store.writeSnapshot(spec(companyId, Date.now(), 'clientes', job.id), batches([staged('C1')]));
      await store.publishSnapshot(s.snapshotId, { importId: job.id, report: { rows: 1, warnings: [] } });
      const done = (await store.importById(job.id))!;
      assert.equal(done.status, 'succeeded');
      assert.equal(done.snapshotId, s.snapshotId);
      assert.deepEqual(done.report, { rows: 1, warnings: [] });
      assert.equal(done.error, null);
      assert.ok(done.finishedAt instanceof Date);
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), s.snapshotId);
    });
  });
}
