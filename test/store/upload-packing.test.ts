/**
 * Issue 22, point 3 (PostgreSQL's bound): the stored upload of an ended
 * import is packed (recompressed with brotli, store/upload-packing.ts) by
 * the worker; it is smaller in the store, and everything that reads it back
 * (the worker applying "import this file again", a copy, a backup restored)
 * gets the plain bytes it stored. Uploads of queued or running imports are
 * never packed; a second pass packs nothing; two instances packing at once
 * pack each upload once. Both stores, real databases.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { bearer, request } from '../helpers/http.js';
import { customersCsv } from '../helpers/csv.js';
import { credentialFor, signedIn, startPanelServer, waitForImport } from '../helpers/panel.js';
import { sqlCounter, type SqlCounter } from '../helpers/sql-count.js';
import { freshPostgresDatabase, storeFactories, tempDir } from '../helpers/stores.js';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { openStore } from '../../src/store/open-store.js';
import type { Kind } from '../../src/domain/kinds.js';
import type { PackedUpload, Store } from '../../src/store/store.js';
import { PACK_BYTES } from '../../src/store/upload-packing.js';

async function readAll(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of source) parts.push(part);
  return Buffer.concat(parts);
}

/** `bytes` in pieces of 256 KiB, as a request body arrives. */
async function* pieces(bytes: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += 256 * 1024) yield bytes.subarray(at, at + 256 * 1024);
}

/** Packs every upload there is to pack, as the worker's passes do; the uploads packed. */
async function packAll(store: Store): Promise<PackedUpload[]> {
  const done: PackedUpload[] = [];
  for (let r = await store.packUpload(0); r; r = await store.packUpload(r.importId)) done.push(r);
  return done;
}

const dir = tempDir('mirador-packing-');
after(() => dir.remove());

for (const factory of await storeFactories()) {
  describe(`stored uploads packed on ${factory.name}`, { skip: factory.skip }, () => {
    // Each test owns its database.
    let store: Store;
    let databaseUrl: string;
    let cleanup: () => Promise<void>;
    let sql: SqlCounter;
    beforeEach(async () => {
      ({ store, databaseUrl, cleanup } = await factory.create());
      sql = sqlCounter(databaseUrl);
    });
    afterEach(async () => {
      await sql?.close();
      await cleanup?.();
    });
    // What a blob takes in the store: PostgreSQL's size as stored (after TOAST's lz4 on plain blobs).
    const size = factory.name === 'postgres' ? 'pg_column_size(bytes)' : 'length(bytes)';
    const stored = (table: 'import_blobs' | 'import_packed_blobs', id: number) =>
      sql.count(`SELECT coalesce(sum(${size}), 0) AS n FROM ${table} WHERE import_id = $1`, [id]);
    const rows = (table: 'import_blobs' | 'import_packed_blobs', id: number) =>
      sql.count(`SELECT count(*) AS n FROM ${table} WHERE import_id = $1`, [id]);
    const isPacked = async (id: number) => (await sql.count(`SELECT count(*) AS n FROM imports WHERE id = $1 AND file_encoding = 'br'`, [id])) === 1;

    /** An upload stored through the store, in pieces, and its import's id. */
    const upload = async (companyId: number, kind: Kind, bytes: Buffer) =>
      (await store.createImport({ companyId, kind, filename: `${kind}.csv`, source: 'test' }, pieces(bytes), bytes.length)).id;

    test('an upload is left plain until its import ended before the time asked for (the worker waits PACK_AFTER_MS)', async () => {
      const company = await store.createCompany('recent', 'Recent S.L.');
      const id = await upload(company.id, 'clientes', customersCsv(50));
      assert.equal((await store.claimImport('test-worker'))!.id, id);
      await store.failImport(id, 'failed on purpose', null);
      const endedAt = (await store.importById(id))!.finishedAt!.getTime();
      assert.equal(await store.packUpload(0, endedAt), null, 'ended at that very time: not yet');
      assert.equal(await isPacked(id), false);
      const packed = await store.packUpload(0, endedAt + 1);
      assert.deepEqual([packed?.importId, packed?.packed], [id, true]);
    });

    test('an ended import\'s upload is packed, smaller, and read back the same; queued and running ones are not; a second pass packs nothing', async () => {
      const company = await store.createCompany('packed', 'Packed S.L.');
      // Several 1 MiB blobs, packed in 4 MiB pieces: more than one packed blob.
      const file = customersCsv(70_000);
      assert.ok(file.length > PACK_BYTES);
      const ended = await upload(company.id, 'clientes', file);
      assert.equal((await store.claimImport('test-worker'))!.id, ended);
      await store.failImport(ended, 'failed on purpose', null);
      const running = await upload(company.id, 'articulos', file);
      assert.equal((await store.claimImport('test-worker'))!.id, running);
      const queued = await upload(company.id, 'obras', file);
      const plainStored = await stored('import_blobs', ended);

      // A read begun before the upload is packed goes on from the packed copy.
      const reading = store.readImportFile(ended)[Symbol.asyncIterator]();
      const first = await reading.next();
      assert.ok(!first.done && first.value.length > 0);

      const packed = await packAll(store);
      assert.deepEqual(packed.map((p) => [p.importId, p.packed, p.plainBytes]), [[ended, true, file.length]], 'only the ended import');
      assert.ok(packed[0]!.packedBytes < file.length / 3, `brotli packs CSV well: ${packed[0]!.packedBytes} of ${file.length}`);

      const rest: Buffer[] = [first.value as Buffer];
      for (let r = await reading.next(); !r.done; r = await reading.next()) rest.push(r.value);
      assert.ok(Buffer.concat(rest).equals(file), 'the read begun plain ended with the same bytes');

      assert.ok(await isPacked(ended));
      assert.equal(await rows('import_blobs', ended), 0, 'the plain blobs are gone');
      assert.ok((await rows('import_packed_blobs', ended)) >= 2);
      const packedStored = await stored('import_packed_blobs', ended);
      assert.ok(packedStored < plainStored / 2, `smaller in the store: ${packedStored} bytes, plain ${plainStored}`);
      assert.ok((await readAll(store.readImportFile(ended))).equals(file), 'read back byte for byte');
      for (const id of [running, queued]) {
        assert.ok(!(await isPacked(id)));
        assert.equal(await rows('import_packed_blobs', id), 0);
        assert.ok((await readAll(store.readImportFile(id))).equals(file));
      }

      assert.deepEqual(await packAll(store), [], 'a second pass packs nothing');
      assert.equal(await stored('import_packed_blobs', ended), packedStored);

      // A copy ("import this file again") reads the same, and is stored packed as it was.
      const copy = (await store.copyImport(ended, 'panel'))!;
      assert.ok(await isPacked(copy.id));
      assert.ok((await readAll(store.readImportFile(copy.id))).equals(file));

      // Removal after UPLOAD_RETENTION_DAYS takes the packed blobs too.
      await store.failImport(running, 'ended', null);
      assert.equal(await store.sweepUploads(Date.now() + 1), 2);
      assert.equal(await rows('import_packed_blobs', ended), 0);
      assert.equal(await rows('import_blobs', running), 0);
      assert.equal((await readAll(store.readImportFile(ended))).length, 0);
    });

    test('two instances packing at once pack each ended upload once, and every one reads back the same', async () => {
      const company = await store.createCompany('twice', 'Twice S.L.');
      const files = new Map<number, Buffer>();
      for (const kind of ['clientes', 'articulos', 'obras', 'avisos-correctivo'] as const) {
        const file = customersCsv(30_000, (i) => `${kind} ${i}`);
        const id = await upload(company.id, kind, file);
        assert.equal((await store.claimImport('test-worker'))!.id, id);
        await store.failImport(id, 'ended', null);
        files.set(id, file);
      }
      const other = await openStore(databaseUrl);
      try {
        const [a, b] = await Promise.all([packAll(store), packAll(other)]);
        const packedBy = [...a, ...b].filter((p) => p.packed).map((p) => p.importId);
        assert.deepEqual(packedBy.sort((x, y) => x - y), [...files.keys()], 'each once');
      } finally {
        await other.close();
      }
      for (const [id, file] of files) {
        assert.ok(await isPacked(id));
        assert.equal(await rows('import_blobs', id), 0);
        assert.ok((await readAll(store.readImportFile(id))).equals(file));
      }
    });

    test('the worker packs ended uploads; "import this file again" of a packed one serves what its first import served', async () => {
      const server = await startPanelServer(store);
      try {
        const { client, company } = await signedIn(server, store, 'again');
        const { token: key } = await credentialFor(store, company.id, 'read');
        const PAGES = ['/v1/clientes?limit=1000', '/v1/clientes?limit=1000&offset=1000', '/v1/clientes/C000050', '/v1/clientes?updated_since=2000-01-01&limit=7'];
        const served = async () => {
          const out: string[] = [];
          for (const path of PAGES) {
            const res = await request(`${server.baseUrl}${path}`, { headers: bearer(key) });
            assert.equal(res.status, 200, `${path}: ${res.text()}`);
            // The envelope names the snapshot, which a re-import may replace with an equal one.
            out.push(res.text().replace(/"snapshot":"[^"]*"/g, ''));
          }
          return out;
        };
        const file = customersCsv(2500);
        const first = Number((await client.upload('clientes', file)).json().import_id);
        assert.equal((await waitForImport(store, first)).status, 'succeeded');
        const before = await served();

        // The worker of a serving process packs in its idle turns.
        const packedByWorker: number[] = [];
        const packer = new ImportWorker(store, {
          snapshotRetentionMs: 60_000,
          pollMs: 20,
          packUploads: true,
          packUploadsAfterMs: 0,
          events: { packed: (u) => packedByWorker.push(u.importId) },
        });
        packer.start();
        for (let i = 0; i < 500 && !(await isPacked(first)); i++) await new Promise((r) => setTimeout(r, 20));
        await packer.stop();
        assert.deepEqual(packedByWorker, [first]);
        assert.equal(await rows('import_blobs', first), 0);

        const again = await client.post(`/panel/imports/${first}/reapply`);
        assert.equal(again.status, 303, again.text);
        const copy = Number(/\/panel\/imports\/(\d+)/.exec(again.location ?? '')?.[1]);
        const job = await waitForImport(store, copy);
        assert.equal(job.status, 'succeeded', job.error ?? '');
        assert.equal(job.sizeBytes, file.length);
        const report = job.report as { unchanged: number; inserted: number; updated: number; deleted: number };
        assert.deepEqual([report.unchanged, report.inserted, report.updated, report.deleted], [2500, 0, 0, 0], 'the same rows, read from the packed file');
        assert.deepEqual(await served(), before, 'the same responses as after the first import');
      } finally {
        await server.close();
      }
    });

    test('the mapping page reads the columns of a failed import from its packed upload', async () => {
      const server = await startPanelServer(store);
      try {
        const { client, company } = await signedIn(server, store, 'mapping');
        const file = Buffer.from('REF;NOMBRE_RARO;OTRA_COLUMNA\r\n1;a;b\r\n', 'latin1');
        // Paused before the upload: the server's worker, polling, would otherwise claim it first.
        await server.pauseImports();
        const id = await upload(company.id, 'clientes', file);
        assert.equal((await store.claimImport('test-worker'))!.id, id);
        await store.failImport(id, 'no id column', null);
        assert.equal((await packAll(store)).length, 1);
        assert.ok(await isPacked(id));
        const page = await client.get('/panel/kinds/clientes/mapping');
        assert.equal(page.status, 200);
        assert.match(page.text, new RegExp(`clientes\\.csv[^<]*${id}[^<]*3`), 'the three columns of the failed file');
        for (const column of ['NOMBRE_RARO', 'OTRA_COLUMNA']) assert.ok(page.text.includes(`value="${column}"`), column);
      } finally {
        await server.close();
      }
    });

    test('a backup of a database with packed uploads restores them readable and packed', async () => {
      const company = await store.createCompany('backup', 'Backup S.L.');
      const file = customersCsv(20_000, (i) => `backup ${i}`);
      const id = await upload(company.id, 'clientes', file);
      assert.equal((await store.claimImport('test-worker'))!.id, id);
      await store.failImport(id, 'ended', null);
      await packAll(store);
      assert.ok(await isPacked(id));

      let copy: { url: string; drop(): Promise<void> };
      if (factory.name === 'sqlite') {
        const backupFile = join(dir.path, 'packed.backup');
        await store.backup(backupFile);
        copy = { url: `sqlite:${join(dir.path, 'restored.db')}`, drop: async () => {} };
        const empty = await openStore(copy.url);
        await empty.migrate();
        await empty.restore(backupFile);
      } else {
        const backupFile = join(dir.path, 'packed.pgdump');
        const dumped = spawnSync('pg_dump', ['--format=custom', `--file=${backupFile}`, `--dbname=${databaseUrl}`], { encoding: 'utf8' });
        assert.equal(dumped.status, 0, dumped.stderr);
        copy = await freshPostgresDatabase();
        const restored = spawnSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${copy.url}`, backupFile], { encoding: 'utf8' });
        assert.equal(restored.status, 0, restored.stderr);
        const restoredSql = sqlCounter(copy.url);
        try {
          const external = await restoredSql.count(
            `SELECT count(*) AS n FROM pg_attribute WHERE attrelid = 'import_packed_blobs'::regclass AND attname = 'bytes' AND attstorage = 'e'`,
          );
          assert.equal(external, 1, 'packed blobs are kept out of TOAST compression after a restore too');
        } finally {
          await restoredSql.close();
        }
      }
      const restored = await openStore(copy.url);
      try {
        await restored.migrate();
        assert.ok((await readAll(restored.readImportFile(id))).equals(file));
        const again = (await restored.copyImport(id, 'panel'))!;
        assert.ok((await readAll(restored.readImportFile(again.id))).equals(file));
      } finally {
        await restored.close();
        await copy.drop();
      }
    });
  });
}
