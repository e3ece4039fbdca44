/**
 * Issue 18 from the command line, on both stores: `mirador token create|list|revoke` (point 4)
 * and `mirador import` of a `.csv.gz` (point 5).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { mirador } from '../helpers/cli.js';
import { customersCsv } from '../helpers/csv.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';

const postgres = await postgresFactory();

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`tokens and .csv.gz from the CLI (${backend})`, { skip: backend === 'postgres' && postgres.skip }, () => {
    const dir = tempDir();
    const env: Record<string, string> = { DATABASE_URL: `sqlite:${join(dir.path, 'm.db')}` };
    let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
    before(async () => {
      if (backend === 'postgres') {
        database = await freshPostgresDatabase();
        env.DATABASE_URL = database.url;
      }
      assert.equal(mirador(['migrate'], env).code, 0);
      assert.equal(mirador(['company', 'create', 'acme', '--name', 'Acme'], env).code, 0);
    });
    after(async () => {
      dir.remove();
      await database?.drop();
    });

    test('token create (shown once, --json), list, revoke; unknown slug and prefix are errors', () => {
      const created = mirador(['token', 'create', 'acme', '--label', 'ERP nightly', '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      assert.deepEqual(Object.keys(created.json()), ['key', 'prefix']);
      const { key: token, prefix } = created.json();
      assert.match(token, /^upl_[a-z0-9]{8}_[0-9A-Za-z]{32,}$/);
      assert.equal(token.split('_')[1], prefix);
      const text = mirador(['token', 'create', 'acme'], env);
      assert.match(text.stdout, /^Created upload token [a-z0-9]{8} for acme:\n\n {2}upl_[a-z0-9]{8}_[0-9A-Za-z]{32,}\n/);

      const listed = mirador(['token', 'list', 'acme', '--json'], env).json();
      assert.equal(listed.length, 2);
      const entry = listed.find((t: { prefix: string }) => t.prefix === prefix);
      assert.deepEqual(Object.keys(entry), ['prefix', 'label', 'created_at', 'last_used_at', 'revoked_at', 'expires_at', 'status']);
      assert.equal(entry.expires_at, null, 'upload tokens do not expire');
      assert.equal(entry.status, 'active');
      assert.equal(entry.label, 'ERP nightly');
      assert.ok(!JSON.stringify(listed).includes(token.split('_')[2]), 'the secret is never listed');
      assert.match(mirador(['token', 'list', 'acme'], env).stdout, new RegExp(`${prefix}\\s+ERP nightly`));
      // Tokens are not keys, and keys are not tokens.
      assert.deepEqual(mirador(['key', 'list', 'acme', '--json'], env).json(), []);
      assert.match(mirador(['key', 'list', 'acme'], env).stdout, /No API keys for acme/);

      const revoked = mirador(['token', 'revoke', prefix, '--json'], env);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.deepEqual(Object.keys(revoked.json()), ['prefix', 'revoked_at']);
      assert.ok(revoked.json().revoked_at);
      assert.match(mirador(['token', 'revoke', prefix], env).stdout, new RegExp(`Upload token ${prefix} was already revoked`));
      assert.ok(mirador(['token', 'list', 'acme', '--json'], env).json().find((t: { prefix: string }) => t.prefix === prefix).revoked_at);

      for (const [args, message] of [
        [['token', 'create', 'nobody'], /There is no company with slug "nobody"/],
        [['token', 'list', 'nobody'], /There is no company with slug "nobody"/],
        [['token', 'revoke', 'zzzzzzzz'], /There is no upload token with prefix "zzzzzzzz"/],
        [['token', 'revoke', 'short'], /"short" is not a token prefix/],
        [['token', 'create'], /missing required argument 'slug'/],
      ] as [string[], RegExp][]) {
        const r = mirador(args, env);
        assert.equal(r.code, 1, args.join(' '));
        assert.match(r.stderr, message, args.join(' '));
        assert.equal(r.stdout, '', args.join(' '));
      }
    });

    test('token revoke refuses an API key prefix, key revoke a token prefix: nothing is revoked', () => {
      const key = mirador(['key', 'create', 'acme', '--json'], env).json();
      const token = mirador(['token', 'create', 'acme', '--json'], env).json();
      const wrongToken = mirador(['token', 'revoke', key.prefix], env);
      assert.equal(wrongToken.code, 1);
      assert.equal(wrongToken.stderr.trim(), `mirador: ${key.prefix} is an API key, not an upload token: nothing was revoked. Use "mirador key revoke ${key.prefix}".`);
      const wrongKey = mirador(['key', 'revoke', token.prefix, '--json'], env);
      assert.equal(wrongKey.code, 1);
      assert.match(wrongKey.stderr, new RegExp(`${token.prefix} is an upload token, not an API key: nothing was revoked\\. Use "mirador token revoke ${token.prefix}"`));
      const keys = mirador(['key', 'list', 'acme', '--json'], env).json();
      const tokens = mirador(['token', 'list', 'acme', '--json'], env).json();
      assert.equal(keys.find((k: { prefix: string }) => k.prefix === key.prefix).revoked_at, null);
      assert.equal(tokens.find((t: { prefix: string }) => t.prefix === token.prefix).revoked_at, null);
    });

    test('import of a .csv.gz: the same records as the plain file; corrupt and oversized ones store nothing', async () => {
      const plain = customersCsv(500);
      const plainPath = join(dir.path, 'clientes.csv');
      const gzPath = join(dir.path, 'clientes.csv.gz');
      writeFileSync(plainPath, plain);
      writeFileSync(gzPath, gzipSync(plain));
      const gz = mirador(['import', 'acme', 'clientes', gzPath, '--json'], env);
      assert.equal(gz.code, 0, gz.stderr);
      assert.deepEqual([gz.json().status, gz.json().inserted, gz.json().filename, gz.json().bytes], ['succeeded', 500, 'clientes.csv.gz', plain.length]);
      if (database) {
        // On PostgreSQL the command prepares the import from a second read of the file while it stores it:
        // both reads decompress to the same bytes, so what was prepared is used, not discarded.
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        const { rows } = await client.query('SELECT s.id, s.created_at < i.started_at AS prepared FROM snapshots s JOIN imports i ON i.id = s.import_id');
        await client.end();
        assert.deepEqual(rows.map((r) => [Number(r.id), r.prepared]), [[1, true]]);
      }
      const again = mirador(['import', 'acme', 'clientes', plainPath, '--json'], env);
      assert.deepEqual([again.json().status, again.json().unchanged, again.json().updated, again.json().unchanged_snapshot], ['succeeded', 500, 0, true]);
      // The human report says the live snapshot was kept.
      const human = mirador(['import', 'acme', 'clientes', plainPath], env);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /nothing changed: the live snapshot was kept as it was/);
      const history = () => mirador(['imports', 'acme', '--json'], env).json();
      assert.equal(history()[2].size_bytes, plain.length, 'stored decompressed');

      const truncated = join(dir.path, 'truncated.csv.gz');
      writeFileSync(truncated, gzipSync(plain).subarray(0, 2000));
      const broken = mirador(['import', 'acme', 'clientes', truncated], env);
      assert.equal(broken.code, 1);
      assert.equal(broken.stderr.trim(), `mirador: "${truncated}": The upload is not a valid gzip file (unexpected end of file): nothing was stored.`);
      const notGzip = join(dir.path, 'plain-named.csv.gz');
      writeFileSync(notGzip, plain);
      assert.match(mirador(['import', 'acme', 'clientes', notGzip], env).stderr, /not a valid gzip file \(incorrect header check\)/);

      const bomb = join(dir.path, 'bomb.csv.gz');
      writeFileSync(bomb, gzipSync(Buffer.alloc(50 * 1024 * 1024, 'a')));
      const big = mirador(['import', 'acme', 'clientes', bomb, '--json'], { ...env, MAX_UPLOAD_BYTES: '1000000' });
      assert.equal(big.code, 1);
      assert.equal(big.stdout, '');
      assert.match(big.stderr, /is over MAX_UPLOAD_BYTES \(1000000 bytes, decompressed\): nothing was stored/);
      assert.equal(history().length, 3);
    });
  });
}
