/**
 * Contract §1.2–§1.6 over real HTTP: item shape, ordering, paging, query
 * parameters, envelopes and company isolation. Run once per store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { bearer, request } from '../helpers/http.js';
import { customer, customers, CUSTOMER_COLUMNS, range } from '../helpers/records.js';
import type { StoreFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const T1 = Date.parse('2026-01-10T08:00:00.000Z');
const T2 = Date.parse('2026-02-20T09:30:00.500Z');

export function apiReadSuite(factory: StoreFactory) {
  describe(`API reads (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let keyA: string;
    let keyB: string;
    let companyA: number;
    const get = (path: string, key = keyA, headers: Record<string, string> = {}) =>
      request(server.baseUrl + path, { headers: { ...bearer(key), ...headers } });

    before(async () => {
      ({ store, cleanup } = await factory.create());
      const a = await companyWithKey(store, 'acme');
      const b = await companyWithKey(store, 'beta');
      keyA = a.key;
      keyB = b.key;
      companyA = a.company.id;
      // 250 customers at T1, then an import at T2 changes 3 and adds 2.
      const first = customers(range(250));
      await replaceRecords(store, { companyId: a.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: T1 }, first);
      const second = first.map((r) => r);
      second[5] = customer('C000006', 'Renamed Six');
      second[100] = customer('C000101', 'Renamed 101');
      second[7] = customer('C000008', 'Renamed Eight');
      second.push(customer('C000251', 'New 251'), customer('C000000', 'New zero'));
      await replaceRecords(store, { companyId: a.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: T2 }, second);
      // Company B has the same ids with other content, and one id A lacks.
      await replaceRecords(
        store,
        { companyId: b.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: T1 },
        [customer('C000001', 'Beta One'), customer('C000002', 'Beta Two'), customer('BETA-ONLY', 'Beta only')],
      );
      server = await startServer(store);
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    test('an item has exactly the highlighted fields, data and actualizado_at, in order', async () => {
      const res = await get('/v1/clientes/C000001');
      assert.equal(res.status, 200);
      const raw = res.text();
      assert.ok(raw.startsWith('{"ok":true,"item":{"id_erp":"C000001","nombre":"Cliente C000001","cif":'), raw.slice(0, 120));
      const { item } = res.json();
      assert.deepEqual(Object.keys(item), ['id_erp', 'nombre', 'cif', 'email', 'telefono', 'direccion', 'data', 'actualizado_at']);
      assert.deepEqual(Object.keys(item.data), CUSTOMER_COLUMNS);
      // data keeps cells exactly (padding included); highlighted fields are trimmed.
      assert.equal(item.data['01_NOMBRE_COMERCIAL'], ' Cliente C000001 ');
      assert.equal(item.data.OBSERVACIONES, '');
      assert.equal(item.actualizado_at, '2026-01-10T08:00:00.000Z');
    });

    test('lists are ordered by actualizado_at, then id_erp', async () => {
      const res = await get('/v1/clientes?limit=1000');
      const items = res.json().items as { id_erp: string; actualizado_at: string }[];
      assert.equal(items.length, 252);
      const changed = items.slice(-5).map((i) => i.id_erp);
      assert.deepEqual(changed, ['C000000', 'C000006', 'C000008', 'C000101', 'C000251']);
      assert.ok(items.slice(-5).every((i) => i.actualizado_at === '2026-02-20T09:30:00.500Z'));
      const unchanged = items.slice(0, -5).map((i) => i.id_erp);
      assert.deepEqual(unchanged, [...unchanged].sort());
    });

    test('list envelope: keys, total, has_more and next_offset', async () => {
      const res = await get('/v1/clientes?limit=100&offset=200');
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['ok', 'total', 'limit', 'offset', 'has_more', 'next_offset', 'snapshot', 'items']);
      assert.match(body.snapshot, /^[0-9a-f]{16}$/);
      assert.equal(body.total, 252);
      assert.equal(body.items.length, 52);
      assert.equal(body.has_more, false);
      assert.equal(body.next_offset, 252);
      const firstPage = (await get('/v1/clientes')).json();
      assert.equal(firstPage.limit, 100);
      assert.equal(firstPage.offset, 0);
      assert.equal(firstPage.has_more, true);
      assert.equal(firstPage.next_offset, 100);
      assert.equal(firstPage.items.length, 100);
    });

    test('an offset past the end is 200 with no items', async () => {
      const body = (await get('/v1/clientes?offset=5000')).json();
      assert.deepEqual(
        { total: body.total, n: body.items.length, has_more: body.has_more, next_offset: body.next_offset },
        { total: 252, n: 0, has_more: false, next_offset: 5000 },
      );
    });

    test('following next_offset visits every record exactly once', async () => {
      const seen: string[] = [];
      let offset = 0;
      for (;;) {
        const body = (await get(`/v1/clientes?limit=7&offset=${offset}`)).json();
        seen.push(...body.items.map((i: { id_erp: string }) => i.id_erp));
        if (!body.has_more) break;
        offset = body.next_offset;
      }
      assert.equal(seen.length, 252);
      assert.equal(new Set(seen).size, 252);
    });

    test('updated_since is inclusive and accepts dates, zones and zone-less times', async () => {
      const count = async (since: string) => (await get(`/v1/clientes?updated_since=${encodeURIComponent(since)}`)).json().total;
      assert.equal(await count('2026-02-20T09:30:00.500Z'), 5);
      assert.equal(await count('2026-02-20T09:30:00.501Z'), 0);
      assert.equal(await count('2026-02-20T09:30:00.5004Z'), 0, 'sub-millisecond precision rounds up');
      assert.equal(await count('2026-02-20T10:30:00.500+01:00'), 5);
      assert.equal(await count('2026-02-20T09:30:00.5'), 5, 'no zone means UTC');
      assert.equal(await count('2026-02-20'), 5);
      assert.equal(await count('2026-01-10'), 252);
      assert.equal(await count('2027-01-01'), 0);
      const page = (await get('/v1/clientes?updated_since=2026-02-01&limit=2&offset=1')).json();
      assert.deepEqual(page.items.map((i: { id_erp: string }) => i.id_erp), ['C000006', 'C000008']);
      assert.equal(page.next_offset, 3);
      assert.equal(page.has_more, true);
    });

    const bad: [string, string][] = [
      ['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=-1', 'limit'], ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'], ['limit=', 'limit'], ['limit=1e2', 'limit'], ['limit=%201', 'limit'],
      ['offset=-1', 'offset'], ['offset=abc', 'offset'], ['offset=1.5', 'offset'], ['offset=', 'offset'],
      ['offset=99999999999999999999', 'offset'],
      ['updated_since=yesterday', 'updated_since'], ['updated_since=', 'updated_since'],
      ['updated_since=2026-02-30', 'updated_since'], ['updated_since=2026-13-01', 'updated_since'],
      ['updated_since=2026-01-01T25:00:00Z', 'updated_since'], ['updated_since=1700000000', 'updated_since'],
      ['limit=10&limit=10', 'limit'], ['offset=1&offset=2', 'offset'], ['updated_since=2026-01-01&updated_since=2026-01-02', 'updated_since'],
    ];
    for (const [query, param] of bad) {
      test(`400 invalid_parameter naming "${param}" for ?${query}`, async () => {
        for (const path of ['/v1/clientes', '/v1/sandbox/clientes']) {
          const res = await get(`${path}?${query}`);
          assert.equal(res.status, 400, `${path}?${query}`);
          const body = res.json();
          assert.equal(body.ok, false);
          assert.equal(body.error, 'invalid_parameter');
          assert.match(body.message, new RegExp(`"${param}"`));
        }
      });
    }

    test('unknown parameters are ignored', async () => {
      const res = await get('/v1/clientes?limit=3&foo=bar&page=9');
      assert.equal(res.status, 200);
      assert.equal(res.json().items.length, 3);
    });

    test('detail: envelope, unknown id_erp is 404 naming it, reserved characters decode once', async () => {
      await replaceRecords(
        store,
        { companyId: companyA, kind: 'obras', columns: ['CODIGO', 'NOMBRE'], at: T1 },
        [
          { fields: ['A/1', 'A/1', 'con barra', null, null, null], cells: ['A/1', 'con barra'], line: 2 },
          { fields: ['50%', '50%', 'porcentaje', null, null, null], cells: ['50%', 'porcentaje'], line: 3 },
          { fields: ['x%2Fy', 'x%2Fy', 'literal', null, null, null], cells: ['x%2Fy', 'literal'], line: 4 },
          { fields: ['Ñandú ?#', 'Ñandú ?#', 'acentos', null, null, null], cells: ['Ñandú ?#', 'acentos'], line: 5 },
        ],
      );
      const detail = await get('/v1/obras/A%2F1');
      assert.equal(detail.status, 200);
      assert.deepEqual(Object.keys(detail.json()), ['ok', 'item']);
      assert.equal(detail.json().item.id_erp, 'A/1');
      assert.equal((await get('/v1/obras/50%25')).json().item.id_erp, '50%');
      assert.equal((await get('/v1/obras/x%252Fy')).json().item.id_erp, 'x%2Fy');
      assert.equal((await get(`/v1/obras/${encodeURIComponent('Ñandú ?#')}`)).json().item.nombre, 'acentos');
      const missing = await get('/v1/obras/NOPE-1');
      assert.equal(missing.status, 404);
      assert.equal(missing.json().error, 'not_found');
      assert.match(missing.json().message, /NOPE-1/);
    });

    test('a kind never imported lists empty and has no records', async () => {
      const body = (await get('/v1/avisos-correctivo')).json();
      assert.deepEqual(body, { ok: true, total: 0, limit: 100, offset: 0, has_more: false, next_offset: 0, snapshot: null, items: [] });
      assert.equal((await get('/v1/avisos-correctivo/AV1')).status, 404);
    });

    test('a key of company A never reads, counts or detects company B’s records', async () => {
      const a = (await get('/v1/clientes?limit=1000', keyA)).json();
      const b = (await get('/v1/clientes?limit=1000', keyB)).json();
      assert.equal(a.total, 252);
      assert.equal(b.total, 3);
      assert.ok(a.items.every((i: { nombre: string }) => !i.nombre.startsWith('Beta')));
      assert.deepEqual(b.items.map((i: { nombre: string }) => i.nombre).sort(), ['Beta One', 'Beta Two', 'Beta only']);
      assert.equal((await get('/v1/clientes/C000001', keyA)).json().item.nombre, 'Cliente C000001');
      assert.equal((await get('/v1/clientes/C000001', keyB)).json().item.nombre, 'Beta One');
      // B's own id is invisible to A: the same 404 as an id that exists nowhere.
      const hidden = await get('/v1/clientes/BETA-ONLY', keyA);
      const nowhere = await get('/v1/clientes/NOWHERE-1', keyA);
      assert.equal(hidden.status, 404);
      assert.equal(hidden.json().message.replace('BETA-ONLY', 'X'), nowhere.json().message.replace('NOWHERE-1', 'X'));
      assert.equal((await get('/v1/clientes/C000250', keyB)).status, 404);
      assert.equal((await get('/v1/obras', keyB)).json().total, 0);
    });

    test('real envelopes carry no sandbox key', async () => {
      assert.equal('sandbox' in (await get('/v1/clientes?limit=1')).json(), false);
      assert.equal('sandbox' in (await get('/v1/clientes/C000001')).json(), false);
    });
  });
}
