/**
 * Issue 21: the nine gaps strict third-party tools found between the OpenAPI
 * document and the server, each pinned. (The tools themselves run in
 * openapi-tools.test.ts and openapi-client.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OFFSET_PARAM } from '../../src/http/api/api-schemas.js';
import type { Store } from '../../src/store/store.js';
import { request } from '../helpers/http.js';
import { deref } from '../helpers/openapi-check.js';
import { rawRequest } from '../helpers/raw-http.js';
import { sqliteFactory } from '../helpers/stores.js';
import { startServer, type TestServer } from '../helpers/test-server.js';

describe('issue 21: the document and the server agree, exactly', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let doc: any;
  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startServer(store);
    doc = (await request(`${server.baseUrl}/openapi.json`)).json();
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  const raw = (head: string) => rawRequest(server.baseUrl, `${head}\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const assertCors = (headers: Record<string, string | string[] | undefined>, what: string) => {
    assert.equal(headers['access-control-allow-origin'], '*', `${what}: Access-Control-Allow-Origin`);
    assert.match(String(headers['access-control-expose-headers']), /\bX-Request-Id\b.*\bRetry-After\b/, `${what}: Access-Control-Expose-Headers`);
  };

  test('1. every answer outside the panel is readable by any origin, errors from the parser and Fastify included', async () => {
    const answers: [string, number, Awaited<ReturnType<typeof raw>>][] = [
      ['a 9,000-character query', 414, await raw(`GET /v1/sandbox/clientes?q=${'x'.repeat(9000)} HTTP/1.1`)],
      ['a 17 KB header', 431, await raw(`GET /v1/sandbox/clientes HTTP/1.1\r\nX-Pad: ${'a'.repeat(17_000)}`)],
      ['an undecodable path', 400, await raw('GET /v1/clientes/%E0%A4%A HTTP/1.1')],
      ['a malformed header', 400, await raw('GET /v1/clientes HTTP/1.1\r\nNo colon here')],
      ['/', 404, await raw('GET / HTTP/1.1')],
      ['/v2/clientes', 404, await raw('GET /v2/clientes HTTP/1.1')],
    ];
    for (const [what, status, res] of answers) {
      assert.equal(res.status, status, what);
      assertCors(res.headers, what);
    }
    // The parser's refusals answer a HEAD without a body (a client would read it as the next answer).
    const head = await raw(`HEAD /v1/sandbox/clientes HTTP/1.1\r\nX-Pad: ${'a'.repeat(17_000)}`);
    assert.equal(head.status, 431);
    assert.equal(head.body.length, 0);
    // Declared on every response of every operation.
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of [item.get, item.head]) {
        for (const response of Object.values<any>(op.responses)) {
          const h = deref(doc, response).headers;
          assert.ok(h['Access-Control-Allow-Origin'] && h['Access-Control-Expose-Headers'], op.operationId);
        }
      }
    }
    // The panel is same-origin and signed in by cookie: it announces nothing.
    const panel = await request(`${server.baseUrl}/panel/login`);
    assert.equal(panel.headers['access-control-allow-origin'], undefined);
  });

  test('2. HEAD is an operation of every path; 405 and its Allow are stated in the description', async () => {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      assert.ok(item.head?.operationId?.startsWith('head'), path);
    }
    assert.match(doc.info.description, /405 method_not_allowed/);
    assert.match(doc.info.description, /Allow: GET, HEAD, OPTIONS/);
    const res = await request(`${server.baseUrl}/v1/sandbox/obras`, { method: 'PUT' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
    assertCors(res.headers, '405');
  });

  test('3. X-Request-Id: the document accepts every value the server serves, and describes what it echoes', async () => {
    const param = deref(doc, { $ref: '#/components/parameters/X-Request-Id' });
    assert.equal(param.schema.pattern, undefined, 'no pattern: the server accepts any value');
    const odd = await request(`${server.baseUrl}/v1/sandbox/estado`, { headers: { 'x-request-id': 'not a sane id!' } });
    assert.equal(odd.status, 200);
    assert.match(String(odd.headers['x-request-id']), /^[0-9a-f-]{36}$/, 'replaced by a UUID');
    const sane = await request(`${server.baseUrl}/v1/sandbox/estado`, { headers: { 'x-request-id': 'job-42:attempt.1' } });
    assert.equal(sane.headers['x-request-id'], 'job-42:attempt.1');
    const echoed = deref(doc, { $ref: '#/components/headers/X-Request-Id' }).schema;
    for (const value of [odd.headers['x-request-id'], sane.headers['x-request-id']]) {
      assert.match(String(value), new RegExp(echoed.pattern));
    }
  });

  test('4. responses other than 200 are $refs to shared components, and every component is used', () => {
    const text = JSON.stringify(doc.paths);
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of [item.get, item.head]) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          if (status !== '200') assert.ok(response.$ref?.startsWith('#/components/responses/'), `${op.operationId} ${status}`);
        }
        for (const p of op.parameters) if (p.in !== 'path') assert.ok(p.$ref?.startsWith('#/components/parameters/'), op.operationId);
      }
    }
    const everything = JSON.stringify(doc);
    for (const section of ['responses', 'parameters', 'headers', 'examples']) {
      for (const name of Object.keys(doc.components[section])) {
        assert.ok(everything.includes(`"#/components/${section}/${name}"`), `#/components/${section}/${name} is used`);
      }
    }
    assert.ok(text.length > 0);
  });

  test('5. every tag is declared; estado has examples; info has a license and a contact', () => {
    const declared = new Set(doc.tags.map((t: { name: string }) => t.name));
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of [item.get, item.head]) for (const tag of op.tags) assert.ok(declared.has(tag), tag);
    }
    assert.ok(declared.has('estado'));
    assert.ok(doc.paths['/v1/estado'].get.responses['200'].content['application/json'].examples);
    assert.ok(doc.info.license?.name && doc.info.license.url);
    assert.ok(doc.info.contact?.name && doc.info.contact.url);
  });

  test('6. a trailing slash is no path: 404 for the path, before any key, whatever the method', async () => {
    for (const [method, path] of [
      ['GET', '/v1/clientes/'],
      ['GET', '/v1/sandbox/clientes/?limit=1'],
      ['HEAD', '/v1/clientes/'],
      ['OPTIONS', '/v1/obras/'],
      ['GET', '/v1/clientes/A1/'],
      ['GET', '/v1/'],
    ] as const) {
      const res = await request(`${server.baseUrl}${path}`, { method });
      assert.equal(res.status, 404, `${method} ${path}`);
      if (method === 'GET') {
        assert.equal(res.json().error, 'not_found');
        assert.match(res.json().message, /do not end with a slash/, path);
      }
    }
    assert.match(doc.info.description, /trailing slash/);
  });

  test('7. an offset out of range: the message states the documented bounds', async () => {
    const res = await request(`${server.baseUrl}/v1/sandbox/clientes?offset=1000000000000000`);
    assert.equal(res.status, 400);
    assert.match(res.json().message, new RegExp(`from ${OFFSET_PARAM.minimum} to ${OFFSET_PARAM.maximum}\\b`));
  });

  test('8. a 304 is described with its headers and no content, so generated clients type its body as absent', () => {
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of [item.get, item.head]) {
        const notModified = deref(doc, op.responses['304']);
        assert.equal(notModified.content, undefined, op.operationId);
        assert.ok(notModified.headers.ETag, op.operationId);
      }
    }
  });

  test('9. no OPTIONS operations: CORS is described once, and preflights still answer', async () => {
    for (const item of Object.values<any>(doc.paths)) assert.equal(item.options, undefined);
    assert.match(doc.info.description, /Preflights/);
    const pre = await request(`${server.baseUrl}/v1/clientes/A1`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(pre.status, 204);
  });
});
