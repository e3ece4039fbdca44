/** `mirador user create` (contract §3), and its user signing in to the panel of a real `mirador serve`. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { verifyPassword } from '../../src/domain/passwords.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { mirador, serveProcess } from '../helpers/cli.js';
import { csv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { PanelClient, waitForImport } from '../helpers/panel.js';
import { tempDir } from '../helpers/stores.js';

describe('mirador user create', () => {
  const dir = tempDir();
  const file = join(dir.path, 'mirador.db');
  const env = { DATABASE_URL: `sqlite:${file}` };
  after(() => dir.remove());

  test('creates an administrator with a scrypt hash from --password-stdin; the email is kept in lower case', async () => {
    assert.equal(mirador(['company', 'create', 'acme', '--name', 'Acme S.L.'], env).code, 0);
    const r = mirador(['user', 'create', 'acme', ' Ana@Acme.Example ', '--password-stdin', '--json'], env, 'una contraseña larga\n');
    assert.equal(r.code, 0, r.stderr);
    const out = r.json();
    assert.deepEqual([out.company, out.email], ['acme', 'ana@acme.example']);
    const store = new SqliteStore(file);
    try {
      const user = (await store.userByEmail('ana@acme.example'))!;
      assert.match(user.passwordHash, /^scrypt\$\d+\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
      assert.equal(await verifyPassword('una contraseña larga', user.passwordHash), true, 'the final line break is not part of it');
      assert.equal(await verifyPassword('una contraseña larga\n', user.passwordHash), false);
    } finally {
      await store.close();
    }
    const text = mirador(['user', 'create', 'acme', 'luis@acme.example', '--password-stdin'], env, 'otra contraseña larga');
    assert.match(text.stdout, /Created panel user luis@acme\.example for acme/);
  });

  test('per-user salts: the same password never gives the same hash', async () => {
    assert.equal(mirador(['user', 'create', 'acme', 'eva@acme.example', '--password-stdin'], env, 'otra contraseña larga').code, 0);
    const store = new SqliteStore(file);
    try {
      const [luis, eva] = await Promise.all([store.userByEmail('luis@acme.example'), store.userByEmail('eva@acme.example')]);
      assert.notEqual(luis!.passwordHash, eva!.passwordHash);
    } finally {
      await store.close();
    }
  });

  test('bad input: a clear message and a non-zero exit', () => {
    const cases: [string[], string | undefined, RegExp][] = [
      [['user', 'create', 'acme', 'ana@acme.example', '--password-stdin'], 'otra contraseña larga', /already exists/],
      [['user', 'create', 'nobody', 'x@y.example', '--password-stdin'], 'otra contraseña larga', /no company with slug "nobody"/],
      [['user', 'create', 'acme', 'not-an-email', '--password-stdin'], 'otra contraseña larga', /not an email address/],
      [['user', 'create', 'acme', 'short@acme.example', '--password-stdin'], 'corta', /at least 10 characters/],
      // No terminal to prompt on, and no --password-stdin.
      [['user', 'create', 'acme', 'tty@acme.example'], '', /--password-stdin/],
    ];
    for (const [args, input, message] of cases) {
      const r = mirador(args, env, input);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
    }
  });

  test("the user signs in to `mirador serve`'s panel, and an upload token's file is imported by the server's worker", async () => {
    const server = await serveProcess(env);
    try {
      const client = new PanelClient(server.baseUrl);
      assert.equal((await client.signIn('ana@acme.example', 'una contraseña larga')).status, 303);
      const token = (await client.createCredential('/panel/tokens', 'ERP')).secret!;
      const put = await request(`${server.baseUrl}/panel/api/imports/clientes`, {
        method: 'PUT',
        headers: bearer(token),
        body: csv([['CODIGO', 'NOMBRE'], ['C1', 'Uno']]),
      });
      assert.equal(put.status, 202, put.text());
      const store = new SqliteStore(file);
      try {
        assert.equal((await waitForImport(store, put.json().import_id)).status, 'succeeded');
      } finally {
        await store.close();
      }
    } finally {
      await server.stop();
    }
  });
});
