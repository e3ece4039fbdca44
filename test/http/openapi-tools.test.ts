/**
 * Issue 21: third-party tools that integrators use find nothing in the
 * OpenAPI document or in the server's answers. A server with the sample
 * exports imported serves the document as production does (behind a TLS
 * proxy, PUBLIC_BASE_URL https); then Redocly CLI, Spectral (`spectral:oas`
 * and OWASP) lint it, and Prism, as a validating proxy in front of the
 * server, carries a request matrix covering every operation and every status
 * of the document. Any finding fails.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KINDS } from '../../src/domain/kinds.js';
import type { Store } from '../../src/store/store.js';
import { bodilessContentTypeHop, LINT_CONFIG, ROOT, runTool, startPrism } from '../helpers/api-tools.js';
import { mirador } from '../helpers/cli.js';
import { bearer, request } from '../helpers/http.js';
import { checkResponse } from '../helpers/openapi-check.js';
import { rawRequest } from '../helpers/raw-http.js';
import { sqliteFactory } from '../helpers/stores.js';
import { startServer, type TestServer } from '../helpers/test-server.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

const PUBLIC = 'https://api.mirador.example';
const RATE = 150;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request through node:http (no automatic decompression, HEAD without a body). */
function send(url: string, method: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('third-party OpenAPI tools find nothing (issue 21)', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let dir: string;
  let docFile: string;
  let doc: any;
  let key: string;
  let spareKey: string;

  before(async () => {
    let databaseUrl: string;
    ({ store, databaseUrl, cleanup } = await sqliteFactory.create());
    const env = { DATABASE_URL: databaseUrl };
    assert.equal(mirador(['company', 'create', 'acme', '--name', 'Acme'], env).code, 0);
    key = mirador(['key', 'create', 'acme', '--json'], env).json().key;
    spareKey = mirador(['key', 'create', 'acme', '--label', 'spent', '--json'], env).json().key;
    for (const kind of KINDS) {
      const imported = mirador(['import', 'acme', kind, `${ROOT}samples/${kind}.csv`, '--json'], env);
      assert.equal(imported.code, 0, imported.stderr);
    }
    server = await startServer(store, {
      PUBLIC_BASE_URL: PUBLIC,
      TRUST_PROXY: 'true',
      RATE_LIMIT_PER_MINUTE: String(RATE),
      SANDBOX_RATE_LIMIT_PER_MINUTE: String(RATE * 4),
    });
    // As production serves it: behind a proxy that ends TLS for PUBLIC_BASE_URL.
    const served = await send(`${server.baseUrl}/openapi.json`, 'GET', { host: new URL(PUBLIC).host, 'x-forwarded-proto': 'https' });
    assert.equal(served.status, 200);
    doc = JSON.parse(served.body.toString('utf8'));
    assert.deepEqual(doc.servers.map((s: { url: string }) => s.url), [PUBLIC]);
    dir = mkdtempSync(join(tmpdir(), 'mirador-oas-'));
    docFile = join(dir, 'openapi.json');
    // Indented, so that findings name a line.
    writeFileSync(docFile, JSON.stringify(doc, null, 2));
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('Redocly CLI lint (recommended): no error, no warning', async () => {
    const r = await runTool('redocly', ['lint', docFile, '--config', `${LINT_CONFIG}redocly.yaml`, '--format', 'json']);
    const report = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
    const problems = report.problems.map((p: any) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
    assert.deepEqual(problems, [], r.stderr);
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 });
  });

  for (const [name, ruleset] of [
    ['Spectral spectral:oas (all rules)', 'spectral-oas.mjs'],
    ['Spectral OWASP API Security Top 10', 'spectral-owasp.mjs'],
  ] as const) {
    test(`${name}: no finding`, async () => {
      const out = join(dir, `${ruleset}.json`);
      const r = await runTool('spectral', ['lint', docFile, '--ruleset', `${LINT_CONFIG}${ruleset}`, '--format', 'json', '--output', out]);
      assert.ok(existsSync(out), `no report from Spectral:\n${r.stdout}\n${r.stderr}`);
      const findings = (JSON.parse(readFileSync(out, 'utf8')) as any[]).map(
        (f) => `${['error', 'warning', 'info', 'hint'][f.severity]} ${f.code}: ${f.message} at ${f.path.join('/')}`,
      );
      assert.deepEqual(findings, []);
    });
  }

  test('Prism as a validating proxy: every operation, every status, no violation', { timeout: HANG_GUARD_MS }, async () => {
    const hop = await bodilessContentTypeHop(server.baseUrl);
    const prism = await startPrism(docFile, hop.url);
    try {
      await runMatrix(prism.url);
    } finally {
      await prism.stop();
      await hop.close();
    }
  });

  /** Statuses no request through Prism can produce, each with the reason; these go to the server directly. */
  const DIRECT: Record<string, string> = {
    // Prism crashes on a malformed percent-encoding in the path (URIError from uri-template-lite while
    // matching path parameters) and its own HTTP parser refuses a malformed header: a 400 bad_request
    // cannot pass through it. Sent directly, with a malformed header line, and held to the document.
    '400 bad_request': 'Prism cannot carry a malformed request',
    // Prism enforces the document's security itself: a request without a key gets Prism's own 401,
    // rightly, since the document requires one. auth_required is sent directly.
    '401 auth_required': 'Prism answers a request without credentials itself',
  };
  /** Statuses the matrix does not provoke, each with the reason and the test that covers the answer. */
  const NOT_PROVOKED: Record<string, string> = {
    '500': 'an unexpected fault: nothing from outside causes one on purpose; the error handler’s body is the catalog’s (test/http/api.test.ts)',
    '503': 'storage unreachable: PostgreSQL lost, in test/store/several-instances.test.ts, where test/helpers/http.ts holds the answer to the document',
  };

  async function runMatrix(prism: string): Promise<void> {
    const violations: string[] = [];
    const covered = new Set<string>();
    const through = async (
      op: string,
      expected: number,
      path: string,
      method: string,
      headers: Record<string, string>,
      again?: (res: Answer) => Promise<boolean>,
    ) => {
      let res = await send(`${prism}${path}`, method, headers);
      // Races of the clock and of TCP, not of the document: retried (see `again` below), at most twice.
      for (let i = 0; i < 2 && res.status !== expected && again && (await again(res)); i++) res = await send(`${prism}${path}`, method, headers);
      const problem = String(res.headers['content-type'] ?? '').includes('problem+json');
      const inline = res.headers['sl-violations'];
      if (res.status !== expected || problem || inline) {
        violations.push(`${op} ${method} ${path.slice(0, 80)} → ${res.status} (expected ${expected}) ${inline ?? ''} ${problem ? res.body.toString('utf8').slice(0, 600) : ''}`);
      }
      covered.add(`${op} ${expected}`);
    };
    const direct = async (op: string, expected: number, path: string, method: string, answer: Answer) => {
      assert.equal(answer.status, expected, `${op} ${method} ${path}`);
      // A HEAD client reads no body, whatever follows the head on the socket.
      await checkResponse(`${server.baseUrl}${path}`, method, method === 'HEAD' ? { ...answer, body: Buffer.alloc(0) } : answer);
      covered.add(`${op} ${expected}`);
    };

    // Ids of real records (from the imported samples) and of sandbox ones (the document's examples).
    const ids: Record<string, string> = {};
    for (const kind of KINDS) {
      ids[`/v1/${kind}`] = (await request(`${server.baseUrl}/v1/${kind}?limit=1`, { headers: bearer(key) })).json().items[0].id_erp;
      ids[`/v1/sandbox/${kind}`] = doc.paths[`/v1/sandbox/${kind}/{id_erp}`].get.parameters.find((p: any) => p.name === 'id_erp').example;
    }

    // The spare key and a sandbox client (by X-Forwarded-For: TRUST_PROXY is on) spend their minute
    // directly, just before each 429 is asked for through Prism: the limit's window is the clock's minute.
    const spentIp = '198.51.100.7';
    const spend = async (headers: Record<string, string>, path: string) => {
      for (let i = 0; i <= RATE * 4 && (await send(`${server.baseUrl}${path}`, 'GET', headers)).status !== 429; i++);
    };

    const wrongKey = `api_zzzzzzzz_${'a'.repeat(40)}`;
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      const sandbox = template.startsWith('/v1/sandbox/');
      const base = template.replace(/\/\{id_erp\}.*$/, ''); // a related path (issue 17) takes its parent's id
      const path = template.replace('{id_erp}', encodeURIComponent(ids[base] ?? ''));
      const auth = sandbox ? {} : bearer(key);
      for (const method of ['GET', 'HEAD']) {
        const op = item[method.toLowerCase()];
        assert.ok(op, `${template} has ${method}`);
        const id = op.operationId as string;
        const statuses = Object.keys(op.responses);
        const list = statuses.includes('410');

        // Prism asks the upstream for br/gzip (node-fetch's default) whatever the client asked: the ETag
        // to send back is the one Prism's answer carries.
        const first = await send(`${prism}${path}`, 'GET', auth);
        assert.equal(first.status, 200, `${template}: ${first.body.toString('utf8').slice(0, 200)}`);
        await through(id, 200, path, method, auth);
        await through(id, 200, path, method, { ...auth, 'accept-encoding': 'gzip' });
        await through(id, 200, path, method, { ...auth, 'accept-encoding': 'br', 'x-request-id': 'not a valid id, replaced' });
        await through(id, 304, path, method, { ...auth, 'if-none-match': String(first.headers.etag) });
        if (list) {
          await through(id, 400, `${path}?updated_since=2026-02-30`, method, auth);
          await through(id, 410, `${path}?snapshot=gone-1`, method, auth);
        } else {
          const raw = await rawRequest(server.baseUrl, `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-Bad\r\n\r\n`);
          await direct(id, 400, path, method, raw);
        }
        if (!sandbox) {
          await through(id, 401, path, method, { authorization: `Bearer ${wrongKey}` });
          await direct(id, 401, path, method, await send(`${server.baseUrl}${path}`, method));
        }
        if (template.endsWith('{id_erp}')) await through(id, 404, `${base}/no-such-record`, method, auth);
        else if (template.includes('{id_erp}')) await through(id, 404, template.replace('{id_erp}', 'no-such-record'), method, auth);
        await through(id, 414, `${path}?pad=${'b'.repeat(9000)}`, method, auth);
        // Mirador answers a 431 and closes while the hop may still be sending the 17 KB head: when the
        // connection resets first, the hop (and so Prism) sees no answer at all. Sent again then.
        await through(id, 431, path, method, { ...auth, 'x-pad': 'a'.repeat(17_000) }, async (res) => res.status === 500);
        const spent = sandbox ? { 'x-forwarded-for': spentIp } : bearer(spareKey);
        const spendAll = () => spend(spent, sandbox ? '/v1/sandbox/estado' : '/v1/estado');
        await spendAll();
        // A new minute may have begun between spending and asking: spend again, ask again.
        await through(id, 429, path, method, spent, async (res) => res.status === 200 && (await spendAll(), true));

        for (const status of statuses) {
          if (!covered.has(`${id} ${status}`) && !NOT_PROVOKED[status]) violations.push(`${id}: documented ${status} is not in the matrix`);
        }
      }
    }
    assert.deepEqual(violations, []);
    assert.ok(Object.keys(DIRECT).length > 0);
  }
});
