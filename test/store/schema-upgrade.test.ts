/**
 * Issue 22, point 5: an upgrade without downtime. A server runs on the
 * previous schema (the newest migration not yet applied), `mirador migrate`
 * of this release runs beside it, and the server goes on serving reads, 304s,
 * new keys and imports without a restart. `migrate` says whether that holds
 * for what it applies (src/store/migration-notes.ts). The newest migration
 * that needs a stop is tested too: from the schema before it, `migrate` says
 * to stop the old instances, and what was written before is served the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, request } from '../helpers/http.js';
import { miradorAsync } from '../helpers/cli-async.js';
import { customersCsv } from '../helpers/csv.js';
import { companyWithKey } from '../helpers/test-server.js';
import { credentialFor, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';
import { MIGRATION_NOTES } from '../../src/store/migration-notes.js';
import { openStore } from '../../src/store/open-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/sqlite-migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/postgres-migrations.js';
import type { Store } from '../../src/store/store.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pgDriver from 'pg';

const pg = await postgresFactory();
const dir = tempDir('mirador-upgrade-');
after(() => dir.remove());
let files = 0;

const backends = [
  { name: 'sqlite' as const, skip: false as const, latest: SQLITE_MIGRATIONS.length, fresh: async () => ({ url: `sqlite:${join(dir.path, `up-${++files}.db`)}`, drop: async () => {} }) },
  { name: 'postgres' as const, skip: pg.skip, latest: POSTGRES_MIGRATIONS.length, fresh: () => freshPostgresDatabase() },
];

test('both stores have the same number of migrations, so one version number means the same change', () => {
  assert.equal(SQLITE_MIGRATIONS.length, POSTGRES_MIGRATIONS.length);
});

/** The newest migration that needs the old instances stopped. */
const NEWEST_NEEDING_A_STOP = Math.max(
  ...Object.keys(MIGRATION_NOTES).map(Number).filter((v) => v > 1 && !MIGRATION_NOTES[v]!.online),
);

for (const backend of backends) {
  // This release's code on the previous schema stands for the previous release: that holds only
  // when the newest migration is online. The newest one that needs a stop is tested as such (below).
  if (MIGRATION_NOTES[backend.latest]?.online) onlineUpgrade(backend);
  offlineUpgrade(backend, NEWEST_NEEDING_A_STOP);
}

function onlineUpgrade(backend: (typeof backends)[number]) {
  describe(`upgrading ${backend.name} under a running server`, { skip: backend.skip }, () => {
    let db: { url: string; drop(): Promise<void> };
    let store: Store;
    let server: PanelServer;
    before(async () => {
      db = await backend.fresh();
      store = await openStore(db.url, { servesRequests: true });
      await store.migrate({ to: backend.latest - 1 });
      assert.deepEqual(await store.schemaVersion(), { current: backend.latest - 1, latest: backend.latest });
      // The reader below asks as fast as the server answers while `mirador migrate` runs: on a fast
      // machine that passed the default 600 a minute (a 429), which is not what is tested here.
      server = await startPanelServer(store, { RATE_LIMIT_PER_MINUTE: '1000000000' });
    });
    after(async () => {
      await server?.close();
      await store?.close();
      await db?.drop();
    });

    test('migrate --plan, then migrate, while the server serves: reads, 304s, new keys and imports go on', async () => {
      const { company, key } = await companyWithKey(store, 'up');
      const upload = await credentialFor(store, company.id, 'upload');
      const put = (body: Buffer) =>
        request(`${server.baseUrl}/panel/api/imports/clientes`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${upload.token}`, 'content-type': 'text/csv' },
          body,
        });
      const first = await put(customersCsv(500, () => 'v1'));
      assert.equal(first.status, 202, first.text());
      assert.equal((await waitForImport(store, first.json().import_id)).status, 'succeeded');
      const list = await request(`${server.baseUrl}/v1/clientes?limit=5`, { headers: bearer(key) });
      assert.equal(list.status, 200);

      const newest = MIGRATION_NOTES[backend.latest];
      const plan = await miradorAsync(['migrate', '--plan', '--json'], { DATABASE_URL: db.url });
      assert.equal(plan.code, 0, plan.stderr);
      assert.deepEqual(plan.json().pending.map((m: { version: number }) => m.version), [backend.latest]);
      assert.equal(plan.json().online, newest?.online ?? false);
      assert.equal((await store.schemaVersion()).current, backend.latest - 1, '--plan applies nothing');

      // Readers all along the migration.
      let reading = true;
      const failures: string[] = [];
      const reader = (async () => {
        while (reading) {
          const res = await request(`${server.baseUrl}/v1/clientes/C000007`, { headers: bearer(key) });
          if (res.status !== 200) failures.push(`${res.status} ${res.text()}`);
        }
      })();
      const migrated = await miradorAsync(['migrate'], { DATABASE_URL: db.url });
      reading = false;
      await reader;
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.match(migrated.stdout, new RegExp(`${backend.latest}: online`));
      assert.match(migrated.stdout, /Instances of the previous release keep serving on it: restart them one at a time/);
      assert.deepEqual(failures, []);
      assert.equal((await store.schemaVersion()).current, backend.latest);

      // The same server, not restarted.
      const again = await request(`${server.baseUrl}/v1/clientes?limit=5`, { headers: { ...bearer(key), 'if-none-match': list.headers.etag as string } });
      assert.equal(again.status, 304);
      const fresh = await credentialFor(store, company.id, 'read');
      assert.equal((await request(`${server.baseUrl}/v1/clientes?limit=1`, { headers: bearer(fresh.token) })).status, 200, 'a key made after the migration');
      const second = await put(customersCsv(600, () => 'v2'));
      assert.equal(second.status, 202, second.text());
      assert.equal((await waitForImport(store, second.json().import_id)).status, 'succeeded');
      const after = (await request(`${server.baseUrl}/v1/clientes?limit=1`, { headers: bearer(key) })).json();
      assert.equal(after.total, 600);
      assert.equal(after.items[0].nombre, 'v2');
    });
  });
}

/**
 * How to put a database of this release back in the shape it had before each
 * migration since the newest that needs a stop (for the test of that one).
 * A newer migration must say here how to undo it.
 */
const UNDO: Readonly<Record<number, { sqlite: string; postgres: string }>> = {
  14: {
    sqlite: `CREATE TABLE snapshot_indexes_whole (snapshot_id INTEGER NOT NULL, name TEXT NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (snapshot_id, name));
      INSERT INTO snapshot_indexes_whole SELECT snapshot_id, name, bytes FROM snapshot_indexes WHERE part = 0;
      DROP TABLE snapshot_indexes; ALTER TABLE snapshot_indexes_whole RENAME TO snapshot_indexes;`,
    postgres: `DELETE FROM snapshot_indexes WHERE part > 0; ALTER TABLE snapshot_indexes DROP CONSTRAINT snapshot_indexes_pkey;
      ALTER TABLE snapshot_indexes DROP COLUMN part; ALTER TABLE snapshot_indexes ADD PRIMARY KEY (snapshot_id, name);`,
  },
  13: {
    sqlite: 'SELECT 1;',
    postgres: `ALTER TABLE thin_chunks ALTER COLUMN bytes SET COMPRESSION default; ALTER TABLE chunks ALTER COLUMN offsets SET STORAGE EXTENDED;
      ALTER TABLE thin_chunks ALTER COLUMN bounds SET STORAGE EXTENDED; ALTER TABLE snapshot_indexes ALTER COLUMN bytes SET STORAGE EXTENDED;`,
  },
  12: {
    sqlite: 'DROP TABLE import_packed_blobs; ALTER TABLE imports DROP COLUMN file_encoding;',
    postgres: 'DROP TABLE import_packed_blobs; ALTER TABLE imports DROP COLUMN file_encoding;',
  },
  11: {
    sqlite: 'DROP TABLE chunk_map; ALTER TABLE snapshots DROP COLUMN base_snapshot_id;',
    postgres: 'DROP TABLE chunk_map;',
  },
};

/** Undoes the migrations after `version`, newest first, leaving the database at `version`. */
async function rewindTo(backendName: 'sqlite' | 'postgres', url: string, version: number, latest: number) {
  const steps: string[] = [];
  for (let v = latest; v > version; v--) {
    assert.ok(UNDO[v], `migration ${v}: say in UNDO how to undo it`);
    steps.push(UNDO[v]![backendName]);
  }
  if (backendName === 'sqlite') {
    const db = new Database(url.slice('sqlite:'.length));
    for (const step of steps) db.exec(step);
    db.pragma(`user_version = ${version}`);
    db.close();
    return;
  }
  const client = new pgDriver.Client({ connectionString: url });
  await client.connect();
  for (const step of steps) await client.query(step);
  await client.query('DELETE FROM schema_migrations WHERE version > $1', [version]);
  await client.end();
}

function offlineUpgrade(backend: (typeof backends)[number], needsStop: number) {
  describe(`upgrading ${backend.name} across a migration that needs a stop (${needsStop})`, { skip: backend.skip }, () => {
    let db: { url: string; drop(): Promise<void> };
    before(async () => {
      db = await backend.fresh();
    });
    after(async () => {
      await db?.drop();
    });

    test('migrate --plan and migrate say to stop the old instances; after it, the data written before is served the same, ETags included', async () => {
      let store = await openStore(db.url, { servesRequests: true });
      await store.migrate();
      let server = await startPanelServer(store);
      const { company, key } = await companyWithKey(store, 'stop');
      const upload = await credentialFor(store, company.id, 'upload');
      const put = (body: Buffer) =>
        request(`${server.baseUrl}/panel/api/imports/clientes`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${upload.token}`, 'content-type': 'text/csv' },
          body,
        });
      const first = await put(customersCsv(500, () => 'v1'));
      assert.equal(first.status, 202, first.text());
      assert.equal((await waitForImport(store, first.json().import_id)).status, 'succeeded');
      const before = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key) });
      assert.equal(before.status, 200);
      // Filters read the snapshot's indexes, stored by the schema of then.
      const filtered = '/v1/clientes?q=c00004&nombre=v1';
      const filteredBefore = await request(`${server.baseUrl}${filtered}`, { headers: bearer(key) });
      assert.equal(filteredBefore.status, 200, filteredBefore.text());
      assert.ok(filteredBefore.json().items.length > 0, 'the filter finds customers');
      await server.close();
      await store.close();
      await rewindTo(backend.name, db.url, needsStop - 1, backend.latest);

      const pending = Array.from({ length: backend.latest - needsStop + 1 }, (_, i) => needsStop + i);
      const plan = await miradorAsync(['migrate', '--plan', '--json'], { DATABASE_URL: db.url });
      assert.equal(plan.code, 0, plan.stderr);
      assert.deepEqual(plan.json().pending.map((m: { version: number }) => m.version), pending);
      assert.equal(plan.json().online, false);
      const text = await miradorAsync(['migrate', '--plan'], { DATABASE_URL: db.url });
      assert.match(text.stdout, new RegExp(`${needsStop}: NEEDS A STOP`));
      for (const v of pending.slice(1)) assert.match(text.stdout, new RegExp(`${v}: online`));
      assert.match(text.stdout, /Stop every instance of the previous release before migrating/);
      const migrated = await miradorAsync(['migrate'], { DATABASE_URL: db.url });
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.ok(migrated.stdout.includes(MIGRATION_NOTES[needsStop]!.note));

      store = await openStore(db.url, { servesRequests: true });
      assert.deepEqual(await store.schemaVersion(), { current: backend.latest, latest: backend.latest });
      server = await startPanelServer(store);
      try {
        const after = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key) });
        assert.equal(after.status, 200);
        assert.equal(after.text(), before.text(), 'the same bytes');
        assert.equal(after.headers.etag, before.headers.etag);
        const filteredAfter = await request(`${server.baseUrl}${filtered}`, { headers: bearer(key) });
        assert.equal(filteredAfter.text(), filteredBefore.text(), 'the same filtered page, from indexes stored before the migration');
        const again = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: { ...bearer(key), 'if-none-match': before.headers.etag as string } });
        assert.equal(again.status, 304);
        // A re-import on the migrated database shares the chunks the migration mapped.
        const second = await put(customersCsv(600, () => 'v1'));
        assert.equal(second.status, 202, second.text());
        assert.equal((await waitForImport(store, second.json().import_id)).status, 'succeeded');
        const list = (await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key) })).json();
        assert.equal(list.total, 600);
      } finally {
        await server.close();
        await store.close();
      }
    });
  });
}
