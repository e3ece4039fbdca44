/**
 * Issue 22, point 3: stored uploads are removed UPLOAD_RETENTION_DAYS after
 * their import ends, by the worker's background sweep; the import stays in the
 * history, and the panel says the file is gone instead of offering to import
 * it again. Queued imports keep their files. Both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { customersCsv } from '../helpers/csv.js';
import { signedIn, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import { storeFactories } from '../helpers/stores.js';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/store/store.js';

async function storedBytes(store: Store, id: number): Promise<number> {
  let n = 0;
  for await (const chunk of store.readImportFile(id)) n += chunk.length;
  return n;
}

test('UPLOAD_RETENTION_DAYS: 3 days by default, 0 allowed, nonsense refused', () => {
  assert.equal(loadConfig({}).uploadRetentionMs, 3 * 86_400_000);
  assert.equal(loadConfig({ UPLOAD_RETENTION_DAYS: '0' }).uploadRetentionMs, 0);
  assert.throws(() => loadConfig({ UPLOAD_RETENTION_DAYS: '-1' }), /UPLOAD_RETENTION_DAYS must be an integer/);
});

for (const factory of await storeFactories()) {
  describe(`upload retention on ${factory.name}`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: PanelServer;
    before(async () => {
      ({ store, cleanup } = await factory.create());
      server = await startPanelServer(store);
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    test('the sweep removes the files of ended imports only, and the panel says when a file went', async () => {
      const { client, company } = await signedIn(server, store, 'retained');
      const upload = async () => Number((await client.upload('clientes', customersCsv(50))).json().import_id);
      const ended = await upload();
      assert.equal((await waitForImport(store, ended)).status, 'succeeded');
      await server.pauseImports();
      const queued = await upload();
      const size = await storedBytes(store, queued);
      assert.ok(size > 0);

      assert.equal(await store.sweepUploads(Date.now() + 1), 1, 'only the ended import');
      const gone = (await store.importById(ended))!;
      assert.ok(gone.fileRemovedAt instanceof Date);
      assert.equal(gone.status, 'succeeded', 'the history stays');
      assert.equal(await storedBytes(store, ended), 0);
      assert.equal(await store.copyImport(ended, 'panel'), null, 'a removed file cannot be queued again');
      assert.equal((await store.importById(queued))!.fileRemovedAt, null);
      assert.equal(await storedBytes(store, queued), size, 'a queued import keeps its file');
      assert.equal(await store.sweepUploads(Date.now() + 1), 0, 'nothing twice');

      // The configured retention, applied by a worker's own housekeeping (it sweeps as it starts).
      server.resumeImports();
      assert.equal((await waitForImport(store, queued)).status, 'succeeded');
      const sweeper = new ImportWorker(store, { snapshotRetentionMs: 60_000, uploadRetentionMs: 0, pollMs: 60_000 });
      sweeper.start();
      for (let i = 0; i < 500 && !(await store.importById(queued))!.fileRemovedAt; i++) await new Promise((r) => setTimeout(r, 20));
      await sweeper.stop();
      assert.ok((await store.importById(queued))!.fileRemovedAt instanceof Date, 'the background sweep removed it');

      const page = await client.get(`/panel/imports/${ended}`);
      assert.match(page.text, /El archivo de esta importación ya no se guarda: se borró el \d{4}-\d\d-\d\d, 0 días después de terminar/);
      assert.doesNotMatch(page.text, new RegExp(`/panel/imports/${ended}/reapply`));
      const refused = await client.post(`/panel/imports/${ended}/reapply`);
      assert.equal(refused.status, 404);
      assert.equal((await store.listImports(company.id, 'clientes')).length, 2, 'nothing was queued');
    });
  });
}
