/**
 * Issue 22, point 5: an upgrade without downtime. A server runs on the
 * previous schema (the newest migration not yet applied), `mirador migrate`
 * of this release runs beside it, and the server goes on serving reads, 304s,
 * new keys and imports without a restart. `migrate` says whether that holds
 * for what it applies (src/store/migration-notes.ts).
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

const backends = [
  { name: 'sqlite', skip: false as const, latest: SQLITE_MIGRATIONS.length, fresh: async () => ({ url: `sqlite:${join(dir.path, 'up.db')}`, drop: async () => {} }) },
  { name: 'postgres', skip: pg.skip, latest: POSTGRES_MIGRATIONS.length, fresh: () => freshPostgresDatabase() },
];

test('both stores have the same number of migrations, so one version number means the same change', () => {
  assert.equal(SQLITE_MIGRATIONS.length, POSTGRES_MIGRATIONS.length);
});

for (const backend of backends) {
  // This release's code on the previous schema stands for the previous release: that holds only
  // when the newest migration is online. One that needs a stop is tested as such (below).
  if (!MIGRATION_NOTES[backend.latest]?.online) {
    offlineUpgrade(backend);
    continue;
  }
  describe(`upgrading ${backend.name} under a running server`, { skip: backend.skip }, () => {
    let db: { url: string; drop(): Promise<void> };
    let store: Store;
    let server: PanelServer;
    before(async () => {
      db = await backend.fresh();
      store = await openStore(db.url, { servesRequests: true });
      await store.migrate({ to: backend.latest - 1 });
      assert.deepEqual(await store.schemaVersion(), { current: backend.latest - 1, latest: backend.latest });
      server = await startPanelServer(store);
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
 * Puts a database of this release back in the previous release's shape, for
 * the newest migration: 11 (chunk_map; snapshots.base_snapshot_id on SQLite).
 * A test of a newer migration that needs a stop must say how to undo it here.
 */
async function rewindNewestMigration(backendName: string, url: string, latest: number) {
  assert.equal(latest, 11, 'the newest migration changed: say here how to undo it');
  if (backendName === 'sqlite') {
    const db = new Database(url.slice('sqlite:'.length));
    db.exec('DROP TABLE chunk_map; ALTER TABLE snapshots DROP COLUMN base_snapshot_id;');
    db.pragma(`user_version = ${latest - 1}`);
    db.close();
    return;
  }
  const client = new pgDriver.Client({ connectionString: url });
  await client.connect();
  await client.query('DROP TABLE chunk_map');
  await client.query('DELETE FROM schema_migrations WHERE version = $1', [latest]);
  await client.end();
}

function offlineUpgrade(backend: (typeof backends)[number]) {
  describe(`upgrading ${backend.name} across a migration that needs a stop`, { skip: backend.skip }, () => {
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
      await server.close();
      await store.close();
      await rewindNewestMigration(backend.name, db.url, backend.latest);

      const newest = MIGRATION_NOTES[backend.latest]!;
      const plan = await miradorAsync(['migrate', '--plan', '--json'], { DATABASE_URL: db.url });
      assert.equal(plan.code, 0, plan.stderr);
      assert.deepEqual(plan.json().pending.map((m: { version: number }) => m.version), [backend.latest]);
      assert.equal(plan.json().online, false);
      const text = await miradorAsync(['migrate', '--plan'], { DATABASE_URL: db.url });
      assert.match(text.stdout, new RegExp(`${backend.latest}: NEEDS A STOP`));
      assert.match(text.stdout, /Stop every instance of the previous release before migrating/);
      const migrated = await miradorAsync(['migrate'], { DATABASE_URL: db.url });
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.ok(migrated.stdout.includes(newest.note));

      store = await openStore(db.url, { servesRequests: true });
      assert.deepEqual(await store.schemaVersion(), { current: backend.latest, latest: backend.latest });
      server = await startPanelServer(store);
      try {
        const after = await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key) });
        assert.equal(after.status, 200);
        assert.equal(after.text(), before.text(), 'the same bytes');
        assert.equal(after.headers.etag, before.headers.etag);
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
