/**
 * Issue 22, point 2: a backup taken while the server serves and an import
 * runs, restored into a new database, serves byte for byte what the original
 * served at the backup's moment, ETags included, to the same keys. SQLite:
 * `mirador backup` / `mirador restore`; PostgreSQL: the pg_dump / pg_restore
 * commands of docs/operations.md.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { bearer, request, type RawResponse } from '../helpers/http.js';
import { mirador, serveProcess } from '../helpers/cli.js';
import { customersCsv } from '../helpers/csv.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';
import { startServer } from '../helpers/test-server.js';
import { sleep } from '../helpers/timing.js';
import { openStore } from '../../src/store/open-store.js';

const pg = await postgresFactory();

/** What a client can observe of a response, minus what differs per request (X-Request-Id, Date). */
function observed(res: RawResponse) {
  const { etag, 'content-type': type, 'content-encoding': encoding, 'cache-control': cache, 'content-length': length } = res.headers;
  return { status: res.status, etag, type, encoding, cache, length, body: res.body.toString('base64') };
}

const PATHS = [
  '/v1/clientes',
  '/v1/clientes?limit=1000&offset=1000',
  '/v1/clientes?updated_since=2000-01-01&limit=7',
  '/v1/clientes?nombre=v1&limit=3',
  '/v1/clientes/C000010',
  '/v1/clientes/C999999',
  '/v1/articulos',
  '/v1/estado',
];

interface Backend {
  name: 'sqlite' | 'postgres';
  skip: string | false;
  fresh(): Promise<{ url: string; drop(): Promise<void> }>;
  /** Takes a backup of `url` into `file`, as docs/operations.md says. */
  backup(url: string, file: string): void;
  /** Restores `file` into the new database `url`. */
  restore(url: string, file: string): void;
}

const dir = tempDir('mirador-backup-');
after(() => dir.remove());
let n = 0;

const backends: Backend[] = [
  {
    name: 'sqlite',
    skip: false,
    fresh: async () => ({ url: `sqlite:${join(dir.path, `db-${++n}.db`)}`, drop: async () => {} }),
    backup: (url, file) => {
      const r = mirador(['backup', file, '--json'], { DATABASE_URL: url });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.json().bytes > 0);
    },
    restore: (url, file) => {
      const r = mirador(['restore', file], { DATABASE_URL: url });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Restored .*: 1 companies \(bk\)/);
    },
  },
  {
    name: 'postgres',
    skip: pg.skip,
    fresh: async () => freshPostgresDatabase(),
    backup: (url, file) => {
      const r = spawnSync('pg_dump', ['--format=custom', `--file=${file}`, `--dbname=${url}`], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    },
    restore: (url, file) => {
      const r = spawnSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${url}`, file], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    },
  },
];

for (const backend of backends) {
  describe(`backup and restore on ${backend.name}`, { skip: backend.skip }, () => {
    test('a backup taken during an import serves, restored, exactly what the original served at that moment', async () => {
      const original = await backend.fresh();
      const copy = await backend.fresh();
      const env = { DATABASE_URL: original.url, RATE_LIMIT_PER_MINUTE: '1000000' };
      const server = await serveProcess(env);
      let restored: Awaited<ReturnType<typeof startServer>> | undefined;
      let restoredStore: Awaited<ReturnType<typeof openStore>> | undefined;
      try {
        assert.equal(mirador(['company', 'create', 'bk', '--name', 'Backup'], env).code, 0);
        const { key } = mirador(['key', 'create', 'bk', '--json'], env).json();
        const v1 = join(dir.path, `${backend.name}-v1.csv`);
        writeFileSync(v1, customersCsv(3000, () => 'v1'));
        assert.equal(mirador(['import', 'bk', 'clientes', v1], env).code, 0);

        const ask = (base: string, path: string, headers: Record<string, string> = {}) =>
          request(`${base}${path}`, { headers: { ...bearer(key), 'x-request-id': 'same-on-both', ...headers } });
        const before = new Map<string, ReturnType<typeof observed>>();
        for (const path of PATHS) {
          for (const encoding of ['identity', 'gzip']) {
            before.set(`${encoding} ${path}`, observed(await ask(server.baseUrl, path, { 'accept-encoding': encoding })));
          }
        }

        // A large upload, queued and running while the backup is taken.
        const v2 = join(dir.path, `${backend.name}-v2.csv`);
        writeFileSync(v2, customersCsv(60000, () => 'v2'));
        const queued = mirador(['import', 'bk', 'clientes', v2, '--no-wait', '--json'], env).json();
        const status = () => mirador(['imports', 'bk', '--json'], env).json().find((j: { id: number }) => j.id === queued.id).status;
        for (let i = 0; i < 600 && status() !== 'running'; i++) await sleep(20);
        const file = join(dir.path, `${backend.name}.backup`);
        backend.backup(original.url, file);
        assert.equal(status(), 'running', 'the import was still running when the backup was done');

        backend.restore(copy.url, file);
        restoredStore = await openStore(copy.url);
        await restoredStore.migrate();
        restored = await startServer(restoredStore, { RATE_LIMIT_PER_MINUTE: '1000000' });
        for (const path of PATHS) {
          for (const encoding of ['identity', 'gzip']) {
            const got = observed(await ask(restored.baseUrl, path, { 'accept-encoding': encoding }));
            assert.deepEqual(got, before.get(`${encoding} ${path}`), `${encoding} ${path}`);
          }
          const etag = before.get(`identity ${path}`)!.etag as string | undefined;
          if (etag) assert.equal((await ask(restored.baseUrl, path, { 'if-none-match': etag })).status, 304, `${path}: the old ETag still matches`);
        }
      } finally {
        await restored?.close();
        await restoredStore?.close();
        await server.stop();
        await original.drop();
        await copy.drop();
      }
    });
  });
}

describe('mirador backup and restore refuse what they cannot do, changing nothing', () => {
  test('restore into a database that holds data, a file that is no backup, and a backup over an existing file', async () => {
    const url = `sqlite:${join(dir.path, 'busy.db')}`;
    const env = { DATABASE_URL: url };
    assert.equal(mirador(['company', 'create', 'busy', '--name', 'Busy'], env).code, 0);
    const file = join(dir.path, 'busy.backup');
    assert.equal(mirador(['backup', file], env).code, 0);

    const again = mirador(['backup', file], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists: a backup never overwrites a file/);

    const into = mirador(['restore', file], env);
    assert.equal(into.code, 1);
    assert.match(into.stderr, /is not empty \(it holds 1 company\): restore only into a new, empty database/);
    assert.equal(mirador(['company', 'list', '--json'], env).json().length, 1);

    const junk = join(dir.path, 'junk.backup');
    writeFileSync(junk, 'not a database at all, just some text that is long enough to not be a header');
    const fresh = { DATABASE_URL: `sqlite:${join(dir.path, 'fresh.db')}` };
    const bad = mirador(['restore', junk], fresh);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is not a SQLite database/);
    const missing = mirador(['restore', join(dir.path, 'nope.backup')], fresh);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /There is no file/);
    assert.equal(mirador(['company', 'list', '--json'], fresh).json().length, 0);
    assert.ok(!existsSync(`${file}.partial`));
  });

  test('on PostgreSQL they point at pg_dump and pg_restore', { skip: pg.skip }, async () => {
    const db = await freshPostgresDatabase();
    try {
      const r = mirador(['backup', join(dir.path, 'pg.backup')], { DATABASE_URL: db.url });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /pg_dump -Fc/);
    } finally {
      await db.drop();
    }
  });
});
