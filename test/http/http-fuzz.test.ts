/**
 * Issue 8, point 2: property-based fuzzing of paths, query strings and headers,
 * sent as raw bytes (so invalid UTF-8, NUL bytes and odd encodings reach the
 * server). Every answer has a documented status and the contract's error body,
 * never a 500, a stack trace or SQL, and never company B's data to company A's key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { customer, customers, CUSTOMER_COLUMNS } from '../helpers/records.js';
import { rawRequest } from '../helpers/raw-http.js';
import { sqliteFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const DOCUMENTED = new Set([200, 204, 304, 400, 401, 404, 405, 414, 429, 431]);
const KINDS = ['clientes', 'articulos', 'obras', 'avisos-correctivo', 'sandbox/clientes', 'sandbox/obras', 'facturas', ''];

describe('HTTP fuzzing', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let keyA: string;
  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    const a = await companyWithKey(store, 'fuzz-a');
    const b = await companyWithKey(store, 'fuzz-b');
    keyA = a.key;
    await replaceRecords(store, { companyId: a.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS }, customers(['C1', 'C2', 'C3']));
    // B shares A's ids and has ids of its own; its content carries a marker that must never reach A.
    await replaceRecords(store, { companyId: b.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS }, [
      customer('C1', 'Confidencial-B one', 2, { email: 'confidencial-b@example.com' }),
      customer('SECRETB-ID', 'Confidencial-B two'),
    ]);
    server = await startServer(store, { RATE_LIMIT_PER_MINUTE: '1000000000', SANDBOX_RATE_LIMIT_PER_MINUTE: '1000000000' });
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  // Text pieces that stress decoding and routing, as raw bytes.
  const piece = fc.oneof(
    fc.constantFrom('C1', 'SECRETB-ID', '..', '%2F', '%00', '%ZZ', '%E0%A4%A', '%FF%FE', '%252F', '//', ';', '%', '+', '?', '#', ' ', '\u00f1', 'ä', 'NUL\u0000'),
    fc.string({ maxLength: 12 }),
    fc.stringMatching(/^[A-Za-z0-9%._~-]{0,20}$/),
  );
  const bytes = (s: string) => Buffer.from(s, 'latin1');
  const invalidUtf8 = fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => Buffer.from(b));

  const path = fc.tuple(fc.constantFrom(...KINDS), fc.option(piece, { nil: undefined }), fc.boolean()).map(([kind, id, prefix]) => {
    const base = prefix ? `/v1/${kind}` : `/${kind}`;
    return id === undefined ? base : `${base}/${encodeURIComponent(id).slice(0, 40)}`;
  });
  const queryValue = fc.oneof(
    fc.constantFrom('', '0', '1', '1000', '1001', '-1', '1.5', 'abc', '2026-11-21', '2026-02-30', '9'.repeat(30), '%00', '%FF', '2026-11-21T10:00:00+99:99'),
    fc.string({ maxLength: 10 }),
  );
  const query = fc
    .array(fc.tuple(fc.constantFrom('limit', 'offset', 'updated_since', 'foo', 'limit[]', ''), queryValue), { maxLength: 4 })
    .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : ''));
  const authorization = fc.oneof(
    fc.constant(null),
    fc.constantFrom(`Bearer ${'K'}`, 'Bearer', 'Basic dXNlcjpwYXNz', 'bearer  ', 'Bearer api_aaaaaaaa_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'),
    fc.constant('VALID'),
    fc.string({ maxLength: 30 }).map((s) => `Bearer ${s}`),
    fc.nat({ max: 20_000 }).map((n) => `Bearer ${'x'.repeat(n)}`),
  );
  const method = fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS', 'PUT');

  test('every response is documented, contract-shaped, leak-free and never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(method, path, query, authorization, fc.option(invalidUtf8, { nil: undefined }), fc.boolean(), async (m, p, q, auth, junk, xkey) => {
        const headerLines: Buffer[] = [bytes(`${m} ${p}${q} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n`)];
        const key = auth === 'VALID' ? `Bearer ${keyA}` : auth;
        if (key !== null) headerLines.push(bytes(`Authorization: ${key}\r\n`));
        if (xkey) headerLines.push(bytes(`X-API-Key: ${keyA}\r\n`));
        if (junk) headerLines.push(bytes("X-Junk: "), Buffer.from(junk.filter((b) => b !== 10 && b !== 13)), bytes("\r\n"));
        headerLines.push(bytes('\r\n'));
        const res = await rawRequest(server.baseUrl, Buffer.concat(headerLines));
        assert.ok(DOCUMENTED.has(res.status), `undocumented status ${res.status} for ${m} ${p}${q}`);
        const text = res.body.toString('utf8');
        // B's ids may come back only as an echo of what was sent; B's content never.
        assert.doesNotMatch(text, /Confidencial-B/i, 'company B never leaks');
        if (res.status === 200 && m === 'GET' && text.includes('"items"')) {
          assert.doesNotMatch(text, /"id_erp":"SECRETB-ID"/, 'company B never leaks');
        }
        assert.doesNotMatch(text, /\bat .+:\d+:\d+|SQLITE|SELECT |better-sqlite3|node_modules/i, 'nothing internal leaks');
        if (res.status >= 400 && m !== 'HEAD') {
          const body = JSON.parse(text);
          assert.deepEqual(Object.keys(body), ['ok', 'error', 'message', 'request_id']);
          assert.equal(body.ok, false);
          const entry = ERROR_CATALOG[body.error as keyof typeof ERROR_CATALOG];
          assert.ok(entry, `unknown code ${body.error}`);
          assert.equal(entry.status, res.status);
        }
      }),
      { numRuns: 400 },
    );
  });
});
