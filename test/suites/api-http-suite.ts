/**
 * Contract §1.1, §1.7–§1.10 over real HTTP: authentication, errors, methods,
 * CORS, request ids, caching, compression and the sandbox. Run once per store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { generateCredential } from '../../src/domain/api-keys.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { bearer, request } from '../helpers/http.js';
import { customer, customers, CUSTOMER_COLUMNS, range } from '../helpers/records.js';
import type { StoreFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

export function apiHttpSuite(factory: StoreFactory) {
  describe(`API HTTP rules (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let key: string;
    let prefix: string;
    let companyId: number;
    const url = (path: string) => server.baseUrl + path;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      ({ key, prefix, company: { id: companyId } } = await companyWithKey(store, 'acme'));
      await replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-03-01T00:00:00Z') }, customers(range(30)));
      server = await startServer(store);
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    const expectError = (res: { status: number; headers: Record<string, unknown>; json(): any }, status: number, code: string) => {
      assert.equal(res.status, status);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['ok', 'error', 'message', 'request_id']);
      assert.equal(body.ok, false);
      assert.equal(body.error, code);
      assert.equal(typeof body.message, 'string');
      assert.ok(body.message.length > 10);
      assert.equal(body.request_id, res.headers['x-request-id']);
      return body;
    };

    describe('authentication', () => {
      test('no credentials at all: 401 auth_required with WWW-Authenticate', async () => {
        for (const headers of <Record<string, string>[]>[{}, { authorization: '' }, { 'x-api-key': '' }, { authorization: '  ', 'x-api-key': '' }]) {
          const res = await request(url('/v1/clientes'), { headers });
          expectError(res, 401, 'auth_required');
          assert.equal(res.headers['www-authenticate'], 'Bearer');
        }
      });

      test('Bearer (any case) and X-API-Key both work, alone or together with the same key', async () => {
        for (const headers of <Record<string, string>[]>[
          { authorization: `Bearer ${key}` },
          { authorization: `bearer ${key}` },
          { authorization: `BEARER ${key}` },
          { 'x-api-key': key },
          { authorization: `Bearer ${key}`, 'x-api-key': key },
        ]) {
          assert.equal((await request(url('/v1/clientes?limit=1'), { headers })).status, 200, JSON.stringify(Object.keys(headers)));
        }
      });

      test('invalid credentials: 401 unauthorized', async () => {
        const other = generateCredential('read').token;
        const wrongSecret = key.slice(0, 13) + (key[13] === 'A' ? 'B' : 'A') + key.slice(14);
        const cases: Record<string, string>[] = [
          { authorization: `Bearer ${other}` }, // unknown prefix
          { authorization: `Bearer ${wrongSecret}` },
          { authorization: 'Bearer not-a-key' },
          { authorization: `Basic ${Buffer.from(`user:${key}`).toString('base64')}` },
          { authorization: key }, // no scheme
          { authorization: `Bearer ${key}`, 'x-api-key': other }, // both, different
          { 'x-api-key': `${key}x` },
          { authorization: `Bearer ${key.replace(/^api_/, 'upl_')}` }, // an upload token's shape never reads
        ];
        for (const headers of cases) {
          const res = await request(url('/v1/clientes'), { headers });
          expectError(res, 401, 'unauthorized');
          assert.equal(res.headers['www-authenticate'], 'Bearer');
        }
      });

      test('a revoked key is refused within a second, by the same process or another', async () => {
        const fresh = await companyWithKey(store, 'revokes');
        assert.equal((await request(url('/v1/clientes'), { headers: bearer(fresh.key) })).status, 200);
        // Revoked through the store directly, as another process would.
        await store.revokeCredential(fresh.prefix);
        await new Promise((r) => setTimeout(r, 1000));
        expectError(await request(url('/v1/clientes'), { headers: bearer(fresh.key) }), 401, 'unauthorized');
      });

      test('an upload token cannot read /v1', async () => {
        const token = generateCredential('upload');
        await store.createCredential({ companyId, scope: 'upload', prefix: token.prefix, secretHash: token.secretHash, label: null });
        expectError(await request(url('/v1/clientes'), { headers: bearer(token.token) }), 401, 'unauthorized');
      });

      test('last use is recorded in a batch, not written per request', async () => {
        // A key of its own: the suite's shared key was used by earlier tests, and on a busy
        // machine the 5-second batch may already have written its last use.
        const own = await companyWithKey(store, 'last-use');
        assert.equal((await store.credentialByPrefix(own.prefix))!.lastUsedAt, null);
        await request(url('/v1/clientes?limit=1'), { headers: bearer(own.key) });
        assert.equal((await store.credentialByPrefix(own.prefix))!.lastUsedAt, null, 'no write on the request path');
        await server.app.credentials.flush();
        const used = (await store.credentialByPrefix(own.prefix))!.lastUsedAt;
        assert.ok(used && Date.now() - used.getTime() < 60_000);
      });
    });

    describe('paths, methods and check order', () => {
      test('unknown paths are 404 not_found, even without a key', async () => {
        for (const path of ['/v1/facturas', '/v1/clientes/a/b', '/v2/clientes', '/', '/v1', '/v1/sandbox/facturas']) {
          expectError(await request(url(path)), 404, 'not_found');
        }
      });

      test('other methods: 405 method_not_allowed with Allow, before credentials and bodies', async () => {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
          for (const path of ['/v1/clientes', '/v1/clientes/C000001', '/v1/sandbox/obras', '/v1/sandbox/obras/OB1']) {
            const res = await request(url(path), {
              method,
              headers: { 'content-type': 'application/xml' },
              body: '<x/>',
            });
            expectError(res, 405, 'method_not_allowed');
            assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
          }
        }
        expectError(await request(url('/v1/nothing'), { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }), 404, 'not_found');
      });

      test('credentials are checked before parameters', async () => {
        expectError(await request(url('/v1/clientes?limit=0')), 401, 'auth_required');
      });

      test('HEAD answers like GET without a body', async () => {
        const get = await request(url('/v1/clientes?limit=5'), { headers: bearer(key) });
        const head = await request(url('/v1/clientes?limit=5'), { method: 'HEAD', headers: bearer(key) });
        assert.equal(head.status, 200);
        assert.equal(head.body.length, 0);
        assert.equal(head.headers.etag, get.headers.etag);
        assert.equal(head.headers['content-length'], get.headers['content-length']);
        assert.equal(head.headers['content-type'], get.headers['content-type']);
        assert.equal((await request(url('/v1/clientes'), { method: 'HEAD' })).status, 401);
      });

      test('CORS: preflight names Authorization and X-API-Key; responses allow any origin', async () => {
        const pre = await request(url('/v1/clientes'), {
          method: 'OPTIONS',
          headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
        });
        assert.equal(pre.status, 204);
        assert.equal(pre.headers['access-control-allow-origin'], '*');
        assert.match(String(pre.headers['access-control-allow-headers']), /\bAuthorization\b/);
        assert.match(String(pre.headers['access-control-allow-headers']), /\bX-API-Key\b/);
        assert.match(String(pre.headers['access-control-allow-methods']), /GET/);
        const res = await request(url('/v1/clientes?limit=1'), { headers: { ...bearer(key), origin: 'https://app.example' } });
        assert.equal(res.headers['access-control-allow-origin'], '*');
        assert.match(String(res.headers['access-control-expose-headers']), /ETag/);
      });
    });

    describe('request ids', () => {
      test('every response carries X-Request-Id, matching request_id in errors', async () => {
        const ok = await request(url('/v1/sandbox/clientes?limit=1'));
        assert.match(String(ok.headers['x-request-id']), /^[0-9a-f-]{36}$/);
        const err = await request(url('/v1/clientes'));
        assert.equal(err.json().request_id, err.headers['x-request-id']);
      });

      test('a sane incoming X-Request-Id is echoed; an unsafe one is replaced', async () => {
        const echoed = await request(url('/v1/nope'), { headers: { 'x-request-id': 'trace-123.abc' } });
        assert.equal(echoed.headers['x-request-id'], 'trace-123.abc');
        assert.equal(echoed.json().request_id, 'trace-123.abc');
        for (const bad of ['x'.repeat(500), 'a b', '<script>']) {
          const res = await request(url('/v1/nope'), { headers: { 'x-request-id': bad } });
          assert.notEqual(res.headers['x-request-id'], bad);
          assert.equal(res.json().request_id, res.headers['x-request-id']);
        }
      });
    });

    describe('caching and compression', () => {
      test('real responses: private cache, Vary, strong ETag, 304 after authentication', async () => {
        const res = await request(url('/v1/clientes?limit=10'), { headers: bearer(key) });
        assert.equal(res.headers['cache-control'], 'private, max-age=300');
        assert.equal(res.headers.vary, 'Authorization, X-API-Key, Accept-Encoding');
        const etag = String(res.headers.etag);
        assert.match(etag, /^"[^"]+"$/, 'a strong ETag');
        const again = await request(url('/v1/clientes?limit=10'), { headers: { ...bearer(key), 'if-none-match': etag } });
        assert.equal(again.status, 304);
        assert.equal(again.body.length, 0);
        assert.equal(again.headers.etag, etag);
        // A matching ETag never bypasses authentication.
        expectError(await request(url('/v1/clientes?limit=10'), { headers: { 'if-none-match': etag } }), 401, 'auth_required');
        // Another page has another ETag.
        const other = await request(url('/v1/clientes?limit=11'), { headers: bearer(key) });
        assert.notEqual(other.headers.etag, etag);
        const detail = await request(url('/v1/clientes/C000003'), { headers: bearer(key) });
        const detail304 = await request(url('/v1/clientes/C000003'), { headers: { ...bearer(key), 'if-none-match': `W/"x", ${detail.headers.etag}` } });
        assert.equal(detail304.status, 304);
      });

      test('the ETag changes when an import changes the body, and not when it does not', async () => {
        const own = await companyWithKey(store, 'etags');
        const target = { companyId: own.company.id, kind: 'clientes' as const, columns: CUSTOMER_COLUMNS };
        await replaceRecords(store, { ...target, at: 1_000 }, [customer('A1'), customer('A2')]);
        const list1 = await request(url('/v1/clientes'), { headers: bearer(own.key) });
        const a1 = await request(url('/v1/clientes/A1'), { headers: bearer(own.key) });
        const a2 = await request(url('/v1/clientes/A2'), { headers: bearer(own.key) });
        await replaceRecords(store, { ...target, at: 2_000 }, [customer('A1'), customer('A2', 'Changed')]);
        const list2 = await request(url('/v1/clientes'), { headers: bearer(own.key) });
        const a1Again = await request(url('/v1/clientes/A1'), { headers: bearer(own.key) });
        assert.notEqual(list2.headers.etag, list1.headers.etag);
        assert.notEqual(list2.text(), list1.text());
        assert.equal(a1Again.text(), a1.text());
        assert.equal(a1Again.headers.etag, a1.headers.etag, 'an unchanged record keeps its ETag across imports');
        const stale = await request(url('/v1/clientes'), { headers: { ...bearer(own.key), 'if-none-match': String(list1.headers.etag) } });
        assert.equal(stale.status, 200);
        // A changed record's old ETag is not answered 304 (the live snapshot is read afresh after an import).
        const a2Stale = await request(url('/v1/clientes/A2'), { headers: { ...bearer(own.key), 'if-none-match': String(a2.headers.etag) } });
        assert.equal(a2Stale.status, 200);
        assert.notEqual(a2Stale.headers.etag, a2.headers.etag);
        assert.match(a2Stale.text(), /Changed/);
      });

      test('gzip and brotli, each with its own ETag, decoding to the same bytes', async () => {
        const plain = await request(url('/v1/clientes?limit=30'), { headers: bearer(key) });
        assert.equal(plain.headers['content-encoding'], undefined);
        for (const [accept, encoding, decode] of [
          ['gzip', 'gzip', gunzipSync],
          ['br', 'br', brotliDecompressSync],
          ['gzip, deflate, br', 'br', brotliDecompressSync],
          ['br;q=0.5, gzip;q=1', 'gzip', gunzipSync],
        ] as const) {
          const res = await request(url('/v1/clientes?limit=30'), { headers: { ...bearer(key), 'accept-encoding': accept } });
          assert.equal(res.headers['content-encoding'], encoding, accept);
          assert.deepEqual(decode(res.body), plain.body);
          assert.notEqual(res.headers.etag, plain.headers.etag);
          const cond = await request(url('/v1/clientes?limit=30'), {
            headers: { ...bearer(key), 'accept-encoding': accept, 'if-none-match': String(res.headers.etag) },
          });
          assert.equal(cond.status, 304);
        }
        const identity = await request(url('/v1/clientes?limit=30'), { headers: { ...bearer(key), 'accept-encoding': 'identity, gzip;q=0' } });
        assert.equal(identity.headers['content-encoding'], undefined);
      });

      test('sandbox responses are publicly cacheable with an ETag', async () => {
        const res = await request(url('/v1/sandbox/clientes'));
        assert.equal(res.headers['cache-control'], 'public, max-age=3600');
        assert.match(String(res.headers.etag), /^"[^"]+"$/);
        assert.equal((await request(url('/v1/sandbox/clientes'), { headers: { 'if-none-match': String(res.headers.etag) } })).status, 304);
      });
    });

    describe('sandbox', () => {
      const kinds = { clientes: 25, articulos: 40, obras: 15, 'avisos-correctivo': 30 } as const;

      test('each kind has enough fictitious records, flagged sandbox, without a key', async () => {
        for (const [kind, min] of Object.entries(kinds)) {
          const res = await request(url(`/v1/sandbox/${kind}?limit=1000`));
          assert.equal(res.status, 200);
          const body = res.json();
          assert.deepEqual(Object.keys(body), ['ok', 'sandbox', 'total', 'limit', 'offset', 'has_more', 'next_offset', 'snapshot', 'items']);
          assert.equal(body.sandbox, true);
          assert.ok(body.total >= min, `${kind}: ${body.total}`);
          const detail = (await request(url(`/v1/sandbox/${kind}/${encodeURIComponent(body.items[0].id_erp)}`))).json();
          assert.deepEqual(Object.keys(detail), ['ok', 'sandbox', 'item']);
          assert.deepEqual(detail.item, body.items[0]);
        }
      });

      test('customers carry about 150 realistic ERP columns', async () => {
        const { items } = (await request(url('/v1/sandbox/clientes?limit=1'))).json();
        const columns = Object.keys(items[0].data);
        assert.ok(columns.length >= 140, `${columns.length} columns`);
        for (const c of ['01_NOMBRE_COMERCIAL', '06_CIF', '07_DOMICILIO', '08_CIUDAD', '09_PROVINCIA', '12_CPOSTAL', 'WWW', 'PORCENTAJE_RETENCION']) {
          assert.ok(columns.includes(c), c);
        }
      });

      test('references point at existing sandbox records', async () => {
        const ids = async (kind: string) =>
          new Set((await request(url(`/v1/sandbox/${kind}?limit=1000`))).json().items.map((i: { id_erp: string }) => i.id_erp));
        const clientes = await ids('clientes');
        const obras = (await request(url('/v1/sandbox/obras?limit=1000'))).json().items;
        const avisos = (await request(url('/v1/sandbox/avisos-correctivo?limit=1000'))).json().items;
        const obraIds = new Set(obras.map((o: { id_erp: string }) => o.id_erp));
        for (const o of obras) assert.ok(clientes.has(o.cliente_id_erp), o.cliente_id_erp);
        for (const a of avisos) {
          assert.ok(clientes.has(a.cliente_id_erp), a.cliente_id_erp);
          if (a.obra_id_erp !== null) assert.ok(obraIds.has(a.obra_id_erp), a.obra_id_erp);
          if (a.fecha !== null) assert.match(a.fecha, /^\d{4}-\d{2}-\d{2}$/);
        }
        const articulos = (await request(url('/v1/sandbox/articulos?limit=1000'))).json().items;
        assert.ok(articulos.some((a: { precio: unknown }) => typeof a.precio === 'number'));
      });

      test('updated_since works on the sandbox: several dates to try', async () => {
        const all = (await request(url('/v1/sandbox/avisos-correctivo?limit=1000'))).json();
        const dates = [...new Set(all.items.map((i: { actualizado_at: string }) => i.actualizado_at))] as string[];
        assert.ok(dates.length >= 3, `${dates.length} distinct times`);
        const since = dates[dates.length - 1]!;
        const recent = (await request(url(`/v1/sandbox/avisos-correctivo?updated_since=${since}`))).json();
        assert.ok(recent.total > 0 && recent.total < all.total);
      });

      test('sandbox bytes are identical from another server instance', async () => {
        const other = await startServer(store);
        try {
          for (const kind of Object.keys(kinds)) {
            const a = await request(url(`/v1/sandbox/${kind}?limit=1000`));
            const b = await request(`${other.baseUrl}/v1/sandbox/${kind}?limit=1000`);
            assert.deepEqual(a.body, b.body);
            assert.equal(a.headers.etag, b.headers.etag);
          }
        } finally {
          await other.close();
        }
      });
    });
  });
}
