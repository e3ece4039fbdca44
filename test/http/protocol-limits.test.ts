/** Issue 8, points 4 and 9: protocol limits answered with the contract's body; ops endpoints. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { bearer, request } from '../helpers/http.js';
import { rawRequest } from '../helpers/raw-http.js';
import { sqliteFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

describe('protocol limits and operations', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startServer(store);
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  const contractError = (body: Buffer, code: string) => {
    const parsed = JSON.parse(body.toString('utf8'));
    assert.deepEqual(Object.keys(parsed), ['ok', 'error', 'message', 'request_id']);
    assert.equal(parsed.error, code);
    return parsed;
  };

  test('a URL over 8192 characters is 414 uri_too_long', async () => {
    const res = await request(`${server.baseUrl}/v1/sandbox/clientes?x=${'a'.repeat(9000)}`);
    assert.equal(res.status, 414);
    contractError(res.body, 'uri_too_long');
  });

  test('headers over 16 KiB are 431 header_too_large, with the contract body', async () => {
    const res = await rawRequest(server.baseUrl, `GET /v1/sandbox/clientes HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\nConnection: close\r\n\r\n`);
    assert.equal(res.status, 431);
    const body = contractError(res.body, 'header_too_large');
    assert.equal(body.request_id, res.headers['x-request-id']);
  });

  test('a request the HTTP parser rejects is 400 bad_request, with no parser detail', async () => {
    for (const bytes of [
      'GARBAGE\r\n\r\n',
      'GET /v1/clientes HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n',
      'GET /v1/clientes HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\n\r\n',
      'GET /v1/clientes HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n',
    ]) {
      const res = await rawRequest(server.baseUrl, bytes);
      assert.equal(res.status, 400, JSON.stringify(bytes));
      const body = contractError(res.body, 'bad_request');
      assert.doesNotMatch(body.message, /HPE_|Parse Error|at /);
    }
  });

  test('a malformed percent-encoding in the path is 400 bad_request', async () => {
    for (const path of ['/v1/clientes/%E0%A4%A', '/v1/clientes/%ZZ', '/v1/sandbox/clientes/%FF', '/v1/clien%ZZtes']) {
      const res = await rawRequest(server.baseUrl, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(res.status, 400, path);
      const body = contractError(res.body, 'bad_request');
      assert.equal(body.request_id, res.headers['x-request-id']);
    }
  });

  test('/healthz and /readyz answer 200 while the store answers', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const res = await request(server.baseUrl + path);
      assert.equal(res.status, 200);
      assert.deepEqual(res.json(), { ok: true });
    }
  });

  test('/metrics counts requests by route template, never by concrete id', async () => {
    const { key } = await companyWithKey(store, 'metrics');
    await request(`${server.baseUrl}/v1/clientes/SECRET-ID-123`, { headers: bearer(key) });
    await request(`${server.baseUrl}/v1/sandbox/obras`);
    const res = await request(`${server.baseUrl}/metrics`);
    assert.equal(res.status, 200);
    const text = res.text();
    assert.match(text, /mirador_http_requests_total\{route="\/v1\/clientes\/:id_erp",method="GET",status="404"\} 1/);
    assert.match(text, /mirador_http_request_duration_seconds_bucket\{le="0\.005",route="\/v1\/sandbox\/obras",method="GET",status="200"\}/);
    assert.match(text, /mirador_import_duration_seconds/);
    assert.doesNotMatch(text, /SECRET-ID-123/);
  });
});
