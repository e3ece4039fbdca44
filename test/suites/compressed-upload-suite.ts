/**
 * Issue 18, point 5, once per store: gzip uploads from the panel form (`.csv.gz`) and the
 * upload-token API (`Content-Encoding: gzip`), stored decompressed; MAX_UPLOAD_BYTES bounds the
 * decompressed size (a gzip bomb is a 413 with nothing stored and no memory spent on it); a
 * corrupt gzip is a clear 400 with nothing stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { Store } from '../../src/store/store.js';
import { customersCsv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { credentialFor, signedIn, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import type { StoreFactory } from '../helpers/stores.js';

const MiB = 1024 * 1024;

/**
 * About 1 MB of gzip that inflates to 1000 MiB: 100 members of 10 MiB of one byte each (a
 * gzip stream may hold several members; gunzip reads them all).
 */
function gzipBomb(): Buffer {
  const member = gzipSync(Buffer.alloc(10 * MiB, 'a'), { level: 9 });
  return Buffer.concat(Array.from({ length: 100 }, () => member));
}

export function compressedUploadSuite(factory: StoreFactory) {
  describe(`compressed uploads (${factory.name})`, { skip: factory.skip }, () => {
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

    const plain = customersCsv(300);
    const gz = gzipSync(plain);

    test('Content-Encoding: gzip on the token API and .csv.gz from the form store the decompressed CSV: the same records as the plain file', async () => {
      const { client, company } = await signedIn(server, store, 'gz');
      const { token } = await credentialFor(store, company.id, 'upload');
      const key = await credentialFor(store, company.id, 'read');

      const put = await request(`${server.baseUrl}/panel/api/imports/clientes?filename=clientes.csv.gz`, {
        method: 'PUT',
        headers: { ...bearer(token), 'content-encoding': 'gzip' },
        body: gz,
      });
      assert.equal(put.status, 202, put.text());
      const first = await waitForImport(store, put.json().import_id);
      assert.equal(first.status, 'succeeded', first.error ?? '');
      assert.equal(first.filename, 'clientes.csv.gz');
      assert.equal(first.sizeBytes, plain.length, 'stored (and counted) decompressed');
      assert.equal((first.report as { inserted: number }).inserted, 300);
      const read = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key.token) });
      assert.equal(read.json().total, 300);
      assert.equal(read.json().items[0].data.OBSERVACIONES, 'Nota; con "comillas"\r\ny salto', 'cells intact through gzip');

      // The same bytes plain, from the form as .csv.gz, and undeclared (curl -T x.csv.gz without the header): nothing changes.
      const plainPut = await request(`${server.baseUrl}/panel/api/imports/clientes`, { method: 'PUT', headers: bearer(token), body: plain });
      const form = await client.upload('clientes', gz, 'clientes.csv.gz');
      assert.equal(form.status, 201, form.text);
      const undeclared = await request(`${server.baseUrl}/panel/api/imports/clientes`, { method: 'PUT', headers: bearer(token), body: gz });
      for (const id of [plainPut.json().import_id, form.json().import_id, undeclared.json().import_id]) {
        const job = await waitForImport(store, id);
        assert.equal(job.status, 'succeeded', job.error ?? '');
        assert.equal(job.sizeBytes, plain.length);
        assert.deepEqual(
          [(job.report as { unchanged: number }).unchanged, (job.report as { inserted: number }).inserted, (job.report as { updated: number }).updated],
          [300, 0, 0],
        );
      }
      // Re-applying a gzip upload reads the stored (decompressed) file.
      const again = await store.copyImport(form.json().import_id, 'test');
      server.resumeImports();
      assert.equal((await waitForImport(store, again!.id)).status, 'succeeded');
    });

    test('a corrupt or truncated gzip, or an unsupported Content-Encoding: 400 bad_request saying so, nothing stored', async () => {
      const { client, company } = await signedIn(server, store, 'gzbad');
      const { token } = await credentialFor(store, company.id, 'upload');
      const url = `${server.baseUrl}/panel/api/imports/clientes`;
      const cases: [string, Record<string, string>, Buffer, RegExp][] = [
        ['truncated', { 'content-encoding': 'gzip' }, gz.subarray(0, gz.length - 100), /not a valid gzip file/],
        ['not gzip at all', { 'content-encoding': 'gzip' }, plain, /not a valid gzip file/],
        ['flipped bytes', { 'content-encoding': 'gzip' }, Buffer.concat([gz.subarray(0, 200), Buffer.alloc(100, 0xff), gz.subarray(300)]), /not a valid gzip file/],
        ['brotli', { 'content-encoding': 'br' }, plain, /Content-Encoding "br" is not supported/],
      ];
      for (const [name, headers, body, message] of cases) {
        const res = await request(url, { method: 'PUT', headers: { ...bearer(token), ...headers }, body });
        assert.equal(res.status, 400, name);
        assert.equal(res.json().error, 'bad_request', name);
        assert.match(res.json().message, message, name);
      }
      const form = await client.upload('clientes', gz.subarray(0, gz.length - 100), 'clientes.csv.gz');
      assert.equal(form.status, 400);
      assert.match(form.json().message, /not a valid gzip file/);
      assert.deepEqual(await store.listImports(company.id), []);
    });

    test('a gzip bomb: 413 payload_too_large from the token API and the form, nothing stored, memory flat', async () => {
      const small = await startPanelServer(store, { MAX_UPLOAD_BYTES: String(MiB) });
      try {
        const { client, company } = await signedIn(small, store, 'gzbomb');
        const { token } = await credentialFor(store, company.id, 'upload');
        const bomb = gzipBomb();
        assert.ok(bomb.length < MiB, 'the compressed body itself is under the limit');
        // The server runs in this process: the most memory its buffers ever held, sampled as it works
        // (rss only ever grows within a process, so it cannot tell this test from an earlier one).
        const before = process.memoryUsage().arrayBuffers;
        let peak = before;
        const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 5);
        const put = await request(`${small.baseUrl}/panel/api/imports/clientes`, {
          method: 'PUT',
          headers: { ...bearer(token), 'content-encoding': 'gzip' },
          body: bomb,
        });
        assert.equal(put.status, 413);
        assert.equal(put.json().error, 'payload_too_large');
        const form = await client.upload('clientes', bomb, 'bomb.csv.gz');
        assert.equal(form.status, 413);
        assert.equal(form.json().error, 'payload_too_large');
        // Inflated whole, each would take 1000 MiB; streamed, the server stops after 1 MiB of output.
        clearInterval(sampler);
        const grown = peak - before;
        assert.ok(grown < 100 * MiB, `buffers grew by ${Math.round(grown / MiB)} MiB`);
        assert.deepEqual(await store.listImports(company.id), []);
      } finally {
        await small.close();
      }
    });
  });
}
