/** Issue 7, point 1: GET /openapi.json — valid OpenAPI 3.1, complete, and true to the API. */
import { RELATED } from '../../src/http/api/subset-docs.js';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Validator } from '@seriousme/openapi-schema-validator';
import { KINDS } from '../../src/domain/kinds.js';
import { LIMIT_PARAM, OFFSET_PARAM, UNDOCUMENTED_CODES } from '../../src/http/api/api-schemas.js';
import { ERROR_CATALOG, type ErrorCode } from '../../src/http/errors.js';
import type { Store } from '../../src/store/store.js';
import { request } from '../helpers/http.js';
import { checkResponse, deref, documentOf } from '../helpers/openapi-check.js';
import { sqliteFactory } from '../helpers/stores.js';
import { startServer, type TestServer } from '../helpers/test-server.js';

describe('OpenAPI document', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let doc: any;
  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startServer(store, { PUBLIC_BASE_URL: 'https://api.mirador.example' });
    doc = (await request(`${server.baseUrl}/openapi.json`)).json();
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, '3.1');
  });

  test('documents every endpoint of contract §1.1: GET and HEAD, real and sandbox, list and detail', () => {
    const expected = [
      ...KINDS.flatMap((k) => [`/v1/${k}`, `/v1/${k}/{id_erp}`, `/v1/sandbox/${k}`, `/v1/sandbox/${k}/{id_erp}`]),
      // Related records (issue 17).
      ...RELATED.flatMap(({ parent, child }) => [`/v1/${parent}/{id_erp}/${child}`, `/v1/sandbox/${parent}/{id_erp}/${child}`]),
      '/v1/estado',
      '/v1/sandbox/estado',
      '/v1/eventos',
      '/v1/sandbox/eventos',
    ];
    assert.deepEqual(Object.keys(doc.paths).sort(), expected.sort());
    const ids = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      assert.deepEqual(Object.keys(item).sort(), ['get', 'head'], path);
      for (const op of [item.get, item.head]) {
        assert.ok(!ids.has(op.operationId), `duplicate operationId ${op.operationId}`);
        ids.add(op.operationId);
      }
      const get = item.get;
      const sandbox = path.startsWith('/v1/sandbox/');
      assert.deepEqual(get.security, sandbox ? [] : [{ bearerAuth: [] }, { apiKeyHeader: [] }], path);
      const params = get.parameters.map((p: any) => deref(doc, p)).map((p: any) => `${p.in}:${p.name}`);
      if (path.includes('{id_erp}')) assert.ok(params.includes('path:id_erp'), path);
      if (path.endsWith('{id_erp}')) assert.ok(params.includes('query:fields'), path);
      else if (path.endsWith('/eventos')) {
        // The event feed pages like a list, with no snapshots, tombstones or subsets.
        assert.deepEqual(params.filter((p: string) => p.startsWith('query:')).sort(), ['query:limit', 'query:offset', 'query:updated_since'], path);
        assert.ok(!get.responses['410'], path);
      } else if (!path.endsWith('/estado')) {
        for (const q of ['limit', 'offset', 'updated_since', 'include_deleted', 'snapshot', 'q', 'fields']) assert.ok(params.includes(`query:${q}`), `${path} ${q}`);
        assert.ok(get.responses['410'], `${path} documents 410 snapshot_expired`);
      }
      assert.ok(params.includes('header:If-None-Match') && params.includes('header:X-Request-Id'), path);
      const statuses = Object.keys(get.responses);
      for (const s of ['200', '304', '400', '404', '414', '429', '431', '500', '503']) {
        if (s === '404' && !path.includes('{id_erp}')) continue;
        assert.ok(statuses.includes(s), `${path} documents ${s}`);
      }
      assert.equal(statuses.includes('401'), !sandbox, `${path}: 401 only where a key is needed`);
      const ok = deref(doc, get.responses['200']);
      for (const h of ['ETag', 'Cache-Control', 'X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Access-Control-Allow-Origin']) {
        assert.ok(ok.headers[h], `${path} 200 ${h}`);
      }
      assert.ok(deref(doc, get.responses['429']).headers['Retry-After'], `${path} 429 Retry-After`);
      // HEAD: the same parameters, statuses and headers, and no body anywhere.
      assert.deepEqual(item.head.parameters, get.parameters, path);
      assert.deepEqual(Object.keys(item.head.responses), statuses, path);
      for (const [status, response] of Object.entries<any>(item.head.responses)) {
        const r = deref(doc, response);
        assert.equal(r.content, undefined, `${path} HEAD ${status} has no body`);
        assert.deepEqual(r.headers, deref(doc, get.responses[status]).headers, `${path} HEAD ${status} headers`);
      }
    }
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKeyHeader', 'bearerAuth']);
  });

  test('describes the webhook payload (OpenAPI 3.1 webhooks), signed, one per event type', () => {
    assert.deepEqual(Object.keys(doc.webhooks).sort(), ['import.failed', 'import.held', 'import.published']);
    for (const [type, item] of Object.entries<any>(doc.webhooks)) {
      const post = item.post;
      assert.deepEqual(post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/Event' }, type);
      assert.equal(post.requestBody.content['application/json'].example.type, type);
      assert.deepEqual(post.parameters.map((p: any) => `${p.in}:${p.name}`), ['header:Mirador-Signature', 'header:Mirador-Event-Id']);
      assert.ok(post.responses['2XX'] && post.responses.default, type);
    }
    const event = doc.components.schemas.Event;
    assert.deepEqual(event.required, ['id', 'type', 'created_at', 'data']);
    assert.deepEqual(Object.keys(event.properties.data.properties.counts.properties), ['inserted', 'updated', 'unchanged', 'deleted']);
  });

  test('every ERROR_CATALOG code is documented with its status and catalog message, or left out for a stated reason', () => {
    const documented = new Map<string, { status: string; media: any }>();
    for (const item of Object.values<any>(doc.paths)) {
      for (const [status, response] of Object.entries<any>(item.get.responses)) {
        const media = deref(doc, response).content?.['application/json'];
        for (const name of Object.keys(media?.examples ?? {})) documented.set(name, { status, media });
      }
    }
    for (const [code, { status, message }] of Object.entries(ERROR_CATALOG)) {
      const why = UNDOCUMENTED_CODES[code as ErrorCode];
      const found = documented.get(code);
      if (why) {
        assert.equal(found, undefined, `${code} is documented although UNDOCUMENTED_CODES says: ${why}`);
        continue;
      }
      assert.ok(found, `no operation documents ${code}: document it in src/http/api/api-docs.ts or say why not in UNDOCUMENTED_CODES`);
      assert.equal(found.status, String(status), code);
      assert.equal(found.media.schema.$ref, `#/components/schemas/Error${status}`, code);
      const example = deref(doc, found.media.examples[code]).value;
      assert.deepEqual({ error: example.error, message: example.message }, { error: code, message }, code);
      assert.ok(doc.components.schemas[`Error${status}`].properties.error.enum.includes(code), code);
    }
  });

  test('every example validates against its schema', async () => {
    const compiled = await documentOf(server.baseUrl);
    let count = 0;
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [status, response] of Object.entries<any>(item.get.responses)) {
        const media = deref(doc, response).content?.['application/json'];
        for (const [name, ex] of Object.entries<any>(media?.examples ?? {})) {
          const validate = compiled.validator(media.schema);
          assert.ok(validate(deref(doc, ex).value), `${path} ${status} ${name}: ${JSON.stringify(validate.errors)}`);
          count++;
        }
      }
    }
    assert.ok(count > 100, `${count} examples`);
    for (const sandbox of [false, true]) {
      const estado = doc.paths[sandbox ? '/v1/sandbox/estado' : '/v1/estado'].get.responses['200'].content['application/json'];
      assert.ok(Object.keys(estado.examples).length > 0, 'estado has an example (issue 21, point 5)');
    }
  });

  test('examples are the sandbox’s own responses', async () => {
    const estado = doc.paths['/v1/sandbox/estado'].get.responses['200'].content['application/json'].examples.sandbox.value;
    assert.deepEqual(estado, (await request(`${server.baseUrl}/v1/sandbox/estado`)).json(), 'estado example');
    for (const kind of KINDS) {
      const list = doc.paths[`/v1/sandbox/${kind}`].get.responses['200'].content['application/json'].examples.sandbox.value;
      const withDeleted = doc.paths[`/v1/sandbox/${kind}`].get.responses['200'].content['application/json'].examples.withDeleted;
      const query = withDeleted.summary.slice(withDeleted.summary.indexOf('?'));
      assert.deepEqual(withDeleted.value, (await request(`${server.baseUrl}/v1/sandbox/${kind}${query}`)).json(), `${kind}: withDeleted example`);
      assert.ok(withDeleted.value.items.some((i: { eliminado?: boolean }) => i.eliminado === true), `${kind}: the example shows a tombstone`);
      assert.deepEqual(list, (await request(`${server.baseUrl}/v1/sandbox/${kind}?limit=2`)).json(), kind);
      const detail = doc.paths[`/v1/sandbox/${kind}/{id_erp}`].get;
      const id = detail.parameters.find((p: any) => p.name === 'id_erp').example;
      const live = (await request(`${server.baseUrl}/v1/sandbox/${kind}/${encodeURIComponent(id)}`)).json();
      assert.deepEqual(detail.responses['200'].content['application/json'].examples.sandbox.value, live, kind);
      const { sandbox: _sandbox, ...real } = list;
      assert.deepEqual(doc.paths[`/v1/${kind}`].get.responses['200'].content['application/json'].examples.sandbox.value, real);
    }
  });

  test('parameter bounds are the ones list-query.ts enforces', async () => {
    const params = doc.paths['/v1/sandbox/obras'].get.parameters.map((p: any) => deref(doc, p));
    const limit = params.find((p: any) => p.name === 'limit').schema;
    const offset = params.find((p: any) => p.name === 'offset').schema;
    assert.deepEqual([limit.minimum, limit.maximum, limit.default], [LIMIT_PARAM.minimum, LIMIT_PARAM.maximum, LIMIT_PARAM.default]);
    assert.deepEqual([offset.minimum, offset.maximum], [OFFSET_PARAM.minimum, OFFSET_PARAM.maximum]);
    const at = (q: string) => request(`${server.baseUrl}/v1/sandbox/obras?${q}`).then((r) => r.status);
    assert.equal(await at(`limit=${limit.minimum}`), 200);
    assert.equal(await at(`limit=${limit.maximum}`), 200);
    assert.equal(await at(`limit=${limit.maximum + 1}`), 400);
    assert.equal(await at(`limit=${limit.minimum - 1}`), 400);
    assert.equal(await at(`offset=${offset.maximum}`), 200);
    assert.equal(await at(`offset=${offset.maximum + 1}`), 400);
    assert.equal((await request(`${server.baseUrl}/v1/sandbox/obras`)).json().limit, limit.default);
  });

  test('servers: the address it was fetched from, then PUBLIC_BASE_URL', async () => {
    assert.deepEqual(doc.servers.map((s: any) => s.url), [server.baseUrl, 'https://api.mirador.example']);
    const proxied = await request(`${server.baseUrl}/openapi.json`, { headers: { host: 'api.mirador.example' } });
    assert.deepEqual(proxied.json().servers.map((s: any) => s.url), ['http://api.mirador.example', 'https://api.mirador.example']);
    const junk = await request(`${server.baseUrl}/openapi.json`, { headers: { host: 'evil"<x>' } });
    assert.deepEqual(junk.json().servers.map((s: any) => s.url), ['https://api.mirador.example']);
    const page = await request(`${server.baseUrl}/docs`);
    const init = page.text().match(/src="(\/docs\/assets\/docs-init\.js[^"]*)"/);
    assert.ok(init, '/docs loads its starter script');
    assert.match((await request(`${server.baseUrl}${init[1]}`)).text(), /url: '\/openapi\.json'/, '/docs reads the same document');
  });

  test('served with an ETag, 304, gzip, and readable from any origin', async () => {
    const first = await request(`${server.baseUrl}/openapi.json`);
    assert.equal(first.headers['access-control-allow-origin'], '*');
    assert.match(String(first.headers['content-type']), /^application\/json/);
    const again = await request(`${server.baseUrl}/openapi.json`, { headers: { 'if-none-match': String(first.headers.etag) } });
    assert.equal(again.status, 304);
    const gz = await request(`${server.baseUrl}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } });
    assert.deepEqual(gunzipSync(gz.body), first.body);
    assert.ok(gz.body.length < first.body.length / 5, `${gz.body.length} of ${first.body.length} bytes`);
  });

  describe('the response check used by every API suite', () => {
    const detailId = () => doc.paths['/v1/sandbox/obras/{id_erp}'].get.parameters.find((p: any) => p.name === 'id_erp').example;
    const detail = () => request(`${server.baseUrl}/v1/sandbox/obras/${encodeURIComponent(detailId())}`);

    test('refuses a body with a key the contract does not have', async () => {
      const res = await detail();
      const body = Buffer.from(JSON.stringify({ ...res.json(), extra: 1 }));
      await assert.rejects(checkResponse(`${server.baseUrl}/v1/sandbox/obras/X`, 'GET', { ...res, body }), /extra|additional/);
    });

    test('refuses an item whose precio is a string', async () => {
      const res = await request(`${server.baseUrl}/v1/sandbox/articulos?limit=1`);
      const page = res.json();
      page.items[0].precio = '12,50';
      await assert.rejects(
        checkResponse(`${server.baseUrl}/v1/sandbox/articulos`, 'GET', { ...res, body: Buffer.from(JSON.stringify(page)) }),
        /precio/,
      );
    });

    test('refuses a missing required header, an undocumented status and an unknown error code', async () => {
      const res = await detail();
      const { etag: _etag, ...headers } = res.headers;
      await assert.rejects(checkResponse(`${server.baseUrl}/v1/sandbox/obras/X`, 'GET', { ...res, headers }), /ETag/);
      await assert.rejects(checkResponse(`${server.baseUrl}/v1/sandbox/obras/X`, 'GET', { ...res, status: 418 }), /418/);
      const teapot = { ...res, status: 404, body: Buffer.from('{"ok":false,"error":"teapot","message":"x","request_id":"y"}') };
      await assert.rejects(checkResponse(`${server.baseUrl}/v1/nothing`, 'GET', teapot), /catalog/);
    });

    test('a 405 is held to what the description says: Allow, CORS, the catalog body', async () => {
      const res = await request(`${server.baseUrl}/v1/sandbox/obras`, { method: 'DELETE' });
      assert.equal(res.status, 405);
      await assert.rejects(checkResponse(`${server.baseUrl}/v1/sandbox/obras`, 'DELETE', { ...res, status: 404 }), /405/);
      const { allow: _allow, ...headers } = res.headers;
      await assert.rejects(checkResponse(`${server.baseUrl}/v1/sandbox/obras`, 'DELETE', { ...res, headers }), /Allow/);
    });
  });
});
