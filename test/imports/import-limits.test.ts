/**
 * Issue 8, point 4: oversized input through the real import path, with the
 * default limits: refused with a clear error, without holding it all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ImportWorker } from '../../src/imports/import-worker.js';
import type { Store } from '../../src/store/store.js';
import { sqliteFactory } from '../helpers/stores.js';
import { companyWithKey } from '../helpers/test-server.js';

describe('import limits (defaults)', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let companyId: number;
  let worker: ImportWorker;
  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    companyId = (await companyWithKey(store, 'limits')).company.id;
    worker = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
  });
  after(async () => cleanup?.());

  /** Streams `parts` as the upload, so the test itself never builds the whole file either. */
  async function importParts(parts: () => Generator<Buffer>) {
    async function* body() {
      yield* parts();
    }
    await store.createImport({ companyId, kind: 'clientes', filename: 'big.csv', source: 'test' }, body(), 1 << 30);
    return (await worker.runOnce())!.report;
  }

  test('a cell over 1 MiB fails the import as cell_too_large, naming its line', async () => {
    const report = await importParts(function* () {
      yield Buffer.from('CODIGO;NOMBRE;NOTAS\r\nC1;uno;corta\r\nC2;dos;"');
      for (let i = 0; i < 40; i++) yield Buffer.alloc(64 * 1024, 0x61); // 2.5 MiB of 'a' in one quoted cell
      yield Buffer.from('"\r\n');
    });
    assert.equal(report.status, 'failed');
    assert.equal(report.error?.code, 'cell_too_large');
    assert.equal(report.error?.line, 3);
  });

  test('a header of 100,000 columns fails as too_many_columns', async () => {
    const report = await importParts(function* () {
      const names: string[] = [];
      for (let i = 0; i < 100_000; i++) names.push(`COL_${i}`);
      yield Buffer.from(`CODIGO;${names.join(';')}\r\n`);
      yield Buffer.from(`C1${';x'.repeat(100_000)}\r\n`);
    });
    assert.equal(report.status, 'failed');
    assert.equal(report.error?.code, 'too_many_columns');
    assert.match(report.error!.message, /100001 columns|100,001 columns/);
  });

  test('a row of 100,000 cells under a 3-column header fails as ragged_row', async () => {
    const report = await importParts(function* () {
      yield Buffer.from('CODIGO;NOMBRE;EMAIL\r\nC1;a;b\r\nC2');
      for (let i = 0; i < 100; i++) yield Buffer.from(';x'.repeat(1000));
      yield Buffer.from('\r\n');
    });
    assert.equal(report.status, 'failed');
    assert.equal(report.error?.code, 'ragged_row');
    assert.equal(report.error?.line, 3);
  });
});
