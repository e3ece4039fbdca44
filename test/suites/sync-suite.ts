/**
 * Issue 9 on every store: tombstones with include_deleted, pinned snapshots,
 * the mass-deletion guard and /v1/estado.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { confirmHeldImport, rejectHeldImport } from '../../src/imports/held-imports.js';
import { writeGuard } from '../../src/imports/deletion-guard.js';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { customersCsv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { customer, CUSTOMER_COLUMNS } from '../helpers/records.js';
import type { StoreFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const DAY = 86_400_000;
const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `C${String(i + from).padStart(6, '0')}`);

export function syncSuite(factory: StoreFactory) {
  describe(`incremental sync (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    before(async () => {
      ({ store, cleanup } = await factory.create());
      server = await startServer(store, { RATE_LIMIT_PER_MINUTE: '100000' });
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });
    const get = async (key: string, path: string) => request(`${server.baseUrl}${path}`, { headers: bearer(key) });
    const load = (companyId: number, at: number, list: string[], name = (id: string) => `Cliente ${id}`) =>
      replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at }, list.map((id, i) => customer(id, name(id), i + 2)));

    test('include_deleted adds tombstones in list order, counted in total; re-added records are items again', async () => {
      const { company, key } = await companyWithKey(store, 'tombs');
      const now = Date.now();
      const t1 = now - 3 * DAY;
      const t2 = now - 2 * DAY;
      const t3 = now - 1 * DAY;
      await load(company.id, t1, ids(10));
      // t2: C000002 and C000003 removed, C000005 changed.
      await load(company.id, t2, ids(10).filter((i) => i !== 'C000002' && i !== 'C000003'), (id) => (id === 'C000005' ? 'cambiado' : `Cliente ${id}`));
      // t3: C000002 back, C000004 removed.
      await load(company.id, t3, ids(10).filter((i) => i !== 'C000003' && i !== 'C000004'), (id) => (id === 'C000005' ? 'cambiado' : `Cliente ${id}`));

      const plain = (await get(key, '/v1/clientes')).json();
      assert.equal(plain.total, 8);
      assert.ok(plain.items.every((i: { eliminado?: boolean }) => i.eliminado === undefined), 'nothing changes without the parameter');

      const all = (await get(key, '/v1/clientes?include_deleted=true')).json();
      assert.equal(all.total, 10);
      const order = all.items.map((i: { id_erp: string; eliminado?: boolean }) => `${i.id_erp}${i.eliminado ? ' x' : ''}`);
      assert.deepEqual(order, [
        'C000001', 'C000006', 'C000007', 'C000008', 'C000009', 'C000010', // unchanged since t1
        'C000003 x', 'C000005', // t2: removed, changed
        'C000002', 'C000004 x', // t3: back, removed
      ]);
      const tomb = all.items.find((i: { id_erp: string }) => i.id_erp === 'C000004');
      assert.deepEqual(tomb, { id_erp: 'C000004', eliminado: true, actualizado_at: new Date(t3).toISOString() });
      assert.equal(all.items.filter((i: { id_erp: string }) => i.id_erp === 'C000002').length, 1);

      const since = (await get(key, `/v1/clientes?include_deleted=true&updated_since=${new Date(t2).toISOString()}`)).json();
      assert.equal(since.total, 4);
      assert.deepEqual(since.items.map((i: { id_erp: string }) => i.id_erp), ['C000003', 'C000005', 'C000002', 'C000004']);

      // Any page size and offset gives the same sequence, each element once — with or
      // without a filter (from t2 the first element is a tombstone).
      const sinceT2 = `&updated_since=${new Date(t2).toISOString()}`;
      for (const [filter, expected] of [['', order], [sinceT2, ['C000003 x', 'C000005', 'C000002', 'C000004 x']]] as const) {
        for (const limit of [1, 2, 3, 7]) {
          const seen: string[] = [];
          for (let offset = 0; ; ) {
            const page = (await get(key, `/v1/clientes?include_deleted=true&limit=${limit}&offset=${offset}${filter}`)).json();
            seen.push(...page.items.map((i: { id_erp: string; eliminado?: boolean }) => `${i.id_erp}${i.eliminado ? ' x' : ''}`));
            assert.equal(page.total, expected.length);
            if (!page.has_more) break;
            offset = page.next_offset;
          }
          assert.deepEqual(seen, expected, `limit=${limit}${filter}`);
        }
      }
      const tag = (await get(key, '/v1/clientes')).headers.etag;
      assert.notEqual((await get(key, '/v1/clientes?include_deleted=true')).headers.etag, tag);
      assert.equal((await get(key, '/v1/clientes?include_deleted=yes')).status, 400);
    });

    test('tombstones older than the retention are dropped', async () => {
      const { company, key } = await companyWithKey(store, 'old-tombs');
      const now = Date.now();
      await load(company.id, now - 200 * DAY, ids(3));
      await load(company.id, now - 100 * DAY, ids(2)); // removes C000003, 100 days ago
      await load(company.id, now - 1000, ids(1)); // removes C000002 now; C000003's tombstone is past 90 days
      const body = (await get(key, '/v1/clientes?include_deleted=true')).json();
      assert.deepEqual(body.items.map((i: { id_erp: string }) => i.id_erp), ['C000001', 'C000002']);
      assert.equal(body.items[1].eliminado, true);
    });

    test('snapshot=<id> reads the same version while imports land; a full download racing imports sees each first-version record once', async () => {
      const { company, key } = await companyWithKey(store, 'pinned');
      await load(company.id, Date.now() - 10_000, ids(95), () => 'v1');
      const first = (await get(key, '/v1/clientes?limit=10')).json();
      const snapshot = first.snapshot;
      const seen: string[] = [...first.items.map((i: { id_erp: string; nombre: string }) => `${i.id_erp}:${i.nombre}`)];
      let offset = first.next_offset;
      let round = 0;
      while (true) {
        // An import lands between every two pages: renames all, removes some, adds others.
        round++;
        await load(company.id, Date.now() - 5000 + round, ids(95 - round, round * 3), () => `v${round + 1}`);
        const page = (await get(key, `/v1/clientes?limit=10&offset=${offset}&snapshot=${snapshot}`)).json();
        assert.equal(page.snapshot, snapshot);
        assert.equal(page.total, 95);
        seen.push(...page.items.map((i: { id_erp: string; nombre: string }) => `${i.id_erp}:${i.nombre}`));
        if (!page.has_more) break;
        offset = page.next_offset;
      }
      assert.deepEqual(seen, ids(95).map((id) => `${id}:v1`), 'exactly the first version, each record once');
      const live = (await get(key, '/v1/clientes?limit=1')).json();
      assert.notEqual(live.snapshot, snapshot);
    });

    test('an unknown or expired snapshot is 410 snapshot_expired, telling the client to start over', async () => {
      const { company, key } = await companyWithKey(store, 'expired');
      await load(company.id, Date.now() - 2000, ids(3));
      const old = (await get(key, '/v1/clientes')).json().snapshot;
      await load(company.id, Date.now() - 1000, ids(4));
      const unknown = await get(key, '/v1/clientes?snapshot=0123456789abcdef');
      assert.equal(unknown.status, 410);
      assert.equal(unknown.json().error, 'snapshot_expired');
      assert.match(unknown.json().message, /start .*over/i);
      assert.equal((await get(key, `/v1/clientes?snapshot=${old}`)).status, 200, 'kept for the retention period');
      const strict = await startServer(store, { SNAPSHOT_RETENTION_SECONDS: '0' });
      try {
        await new Promise((r) => setTimeout(r, 5));
        const gone = await request(`${strict.baseUrl}/v1/clientes?snapshot=${old}`, { headers: bearer(key) });
        assert.equal(gone.status, 410);
      } finally {
        await strict.close();
      }
      // Another company's snapshot id is unknown here.
      const other = await companyWithKey(store, 'expired-other');
      assert.equal((await get(other.key, `/v1/clientes?snapshot=${old}`)).status, 410);
      assert.equal((await get(key, '/v1/clientes?snapshot=not%20valid!')).status, 400);
    });

    test('the mass-deletion guard holds a large removal until confirmed, and a rejection keeps the old data', async () => {
      const { company, key } = await companyWithKey(store, 'guarded');
      const worker = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
      const upload = async (csv: Buffer) => {
        async function* body() {
          yield csv;
        }
        await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'x.csv', source: 'test' }, body(), 1 << 30);
        return (await worker.runOnce())!;
      };
      assert.equal((await upload(customersCsv(600))).report.status, 'succeeded');
      // 150 of 600 (25%) removed: over 20% and over 100 → held.
      const held = await upload(customersCsv(450));
      assert.equal(held.report.status, 'awaiting_confirmation');
      assert.equal(held.report.deleted, 150);
      assert.equal(held.report.deleted_examples.length, 10);
      assert.deepEqual(held.report.guard, { would_remove: 150, of: 600, min_records: 100, max_fraction: 0.2 });
      assert.equal((await store.importById(held.job.id))!.status, 'awaiting_confirmation');
      assert.equal((await get(key, '/v1/clientes?limit=1')).json().total, 600, 'the previous snapshot keeps serving');
      // A later upload waits behind the held one.
      async function* later() {
        yield customersCsv(600);
      }
      const queued = await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'later.csv', source: 'test' }, later(), 1 << 30);
      assert.equal(await worker.runOnce(), null);
      await confirmHeldImport(store, company.id, held.job.id);
      assert.equal((await store.importById(held.job.id))!.status, 'succeeded');
      const afterConfirm = (await get(key, '/v1/clientes?limit=1&include_deleted=true')).json();
      assert.equal(afterConfirm.total, 600, '450 records and 150 tombstones');
      assert.equal((await get(key, '/v1/clientes?limit=1')).json().total, 450);
      assert.equal((await worker.runOnce())!.job.id, queued.id);
      assert.equal((await get(key, '/v1/clientes?limit=1')).json().total, 600);

      const again = await upload(customersCsv(100));
      assert.equal(again.report.status, 'awaiting_confirmation');
      await rejectHeldImport(store, company.id, again.job.id);
      assert.equal((await store.importById(again.job.id))!.status, 'rejected');
      assert.equal((await get(key, '/v1/clientes?limit=1')).json().total, 600);
      await assert.rejects(rejectHeldImport(store, company.id, again.job.id), /not awaiting confirmation/);
      const stranger = await companyWithKey(store, 'guard-stranger');
      await assert.rejects(confirmHeldImport(store, stranger.company.id, again.job.id), /no import/);

      // Thresholds are per company, and the guard can be turned off.
      await writeGuard(store, company.id, { enabled: true, minRecords: 5, maxFraction: 0.01 });
      assert.equal((await upload(customersCsv(590))).report.status, 'awaiting_confirmation');
      const stuck = (await store.listImports(company.id, 'clientes', 1))[0]!;
      await rejectHeldImport(store, company.id, stuck.id);
      await writeGuard(store, company.id, { enabled: false, minRecords: 100, maxFraction: 0.2 });
      assert.equal((await upload(customersCsv(10))).report.status, 'succeeded');
      assert.equal((await get(key, '/v1/clientes?limit=1')).json().total, 10);
    });

    test('/v1/estado: per kind the record count, the last import time and its snapshot', async () => {
      const { company, key } = await companyWithKey(store, 'estado');
      await load(company.id, Date.now() - 1000, ids(7));
      const res = await get(key, '/v1/estado');
      assert.equal(res.status, 200);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['ok', 'kinds']);
      assert.deepEqual(Object.keys(body.kinds), ['clientes', 'articulos', 'obras', 'avisos-correctivo']);
      assert.equal(body.kinds.clientes.total, 7);
      assert.ok(Date.now() - Date.parse(body.kinds.clientes.importado_at) < 60_000);
      assert.equal(body.kinds.clientes.snapshot, (await get(key, '/v1/clientes')).json().snapshot);
      assert.deepEqual(body.kinds.obras, { total: 0, importado_at: null, snapshot: null });
      assert.equal((await request(`${server.baseUrl}/v1/estado`)).status, 401);
      const sandbox = (await request(`${server.baseUrl}/v1/sandbox/estado`)).json();
      assert.equal(sandbox.sandbox, true);
      assert.ok(sandbox.kinds.clientes.total >= 25);
      assert.match(sandbox.kinds.obras.importado_at, /^2026-/);
    });
  });
}
