/** Contract §3: the `mirador` command, run as a child process over a real SQLite file. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bearer, request } from '../helpers/http.js';
import { mirador, serveProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/stores.js';

describe('mirador CLI', () => {
  const dir = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(dir.path, 'db', 'mirador.db')}` };
  after(() => dir.remove());

  test('migrate creates the schema and is idempotent', () => {
    const first = mirador(['migrate', '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    const created = first.json();
    assert.equal(created.backend, 'sqlite');
    assert.equal(created.from, 0);
    assert.equal(created.applied.length, created.to);
    const again = mirador(['migrate'], env);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /The sqlite schema is up to date \(version \d+\)\./);
  });

  test('company create and list, text and JSON', () => {
    const created = mirador(['company', 'create', 'acme', '--name', 'Acme S.L.', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.json().slug, 'acme');
    assert.equal(mirador(['company', 'create', 'beta-2', '--name', 'Beta'], env).code, 0);
    const list = mirador(['company', 'list', '--json'], env);
    assert.deepEqual(list.json().map((c: { slug: string }) => c.slug), ['acme', 'beta-2']);
    assert.match(mirador(['company', 'list'], env).stdout, /acme\s+Acme S\.L\./);
  });

  test('bad input: a clear message on stderr and a non-zero exit', () => {
    const cases: [string[], RegExp][] = [
      [['company', 'create', 'Bad_Slug', '--name', 'X'], /not a valid slug/],
      [['company', 'create', 'acme', '--name', 'Again'], /already exists/],
      [['company', 'create', 'nameless'], /--name/],
      [['company', 'create', '--name', 'X'], /missing required argument 'slug'/],
      [['key', 'create', 'nobody'], /no company with slug "nobody"/],
      [['key', 'create'], /missing required argument/],
      [['key', 'list', 'nobody'], /no company with slug "nobody"/],
      [['key', 'revoke', 'zzzzzzzz'], /no API key with prefix "zzzzzzzz"/],
      [['key', 'revoke', 'short'], /not a key prefix/],
      [['frobnicate'], /unknown command/],
      [['serve', '--workers', 'many'], /--workers/],
    ];
    for (const [args, message] of cases) {
      const r = mirador(args, env);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
    }
    const badConfig = mirador(['company', 'list'], { ...env, PORT: 'eighty' });
    assert.notEqual(badConfig.code, 0);
    assert.match(badConfig.stderr, /PORT must be an integer/);
  });

  describe('keys against a running server', () => {
    let server: Awaited<ReturnType<typeof serveProcess>>;
    before(async () => {
      server = await serveProcess(env);
    });
    after(async () => {
      await server?.stop();
    });

    test('create (shown once), use, list with last use, revoke', async () => {
      const created = mirador(['key', 'create', 'acme', '--label', 'BI', '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      const { key, prefix } = created.json();
      assert.deepEqual(Object.keys(created.json()), ['key', 'prefix']);
      assert.match(key, /^api_[a-z0-9]{8}_[0-9A-Za-z]{32,}$/);
      assert.equal(key.split('_')[1], prefix);
      const text = mirador(['key', 'create', 'acme'], env);
      assert.match(text.stdout, /api_[a-z0-9]{8}_[0-9A-Za-z]{32,}/);

      const res = await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) });
      assert.equal(res.status, 200);

      const listed = mirador(['key', 'list', 'acme', '--json'], env).json();
      const entry = listed.find((k: { prefix: string }) => k.prefix === prefix);
      assert.equal(entry.label, 'BI');
      assert.equal(entry.revoked_at, null);
      assert.ok(!JSON.stringify(listed).includes(key.split('_')[2]), 'the secret is never listed');

      const revoked = mirador(['key', 'revoke', prefix, '--json'], env);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.ok(revoked.json().revoked_at);
      // Another process revoked it: the server refuses it within a second.
      await new Promise((r) => setTimeout(r, 1000));
      const refused = await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) });
      assert.equal(refused.status, 401);
      assert.equal(refused.json().error, 'unauthorized');
      assert.match(mirador(['key', 'revoke', prefix], env).stdout, /already revoked/);
      assert.match(mirador(['key', 'list', 'acme'], env).stdout, new RegExp(`${prefix}\\s+BI`));
    });

    test('last use reaches the store after the server flushes or stops', async () => {
      const { key, prefix } = mirador(['key', 'create', 'acme', '--json'], env).json();
      await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) });
      await server.stop();
      const entry = mirador(['key', 'list', 'acme', '--json'], env).json().find((k: { prefix: string }) => k.prefix === prefix);
      assert.ok(entry.last_used_at, 'flushed on shutdown');
      server = await serveProcess(env);
    });

    test('sandbox bytes are identical across restarts', async () => {
      const before = await request(`${server.baseUrl}/v1/sandbox/clientes?limit=1000`);
      await server.stop();
      server = await serveProcess(env);
      const afterRestart = await request(`${server.baseUrl}/v1/sandbox/clientes?limit=1000`);
      assert.equal(before.status, 200);
      assert.deepEqual(afterRestart.body, before.body);
      assert.equal(afterRestart.headers.etag, before.headers.etag);
    });
  });
});
