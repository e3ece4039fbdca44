/**
 * Issue 18, point 7: with PUBLIC_BASE_URL unset, the address Mirador tells
 * clients follows PORT and HOST (contract §4), and `mirador serve --port`:
 * the panel's curl snippets, OpenAPI `servers`, the docs page's CSP, upload
 * `status_url`s and `mirador pull`'s default `--base-url`.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig, publicBaseUrlFor, withListenAddress } from '../../src/config.js';
import type { Store } from '../../src/store/store.js';
import { mirador, serveProcess } from '../helpers/cli.js';
import { bearer, request } from '../helpers/http.js';
import { signedIn, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import { storeFactories, tempDir } from '../helpers/stores.js';
import { miradorAsync } from '../helpers/cli-async.js';

describe('the default PUBLIC_BASE_URL', () => {
  test('is http://<HOST>:<PORT>, with localhost for a wildcard or loopback HOST', () => {
    const url = (env: Record<string, string>) => loadConfig(env).publicBaseUrl;
    assert.equal(url({}), 'http://localhost:3000');
    assert.equal(url({ PORT: '4101' }), 'http://localhost:4101');
    for (const host of ['0.0.0.0', '::', '[::]', '127.0.0.1', '127.0.1.1', '::1', 'localhost', 'LOCALHOST']) {
      assert.equal(url({ PORT: '4101', HOST: host }), 'http://localhost:4101', host);
    }
    assert.equal(url({ PORT: '80', HOST: 'mirador.internal' }), 'http://mirador.internal:80');
    assert.equal(url({ PORT: '4101', HOST: '10.0.0.7' }), 'http://10.0.0.7:4101');
    assert.equal(url({ PORT: '4101', HOST: 'fd00::7' }), 'http://[fd00::7]:4101');
    assert.equal(publicBaseUrlFor('', 8080), 'http://localhost:8080');
  });

  test('a PUBLIC_BASE_URL that is set wins over PORT, HOST and --port', () => {
    const set = loadConfig({ PORT: '4101', HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://api.example.com/' });
    assert.equal(set.publicBaseUrl, 'https://api.example.com');
    assert.equal(withListenAddress(set, { port: 5000 }).publicBaseUrl, 'https://api.example.com');
    const derived = loadConfig({ PORT: '4101' });
    const moved = withListenAddress(derived, { port: 5000, host: 'mirador.internal' });
    assert.equal(moved.publicBaseUrl, 'http://mirador.internal:5000');
    assert.equal(moved.port, 5000);
    assert.equal(withListenAddress(derived, {}).publicBaseUrl, 'http://localhost:4101');
  });
});

for (const factory of await storeFactories()) {
  describe(`with only PORT=4101 set, every address the server gives says localhost:4101 (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: PanelServer;
    const EXPECTED = 'http://localhost:4101';

    before(async () => {
      ({ store, cleanup } = await factory.create());
      // The test server listens on a port of its own; PORT only feeds the configuration.
      server = await startPanelServer(store, { PORT: '4101' });
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    test('the panel: curl snippets on the help page and for a new token', async () => {
      const { client } = await signedIn(server, store, 'port-panel');
      const help = await client.get('/panel/help');
      assert.equal(help.status, 200);
      assert.match(help.text, /curl[^<]*http:\/\/localhost:4101\/v1\//);
      assert.doesNotMatch(help.text, /localhost:3000/);
      const { page: token } = await client.createCredential('/panel/tokens', 'ERP');
      assert.match(token.text, /curl -T export\.csv [^<]*http:\/\/localhost:4101\/panel\/api\/imports\/clientes/);
      assert.doesNotMatch(token.text, /localhost:3000/);
    });

    test('an upload answers a status_url on localhost:4101', async () => {
      const { client } = await signedIn(server, store, 'port-upload');
      const secret = (await client.createCredential('/panel/tokens', 'ERP')).secret!;
      const put = await request(`${server.baseUrl}/panel/api/imports/clientes`, {
        method: 'PUT',
        headers: bearer(secret),
        body: 'ID;NOMBRE\n1;Uno\n',
      });
      assert.equal(put.status, 202, put.text());
      const body = put.json();
      assert.equal(body.status_url, `${EXPECTED}/panel/api/imports/${body.import_id}`);
      await waitForImport(store, body.import_id);
    });

    test('/openapi.json lists localhost:4101 in servers, and /docs allows it in its CSP', async () => {
      const spec = await request(`${server.baseUrl}/openapi.json`);
      assert.equal(spec.status, 200);
      assert.deepEqual(
        spec.json().servers.map((s: { url: string }) => s.url),
        [server.baseUrl, EXPECTED],
      );
      const docs = await request(`${server.baseUrl}/docs`);
      const csp = String(docs.headers['content-security-policy'] ?? '');
      assert.match(csp, /connect-src 'self' http:\/\/localhost:4101(;|$)/, csp);
    });
  });
}

/** A port nothing listens on right now, for `serve --port`. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}

describe('mirador serve --port and mirador pull', () => {
  const dir = tempDir('mirador-base-url-');
  const env = { DATABASE_URL: `sqlite:${dir.path}/mirador.db` };
  after(() => dir.remove());

  test('serve --port N: OpenAPI servers and the docs CSP say localhost:N, over PORT', async () => {
    const port = await freePort();
    const server = await serveProcess({ ...env, PORT: '4101' }, ['--port', String(port)]);
    try {
      const expected = `http://localhost:${port}`;
      const spec = await request(`${server.baseUrl}/openapi.json`, { headers: { host: 'mirador.test' } });
      assert.deepEqual(
        spec.json().servers.map((s: { url: string }) => s.url),
        ['http://mirador.test', expected],
      );
      const docs = await request(`${server.baseUrl}/docs`);
      assert.match(String(docs.headers['content-security-policy']), new RegExp(`connect-src 'self' ${expected}(;|$)`));
    } finally {
      await server.stop();
    }
  });

  test('pull without --base-url goes to localhost:PORT', async () => {
    assert.equal(mirador(['company', 'create', 'pull-port', '--name', 'Pull'], env).code, 0);
    const port = await freePort();
    const server = await serveProcess(env, ['--port', String(port)]);
    try {
      const { key } = mirador(['key', 'create', 'pull-port', '--json'], env).json();
      const pulled = await miradorAsync(['pull', 'clientes', '--key', key], { ...env, PORT: String(port) });
      assert.equal(pulled.code, 0, pulled.stderr);
      assert.match(pulled.stderr, /Pulled 0 records of clientes/);
      const elsewhere = await miradorAsync(['pull', 'clientes', '--key', key], { ...env, PORT: String(await freePort()) });
      assert.notEqual(elsewhere.code, 0, 'another PORT is another server');
    } finally {
      await server.stop();
    }
  });
});
