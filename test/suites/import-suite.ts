/**
 * Contract §2 end to end, once per store: uploads queued durably, applied by
 * the worker, read back over HTTP.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { parsingThreadOptions, prepareImport } from '../../src/imports/apply-import.js';
import { confirmHeldImport, rejectHeldImport } from '../../src/imports/held-imports.js';
import type { ImportReport } from '../../src/imports/import-report.js';
import type { Kind } from '../../src/domain/kinds.js';
import type { StagedRecord, Store } from '../../src/store/store.js';
import { finishItem, hashBody } from '../../src/domain/item-renderer.js';
import { itemBodies } from '../../src/store/chunk-builder.js';
import { constants, crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { csv, customersCsv, CSV_CUSTOMER_HEADER, wideCustomersCsv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { waitUntil } from '../helpers/timing.js';
import type { StoreFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

/** An upload body, as the store takes it. */
async function* body(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}

export function importSuite(factory: StoreFactory) {
  describe(`imports (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let worker: ImportWorker;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      // Readers below poll as fast as they can for as long as an import takes, which on a loaded
      // machine is long enough to reach the default 600 a minute: the limit is not what they test.
      server = await startServer(store, { RATE_LIMIT_PER_MINUTE: '1000000000' });
      worker = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    async function importFile(companyId: number, kind: Kind, bytes: Buffer, filename = 'export.csv') {
      const job = await store.createImport({ companyId, kind, filename, source: 'test' }, body(bytes), 1 << 30);
      const done = await worker.runOnce();
      assert.equal(done?.job.id, job.id);
      return done!.report;
    }
    const list = async (key: string, kind = 'clientes', query = 'limit=1000') =>
      (await request(`${server.baseUrl}/v1/${kind}?${query}`, { headers: bearer(key) })).json();

    test('change detection: identical rows keep actualizado_at; changed and new get the import time; missing rows go', async () => {
      const { company, key } = await companyWithKey(store, 'changes');
      const first = await importFile(company.id, 'clientes', customersCsv(20));
      assert.equal(first.status, 'succeeded');
      assert.deepEqual([first.inserted, first.updated, first.unchanged, first.deleted], [20, 0, 0, 0]);
      const v1 = await list(key);
      await new Promise((r) => setTimeout(r, 5));

      const same = await importFile(company.id, 'clientes', customersCsv(20));
      assert.deepEqual([same.inserted, same.updated, same.unchanged, same.deleted], [0, 0, 20, 0]);
      const v2 = await list(key);
      assert.deepEqual(v2.items, v1.items, 'an identical file changes nothing, actualizado_at included');

      await new Promise((r) => setTimeout(r, 5));
      // Row 3 changes, rows 18-19 disappear, a new row appears.
      const ids = Array.from({ length: 18 }, (_, i) => `C${String(i + 1).padStart(6, '0')}`).concat(['C999999']);
      const third = await importFile(company.id, 'clientes', customersCsv(19, (i) => (i === 2 ? 'Cambiado' : `Cliente ${i}`), ids));
      assert.deepEqual([third.inserted, third.updated, third.unchanged, third.deleted], [1, 1, 17, 2]);
      const v3 = await list(key);
      assert.equal(v3.total, 19);
      const byId = new Map(v3.items.map((i: { id_erp: string }) => [i.id_erp, i]));
      const before = new Map(v1.items.map((i: { id_erp: string }) => [i.id_erp, i]));
      const t1 = (before.get('C000001') as { actualizado_at: string }).actualizado_at;
      const changed = byId.get('C000003') as { actualizado_at: string; nombre: string };
      const added = byId.get('C999999') as { actualizado_at: string };
      assert.equal(changed.nombre, 'Cambiado');
      assert.ok(changed.actualizado_at > t1);
      assert.equal(added.actualizado_at, changed.actualizado_at, 'one import, one timestamp');
      assert.equal((byId.get('C000001') as { actualizado_at: string }).actualizado_at, t1);
      assert.equal(byId.has('C000019'), false);
      assert.equal(byId.has('C000020'), false);
      // The changed rows come last, as a change feed.
      assert.deepEqual(v3.items.slice(-2).map((i: { id_erp: string }) => i.id_erp), ['C000003', 'C999999']);
      const feed = await list(key, 'clientes', `updated_since=${encodeURIComponent(changed.actualizado_at)}`);
      assert.equal(feed.total, 2);
    });

    test('data is the exact row; fields follow the mapping; precio and fecha are normalised with warnings', async () => {
      const { company, key } = await companyWithKey(store, 'exact');
      const rows = [
        ['CODIGO', 'DESCRIPCION', 'UNIDAD_MEDIDA', 'PRECIO_VENTA', 'NOTAS'],
        ['A1', '  Tubo 20 mm  ', 'M', '1.234,56', 'línea 1\r\nlínea 2; con "comillas"'],
        ['A2', 'Codo', ' UD ', '12,5', ''],
        ['A3', 'Sin precio', 'UD', '', ''],
        ['A4', 'Precio raro', 'UD', 'doce euros', ''],
      ];
      const report = await importFile(company.id, 'articulos', csv(rows));
      assert.equal(report.status, 'succeeded');
      assert.equal(report.warnings.count, 1);
      assert.equal(report.warnings.items[0]!.line, 6, 'physical line: A1 spans two');
      const items = (await list(key, 'articulos')).items;
      const a1 = items.find((i: { id_erp: string }) => i.id_erp === 'A1');
      assert.deepEqual(a1.data, { CODIGO: 'A1', DESCRIPCION: '  Tubo 20 mm  ', UNIDAD_MEDIDA: 'M', PRECIO_VENTA: '1.234,56', NOTAS: 'línea 1\r\nlínea 2; con "comillas"' });
      assert.deepEqual([a1.codigo, a1.nombre, a1.unidad, a1.precio], ['A1', 'Tubo 20 mm', 'M', 1234.56]);
      assert.equal(items.find((i: { id_erp: string }) => i.id_erp === 'A2').unidad, 'UD');
      assert.equal(items.find((i: { id_erp: string }) => i.id_erp === 'A3').precio, null);
      const a4 = items.find((i: { id_erp: string }) => i.id_erp === 'A4');
      assert.equal(a4.precio, null);
      assert.equal(a4.data.PRECIO_VENTA, 'doce euros');

      await store.setMapping(company.id, 'articulos', { nombre: 'NOTAS' });
      await importFile(company.id, 'articulos', csv(rows));
      const remapped = (await list(key, 'articulos')).items.find((i: { id_erp: string }) => i.id_erp === 'A1');
      assert.equal(remapped.nombre, 'línea 1\r\nlínea 2; con "comillas"');
    });

    test('dates of notices are normalised to YYYY-MM-DD', async () => {
      const { company, key } = await companyWithKey(store, 'dates');
      const report = await importFile(
        company.id,
        'avisos-correctivo',
        csv([
          ['CODIGO', 'FECHA', 'CLIENTE', 'OBRA', 'DESCRIPCION', 'ESTADO', 'PRIORIDAD'],
          ['AV1', '03/04/2024 16:15:55', 'C1', '', 'Fuga', 'ABIERTO', 'ALTA'],
          ['AV2', '2024-12-31', 'C1', 'OB1', 'Ruido', 'CERRADO', 'BAJA'],
          ['AV3', '31/02/2024', 'C1', '', 'Fecha imposible', 'ABIERTO', 'MEDIA'],
        ]),
      );
      assert.equal(report.warnings.count, 1);
      const items = (await list(key, 'avisos-correctivo')).items;
      assert.deepEqual(items.map((i: { fecha: string | null }) => i.fecha), ['2024-04-03', '2024-12-31', null]);
      assert.equal(items[0].obra_id_erp, null);
      assert.equal(items[1].obra_id_erp, 'OB1');
    });

    const badFiles: [string, Buffer, RegExp, number | null][] = [
      ['a ragged row', csv([CSV_CUSTOMER_HEADER, ['C1', 'a', 'b', 'c', 'd', 'e', 'f'], ['C2', 'short']]), /line 3/i, 3],
      ['a duplicate id_erp', customersCsv(5, undefined, ['C1', 'C2', 'C3', 'C2', 'C5']), /"C2" on line 6 \(first on line 4\)/, 6],
      ['an empty header name', csv([['CODIGO', '', 'NOMBRE'], ['C1', 'x', 'y']]), /empty/i, 1],
      ['a duplicate header name', csv([['CODIGO', 'NOMBRE', 'NOMBRE'], ['C1', 'x', 'y']]), /"NOMBRE"/, 1],
      ['no id column', csv([['NOMBRE', 'CIF'], ['x', 'y']]), /id_erp/, null],
      ['undecodable bytes', Buffer.concat([Buffer.from('\ufeffCODIGO;NOMBRE\r\nC1;ok\r\nC2;'), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from('\r\n')]), /line 3/i, 3],
      ['an empty file', Buffer.alloc(0), /empty/i, null],
      // Issue 18, point 2: a UTF-8 export with one Windows-1252 byte was read whole as Windows-1252.
      [
        'a UTF-8 file with one Windows-1252 byte (mixed encodings)',
        Buffer.concat([Buffer.from('CODIGO;01_NOMBRE_COMERCIAL\r\nC1;Ferretería Ibáñez\r\n', 'utf8'), Buffer.from('C2;Mart\xedn\r\n', 'latin1')]),
        /^Line 3 holds the byte 0xED, which is not UTF-8, but line 2 holds UTF-8 text/,
        3,
      ],
      ['a Windows-1252 file holding 0x81', Buffer.from('CODIGO;01_NOMBRE_COMERCIAL\r\nC1;Espa\xf1a\r\nC2;\x81\r\n', 'latin1'), /^Line 3 holds the byte 0x81, which has no character in Windows-1252/, 3],
      ['another kind’s export', csv([['CODIGO', 'PRECIO_VENTA', 'UNIDAD_MEDIDA'], ['A1', '1', 'M']]), /another kind|no column/i, null],
      ['an empty id_erp', csv([CSV_CUSTOMER_HEADER, ['C1', 'a', 'b', 'c', 'd', 'e', 'f'], ['  ', 'a', 'b', 'c', 'd', 'e', 'f']]), /line 3 has an empty id_erp/i, 3],
    ];
    for (const [what, bytes, message, line] of badFiles) {
      test(`${what} fails the import, naming the problem, and the previous data keeps serving`, async () => {
        const { company, key } = await companyWithKey(store, `bad-${badFiles.findIndex((b) => b[0] === what)}`);
        await importFile(company.id, 'clientes', customersCsv(30));
        const before = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key) });
        const report = await importFile(company.id, 'clientes', bytes);
        assert.equal(report.status, 'failed');
        assert.ok(report.error, 'the report carries the error');
        assert.match(report.error!.message, message);
        if (line !== null) assert.equal(report.error!.line, line);
        const job = (await store.listImports(company.id, 'clientes', 1))[0]!;
        assert.equal(job.status, 'failed');
        assert.equal(job.error, report.error!.message);
        const afterFail = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key) });
        assert.deepEqual(afterFail.body, before.body, 'byte-identical');
        assert.equal(afterFail.headers.etag, before.headers.etag);
      });
    }

    test('encodings and delimiters: UTF-16 with BOM, UTF-8, Windows-1252 and tab-separated files all import', async () => {
      const { company, key } = await companyWithKey(store, 'encodings');
      const text = 'CODIGO\t01_NOMBRE_COMERCIAL\tEMAIL\nC1\tPeñas € Ángel\tx@example.com\n';
      const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
      const r = await importFile(company.id, 'clientes', utf16);
      assert.equal(r.status, 'succeeded', r.error?.message);
      assert.equal(r.delimiter, '\t');
      assert.equal((await list(key)).items[0].nombre, 'Peñas € Ángel');
      const win = Buffer.from([...Buffer.from('CODIGO|01_NOMBRE_COMERCIAL\r\nC1|'), 0x80, 0x20, 0xd1, 0xe1]);
      const r2 = await importFile(company.id, 'clientes', win);
      assert.equal(r2.encoding, 'windows-1252');
      assert.equal((await list(key)).items[0].nombre, '€ Ñá');
    });

    test('imports of one company and kind run one at a time, in order', async () => {
      const { company, key } = await companyWithKey(store, 'queue');
      const jobs = [];
      for (let v = 1; v <= 3; v++) {
        jobs.push(await store.createImport({ companyId: company.id, kind: 'clientes', filename: `v${v}.csv`, source: 'test' }, body(customersCsv(10, () => `v${v}`)), 1 << 30));
      }
      const first = await store.claimImport('w1');
      assert.equal(first?.id, jobs[0]!.id);
      assert.equal(await store.claimImport('w2'), null, 'the next one waits for the running one');
      await store.failImport(first!.id, 'test', null);
      const w = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
      const order: number[] = [];
      for (let r = await w.runOnce(); r; r = await w.runOnce()) order.push(r.job.id);
      assert.deepEqual(order, [jobs[1]!.id, jobs[2]!.id]);
      assert.ok((await list(key)).items.every((i: { nombre: string }) => i.nombre === 'v3'));
    });

    test('readers during an import see the old snapshot or the new one, never a mix', async () => {
      const { company, key } = await companyWithKey(store, 'flip');
      await importFile(company.id, 'clientes', customersCsv(3000, () => 'old'));
      const job = await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'new.csv', source: 'test' }, body(customersCsv(3000, () => 'new')), 1 << 30);
      let done = false;
      const seen = new Set<string>();
      const readers = Array.from({ length: 4 }, async () => {
        while (!done) {
          const res = await request(`${server.baseUrl}/v1/clientes?limit=1000&offset=1000`, { headers: bearer(key) });
          assert.equal(res.status, 200, res.body.toString());
          const body = res.json();
          const names = new Set(body.items.map((i: { nombre: string }) => i.nombre));
          assert.equal(names.size, 1, 'one page, one snapshot');
          assert.equal(body.total, 3000);
          seen.add([...names][0] as string);
        }
      });
      const applied = (await worker.runOnce())!;
      assert.equal(applied.job.id, job.id);
      // Until a reader has seen the new snapshot (PostgreSQL: once the notification is read), however long that takes.
      await waitUntil('a reader to see the new snapshot', () => seen.has('new'));
      done = true;
      await Promise.all(readers);
      assert.deepEqual(new Set((await list(key)).items.map((i: { nombre: string }) => i.nombre)), new Set(['new']));
    });

    test('an upload over the maximum size stores nothing', async () => {
      const { company } = await companyWithKey(store, 'big');
      await assert.rejects(
        store.createImport({ companyId: company.id, kind: 'clientes', filename: 'big.csv', source: 'test' }, body(customersCsv(100)), 1000),
        /larger than the maximum/,
      );
      assert.deepEqual(await store.listImports(company.id), []);
    });

    // Large uploads are parsed in a thread of their own (apply-import.ts); small ones here. Both
    // ways must give the same items, reports and errors: the sample exports, through each.
    test('an upload parsed in its own thread gives the same items, report and errors as in this one', async () => {
      const threaded = new ImportWorker(store, { snapshotRetentionMs: 60_000, threadFromBytes: 0 });
      const run = async (w: ImportWorker, companyId: number, kind: Kind, bytes: Buffer) => {
        await store.createImport({ companyId, kind, filename: 'export.csv', source: 'test' }, body(bytes), 1 << 30);
        return (await w.runOnce())!.report;
      };
      const here = await companyWithKey(store, 'parsed-here');
      const there = await companyWithKey(store, 'parsed-there');
      const strip = (r: ImportReport) => ({ ...r, import_id: 0, duration_ms: 0 });
      const samples: [Kind, string][] = [['clientes', 'clientes'], ['articulos', 'articulos'], ['obras', 'obras'], ['avisos-correctivo', 'avisos-correctivo']];
      for (const [kind, file] of samples) {
        const bytes = readFileSync(new URL(`../../../test/fixtures/csv/samples/${file}.csv`, import.meta.url));
        const a = await run(worker, here.company.id, kind, bytes);
        const b = await run(threaded, there.company.id, kind, bytes);
        assert.equal(a.status, 'succeeded', a.error?.message);
        assert.deepEqual(strip(b), strip(a));
        const items = async (key: string) => (await list(key, kind)).items.map((i: { actualizado_at?: string }) => ({ ...i, actualizado_at: null }));
        assert.deepEqual(await items(there.key), await items(here.key));
      }
      const ragged = csv([CSV_CUSTOMER_HEADER, ...Array.from({ length: 3000 }, (_, i) => [`C${i}`, 'x', '', '', '', '', '']), ['C9', 'x']]);
      const a = await run(worker, here.company.id, 'clientes', ragged);
      const b = await run(threaded, there.company.id, 'clientes', ragged);
      assert.equal(b.error?.code, 'ragged_row');
      assert.deepEqual(strip(b), strip(a));
    });

    // Hashing goes to the half with time to spare (apply-import.ts): the parsing thread in a first
    // import, the writer in a re-import; the thread's young generation is capped on PostgreSQL.
    test('the parsing thread hashes a first import and leaves a re-import to the writer', async () => {
      const { company } = await companyWithKey(store, 'thread-hashing');
      const target = { id: 0, companyId: company.id, kind: 'clientes' as const, filename: 'export.csv', sizeBytes: 0 };
      const young = factory.name === 'postgres' ? { youngGenerationMb: 16 } : {};
      assert.deepEqual(await parsingThreadOptions(store, target, 'sha256'), { ...young, hashHere: 'sha256' });
      assert.equal((await importFile(company.id, 'clientes', customersCsv(3))).status, 'succeeded');
      assert.deepEqual(await parsingThreadOptions(store, target, 'sha256'), young);
    });

    test('a byte that is not UTF-8 after thousands of UTF-8 rows fails the import, parsed here or in its own thread, and nothing is published', async () => {
      const threaded = new ImportWorker(store, { snapshotRetentionMs: 60_000, threadFromBytes: 0 });
      const utf8 = csv([CSV_CUSTOMER_HEADER, ...Array.from({ length: 5000 }, (_, i) => [`C${i}`, `Ferretería Ibáñez ${i}`, '', '', '', '', ''])], { encoding: 'utf-8' });
      const late = Buffer.concat([utf8, Buffer.from('C9999;Mart\xedn;;;;;\r\n', 'latin1')]);
      for (const [label, w] of [['here', worker], ['in its own thread', threaded]] as const) {
        const { company, key } = await companyWithKey(store, `late-byte-${label.replaceAll(' ', '-')}`);
        await importFile(company.id, 'clientes', customersCsv(30));
        const before = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key) });
        await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'late.csv', source: 'test' }, body(late), 1 << 30);
        const report = (await w.runOnce())!.report;
        assert.equal(report.status, 'failed', label);
        assert.deepEqual([report.error?.code, report.error?.line], ['mixed_encodings', 5002], label);
        assert.match(report.error!.message, /^Line 5002 holds the byte 0xED, which is not UTF-8, but line 2 holds UTF-8 text/);
        const afterFail = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key) });
        assert.deepEqual(afterFail.body, before.body, `${label}: the previous data keeps serving`);
      }
    });

    test('a chain of MD5 snapshots (a database from before SHA-256) goes on with MD5: the next import, in this thread or its own, finds its unchanged rows', async () => {
      const file = customersCsv(40);
      // The bodies an import renders for this file, taken from another company's import of it.
      const donor = await companyWithKey(store, 'md5-donor');
      assert.equal((await importFile(donor.company.id, 'clientes', file)).status, 'succeeded');
      assert.equal(await store.nextHashAlgorithm(donor.company.id, 'clientes'), 'sha256');
      const donorId = (await store.liveSnapshotId(donor.company.id, 'clientes'))!;
      const meta = (await store.snapshotMeta(donorId))!;
      const at = meta.timeline[0]!.at;
      const records: StagedRecord[] = (await store.readChunks(donorId, 0, meta.chunkStarts.length - 1))
        .flatMap((c) => itemBodies(c.offsets, c.bytes, at))
        .map((b, k) => {
          const body = Buffer.from(b);
          const idErp = (JSON.parse(finishItem(body, at)) as { id_erp: string }).id_erp;
          return { idErp, body, hash: hashBody(body, 'md5'), line: k + 2 };
        });
      assert.equal(records.length, 40);
      // Another company whose live snapshot was hashed with MD5, as every one was before.
      const { company } = await companyWithKey(store, 'md5-chain');
      const old = await store.writeSnapshot(
        { companyId: company.id, kind: 'clientes', importId: null, at: at - 1000, columns: meta.columns, hashAlgorithm: 'md5' },
        (async function* () {
          yield records;
        })(),
      );
      await store.publishSnapshot(old.snapshotId);
      const threaded = new ImportWorker(store, { snapshotRetentionMs: 60_000, threadFromBytes: 0 });
      for (const w of [worker, threaded]) {
        await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'export.csv', source: 'test' }, body(file), 1 << 30);
        const report = (await w.runOnce())!.report;
        assert.equal(report.status, 'succeeded', report.error?.message);
        assert.deepEqual([report.inserted, report.updated, report.unchanged, report.deleted], [0, 0, 40, 0]);
        assert.equal(await store.nextHashAlgorithm(company.id, 'clientes'), 'md5');
      }
    });

    test('an import prepared while its upload is stored is concluded as the queue would apply it, and only while it still stands', async () => {
      const file = customersCsv(30);
      const strip = (r: ImportReport) => ({ ...r, import_id: 0, duration_ms: 0 });
      const queue = async (companyId: number, bytes: Buffer) =>
        store.createImport({ companyId, kind: 'clientes', filename: 'export.csv', source: 'test' }, body(bytes), 1 << 30);
      const prepare = async (job: { id: number; companyId: number; sizeBytes: number }, bytes: Buffer) =>
        prepareImport(store, { id: job.id, companyId: job.companyId, kind: 'clientes', filename: 'export.csv', sizeBytes: job.sizeBytes }, body(bytes));

      // Used: the same report and items as the queue's own application of the file.
      const plain = await companyWithKey(store, 'prepared-plain');
      await queue(plain.company.id, file);
      const expected = (await worker.runOnce())!.report;
      const used = await companyWithKey(store, 'prepared-used');
      const job = await queue(used.company.id, file);
      const prepared = await prepare(job, file);
      assert.equal(await store.liveSnapshotId(used.company.id, 'clientes'), null, 'not live before it is claimed');
      const ran = (await worker.runOnce(prepared))!;
      assert.equal(ran.prepared, true);
      assert.deepEqual(strip(ran.report), strip(expected));
      assert.equal(await store.liveSnapshotId(used.company.id, 'clientes'), prepared.snapshot.snapshotId);
      const items = async (key: string) => (await list(key)).items.map((i: { actualizado_at?: string }) => ({ ...i, actualizado_at: null }));
      assert.deepEqual(await items(used.key), await items(plain.key));
      const listed = (await store.listImports(used.company.id)).find((j) => j.id === job.id)!;
      assert.deepEqual([listed.status, listed.rowsRead], ['succeeded', 30]);

      // Stale: another import was published meanwhile, or the mapping changed, or another job is claimed.
      const changedFile = customersCsv(30, (i) => (i === 0 ? 'Cambiado' : `Cliente ${i}`));
      // [what happens, what is queued before the prepared import, what happens after it was prepared]
      const cases: [string, (companyId: number) => Promise<unknown>, (companyId: number) => Promise<unknown>][] = [
        // The queue applies an earlier import of the same company and kind first.
        ['an earlier import published meanwhile', (companyId) => queue(companyId, customersCsv(5)), () => worker.runOnce()],
        ['a mapping change', async () => {}, (companyId) => store.setMapping(companyId, 'clientes', { nombre: 'OBSERVACIONES' })],
      ];
      for (const [label, before, meanwhile] of cases) {
        const { company } = await companyWithKey(store, `prepared-${label.replaceAll(' ', '-')}`);
        await queue(company.id, file);
        await worker.runOnce();
        await before(company.id);
        const next = await queue(company.id, changedFile);
        const early = await prepare(next, changedFile);
        // By public id, which is what a client sees.
        const earlyPublicId = (await store.snapshotMeta(early.snapshot.snapshotId))!.publicId;
        await meanwhile(company.id);
        const stale = (await worker.runOnce(early))!;
        assert.equal(stale.job.id, next.id, label);
        assert.equal(stale.prepared, false, label);
        assert.equal(stale.report.status, 'succeeded', label);
        assert.equal(await store.snapshotByPublicId(company.id, 'clientes', earlyPublicId), null, `${label}: the prepared snapshot is discarded`);
        const live = (await store.snapshotMeta((await store.liveSnapshotId(company.id, 'clientes'))!))!;
        assert.notEqual(live.publicId, earlyPublicId, label);
        assert.equal(live.count, 30, label);
      }
      // A prepared import is only ever used for its own job.
      const other = await companyWithKey(store, 'prepared-other');
      const mine = await queue(other.company.id, file);
      const forMine = await prepare(mine, file);
      const ran2 = (await worker.runOnce({ ...forMine, importId: mine.id + 1_000_000 }))!;
      assert.equal(ran2.prepared, false);
      assert.equal(ran2.report.status, 'succeeded');
      await store.discardSnapshot(forMine.snapshot.snapshotId);
    });

    test('a prepared import held by the mass-deletion guard waits, and is confirmed like any other', async () => {
      const { company, key } = await companyWithKey(store, 'prepared-held');
      await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'a.csv', source: 'test' }, body(customersCsv(200)), 1 << 30);
      await worker.runOnce();
      const small = customersCsv(50);
      const job = await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'b.csv', source: 'test' }, body(small), 1 << 30);
      const prepared = await prepareImport(store, { ...job, kind: 'clientes' }, body(small));
      const ran = (await worker.runOnce(prepared))!;
      assert.equal(ran.prepared, true);
      assert.equal(ran.report.status, 'awaiting_confirmation');
      assert.equal((await list(key)).total, 200);
      // Swept or not, a held snapshot stays until its import is decided.
      await store.sweepSnapshots(Date.now());
      await confirmHeldImport(store, company.id, job.id);
      assert.equal((await list(key)).total, 50);
    });

    // Issue 18, point 1: articulos.csv uploaded as obras replaced 80 works with 300 articles whose
    // nombre, cliente_id_erp and estado were all null (80 < 100: the mass-deletion guard let it through).
    const sample = (kind: Kind) => readFileSync(new URL(`../../../test/fixtures/csv/samples/${kind}.csv`, import.meta.url));

    test('column-drift guard, live data: a header sharing fewer than half of its names is held whatever the counts; confirm applies it', async () => {
      const { company, key } = await companyWithKey(store, 'drift-live');
      assert.equal((await importFile(company.id, 'obras', sample('obras'))).status, 'succeeded');
      const before = await request(`${server.baseUrl}/v1/obras?limit=1000`, { headers: bearer(key) });
      const held = await importFile(company.id, 'obras', sample('articulos'), 'articulos.csv');
      assert.equal(held.status, 'awaiting_confirmation');
      assert.equal(held.guard, null, 'not the mass-deletion guard: 80 records is under its 100');
      const drift = held.column_drift!;
      assert.deepEqual([drift.shared, drift.columns, drift.live_columns, drift.appeared_count, drift.disappeared_count], [6, 60, 50, 54, 44]);
      assert.ok(drift.appeared.includes('PRECIO_VENTA') && drift.disappeared.includes('NOMBRE') && drift.disappeared.includes('CLIENTE'));
      assert.ok(!drift.appeared.includes('CODIGO') && !drift.disappeared.includes('CODIGO'), 'shared names are in neither list');
      assert.equal((await store.importById(held.import_id))!.status, 'awaiting_confirmation');
      const meanwhile = await request(`${server.baseUrl}/v1/obras?limit=1000`, { headers: bearer(key) });
      assert.deepEqual(meanwhile.body, before.body, 'the works keep serving');
      await confirmHeldImport(store, company.id, held.import_id);
      assert.equal((await list(key, 'obras')).total, 300);

      // Exactly half of the names shared: applied; fewer: held, even with every record the same.
      const header = (names: string[]) => csv([names, ['O1', ...names.slice(1).map(() => 'x')]]);
      const { company: other } = await companyWithKey(store, 'drift-half');
      await importFile(other.id, 'obras', header(['CODIGO', 'NOMBRE', 'X1', 'X2']));
      assert.equal((await importFile(other.id, 'obras', header(['CODIGO', 'NOMBRE', 'Y1', 'Y2']))).status, 'succeeded');
      const fewer = await importFile(other.id, 'obras', header(['CODIGO', 'NOMBRE', 'Z1', 'Z2', 'Z3']));
      assert.equal(fewer.status, 'awaiting_confirmation');
      assert.deepEqual([fewer.deleted, fewer.column_drift!.appeared, fewer.column_drift!.disappeared], [0, ['Z1', 'Z2', 'Z3'], ['Y1', 'Y2']]);
    });

    test('column-drift guard, no data yet: a header another kind fits clearly better is held, saying which kind; reject keeps nothing', async () => {
      const { company, key } = await companyWithKey(store, 'drift-first');
      const held = await importFile(company.id, 'obras', sample('articulos'), 'articulos.csv');
      assert.equal(held.status, 'awaiting_confirmation');
      assert.equal(held.column_drift, null);
      assert.equal(held.other_kind!.kind, 'articulos');
      assert.deepEqual(held.other_kind!.fits.articulos, { fed: 3, unfed: 0 });
      assert.deepEqual(held.other_kind!.fits.obras, { fed: 1, unfed: 3 });
      assert.equal(await store.liveSnapshotId(company.id, 'obras'), null, 'nothing published');
      await rejectHeldImport(store, company.id, held.import_id);
      assert.equal(await store.liveSnapshotId(company.id, 'obras'), null);
      assert.equal((await request(`${server.baseUrl}/v1/obras`, { headers: bearer(key) })).json().total, 0);
      // Each sample export as its own kind is not held, nor a header that fits two kinds alike
      // (works' and notices' DESCRIPCION, CLIENTE, ESTADO).
      for (const kind of ['clientes', 'articulos', 'obras', 'avisos-correctivo'] as const) {
        const { company: own } = await companyWithKey(store, `drift-own-${kind}`);
        assert.equal((await importFile(own.id, kind, sample(kind))).status, 'succeeded', kind);
      }
      const alike = csv([['CODIGO', 'CLIENTE', 'DESCRIPCION', 'ESTADO'], ['N1', 'C1', 'Fuga', 'abierto']]);
      for (const kind of ['obras', 'avisos-correctivo'] as const) {
        const { company: own } = await companyWithKey(store, `drift-alike-${kind}`);
        assert.equal((await importFile(own.id, kind, alike)).status, 'succeeded', kind);
      }
    });

    test('a prepared import held by the column-drift guard waits, and is confirmed like any other', async () => {
      const { company, key } = await companyWithKey(store, 'prepared-drift');
      const file = sample('articulos');
      const job = await store.createImport({ companyId: company.id, kind: 'obras', filename: 'articulos.csv', source: 'test' }, body(file), 1 << 30);
      const prepared = await prepareImport(store, { ...job, kind: 'obras' }, body(file));
      const ran = (await worker.runOnce(prepared))!;
      assert.equal(ran.prepared, true);
      assert.deepEqual([ran.report.status, ran.report.other_kind?.kind], ['awaiting_confirmation', 'articulos']);
      await confirmHeldImport(store, company.id, job.id);
      assert.equal((await list(key, 'obras')).total, 300);
      // With data now, obras.csv shares too few names with the articles' header.
      const works = sample('obras');
      const next = await store.createImport({ companyId: company.id, kind: 'obras', filename: 'obras.csv', source: 'test' }, body(works), 1 << 30);
      const ran2 = (await worker.runOnce(await prepareImport(store, { ...next, kind: 'obras' }, body(works))))!;
      assert.equal(ran2.prepared, true);
      assert.equal(ran2.report.status, 'awaiting_confirmation');
      assert.equal(ran2.report.column_drift!.shared, 6);
    });

    test('the report is kept with the import', async () => {
      const { company } = await companyWithKey(store, 'kept');
      const report = await importFile(company.id, 'clientes', customersCsv(3));
      const job = (await store.importById(report.import_id))!;
      assert.equal(job.status, 'succeeded');
      assert.equal((job.report as ImportReport).inserted, 3);
      assert.ok(job.finishedAt);
    });

    test('after publication, a worker with no import to apply writes a gzip segment for every chunk, once; gzip pages gunzip to the identity body', async () => {
      const { company, key } = await companyWithKey(store, 'segments');
      const segmented = new Map<number, number>();
      const own = new ImportWorker(store, { snapshotRetentionMs: 60_000, events: { segmented: (id, stats) => segmented.set(id, stats.chunks) } });
      await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'wide.csv', source: 'test' }, body(wideCustomersCsv(300, 40)), 1 << 30);
      assert.equal((await own.runOnce())?.report.status, 'succeeded');
      const meta = (await store.snapshotMeta((await store.liveSnapshotId(company.id, 'clientes'))!))!;
      const count = meta.chunkStarts.length;
      assert.ok(count >= 3, `${count} chunks`);
      // Applying an import makes no segments (`mirador import` ends at publication).
      assert.deepEqual(await store.readSegments(meta.id, 0, count - 1), []);
      // Other tests' snapshots wait for their pass too: every one is made, each once.
      while (await own.segmentOnce());
      assert.equal(segmented.get(meta.id), count);
      assert.equal(await own.segmentOnce(), false, 'no pass is made twice');
      const segments = await store.readSegments(meta.id, 0, count - 1);
      const chunks = await store.readChunks(meta.id, 0, count - 1);
      assert.deepEqual(segments.map((s) => s.chunkNo), chunks.map((c) => c.chunkNo));
      for (const [i, s] of segments.entries()) {
        // Each is compressed against the end of the chunk before it and the comma between them.
        const prev = chunks[i - 1]?.bytes;
        assert.equal(s.contextLength, prev ? Math.min(prev.length + 1, 8192) : 0);
        const dictionary = prev ? Buffer.concat([prev.subarray(prev.length - (s.contextLength - 1)), Buffer.from(',')]) : undefined;
        assert.deepEqual(inflateRawSync(s.deflate, { finishFlush: constants.Z_SYNC_FLUSH, ...(dictionary ? { dictionary } : {}) }), chunks[i]!.bytes);
        assert.equal(s.crc32, crc32(chunks[i]!.bytes));
      }
      for (const query of ['limit=1000', 'limit=100&offset=150', 'limit=7&offset=3']) {
        const url = `${server.baseUrl}/v1/clientes?${query}`;
        const plain = await request(url, { headers: bearer(key) });
        const gz = await request(url, { headers: { ...bearer(key), 'accept-encoding': 'gzip' } });
        assert.equal(gz.headers['content-encoding'], 'gzip');
        assert.equal(gunzipSync(gz.body).toString('utf8'), plain.text(), query);
      }
    });

    test('a segment pass stopped midway is given back, and made whole by the next worker', async () => {
      const { company } = await companyWithKey(store, 'segments-stop');
      const own = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
      await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'wide.csv', source: 'test' }, body(wideCustomersCsv(3000, 40)), 1 << 30);
      assert.equal((await own.runOnce())?.report.status, 'succeeded');
      const live = (await store.liveSnapshotId(company.id, 'clientes'))!;
      const count = (await store.snapshotMeta(live))!.chunkStarts.length;
      assert.ok(count > 64, `${count} chunks: more than one batch`);
      // Other tests' passes first, so that the next claim is this snapshot's.
      while ((await store.claimSegmentPass()) !== null);
      await store.releaseSegmentPass(live);
      const stopping = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
      const pass = stopping.segmentOnce();
      stopping.stopClaiming(); // a shutdown, as the pass begins
      assert.equal(await pass, true);
      assert.ok((await store.readSegments(live, 0, count - 1)).length < count, 'stopped midway');
      const next = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
      assert.equal(await next.segmentOnce(), true, 'the pass was given back');
      assert.equal((await store.readSegments(live, 0, count - 1)).length, count);
      assert.equal(await next.segmentOnce(), false);
    });

    test('a segment pass that fails is reported and not made again; the import stays published and reads compress instead', async () => {
      const { company, key } = await companyWithKey(store, 'segments-fail');
      // The real store, but every segment write fails (a full disk, a lost connection).
      const failing = new Proxy(store, {
        get(target, prop, receiver) {
          if (prop === 'writeSegments') return async () => { throw new Error('no room for segments'); };
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const errors: unknown[] = [];
      const own = new ImportWorker(failing, { snapshotRetentionMs: 60_000, events: { error: (err) => errors.push(err) } });
      const job = await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'wide.csv', source: 'test' }, body(wideCustomersCsv(200, 40)), 1 << 30);
      const done = await own.runOnce();
      while (await own.segmentOnce());
      assert.equal(await own.segmentOnce(), false, 'a failed pass is not retried');
      assert.equal(done?.report.status, 'succeeded');
      assert.equal((await store.importById(job.id))?.status, 'succeeded');
      const live = (await store.liveSnapshotId(company.id, 'clientes'))!;
      assert.equal((await store.importById(job.id))?.snapshotId, live, 'published');
      assert.match(String((errors[0] as Error)?.message), /no room for segments/);
      assert.deepEqual(await store.readSegments(live, 0, 100), []);
      const url = `${server.baseUrl}/v1/clientes?limit=150&offset=20`;
      const plain = await request(url, { headers: bearer(key) });
      const gz = await request(url, { headers: { ...bearer(key), 'accept-encoding': 'gzip' } });
      assert.equal(plain.json().items.length, 150);
      assert.equal(gunzipSync(gz.body).toString('utf8'), plain.text());
    });
  });
}
