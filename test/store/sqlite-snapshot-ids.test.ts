/**
 * Issue 24, point 4: SQLite snapshot ids are never reused. A database from
 * before the AUTOINCREMENT migration, written by the store as it was (which
 * did reuse a discarded snapshot's id), keeps every snapshot, its items and
 * its index through the upgrade, and never hands an id out twice after it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/sqlite-migrations.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/stores.js';
import { batches, spec, staged } from '../suites/store-suite.js';

const T1 = Date.parse('2026-01-10T08:00:00.000Z');
const T2 = Date.parse('2026-02-20T09:30:00.500Z');
const T3 = Date.parse('2026-03-01T00:00:00.001Z');
const dir = tempDir('mirador-snapshot-ids-');
after(() => dir.remove());

test('the AUTOINCREMENT migration keeps every snapshot and stops id reuse', async () => {
  const file = join(dir.path, 'old.db');
  const upgrade = SQLITE_MIGRATIONS.findIndex((sql) => sql.includes('snapshots_autoincrement'));
  assert.ok(upgrade > 0, 'the migration is in the list');

  // The schema as it was before the upgrade — plus the chunk map (migration 11) and indexes in
  // parts (14), without which this release's store cannot write: both go again before the
  // upgrade, which makes them anew.
  const chunkMap = SQLITE_MIGRATIONS.findIndex((sql) => sql.includes('CREATE TABLE chunk_map'));
  const parts = SQLITE_MIGRATIONS.findIndex((sql) => sql.includes('CREATE TABLE snapshot_indexes_parts'));
  assert.ok(chunkMap > upgrade && parts > chunkMap);
  const raw = new Database(file);
  for (const sql of SQLITE_MIGRATIONS.slice(0, upgrade)) raw.exec(sql);
  raw.exec(SQLITE_MIGRATIONS[chunkMap]!);
  raw.exec(SQLITE_MIGRATIONS[parts]!);
  raw.pragma(`user_version = ${upgrade}`);
  raw.close();

  const old = new SqliteStore(file);
  const companyId = (await old.createCompany('ids', 'Ids')).id;
  const live = await old.writeSnapshot(spec(companyId, T1), batches([staged('A', 'live'), staged('B', 'live')]));
  await old.publishSnapshot(live.snapshotId);
  const dropped = await old.writeSnapshot(spec(companyId, T2), batches([staged('A', 'dropped')]));
  await old.discardSnapshot(dropped.snapshotId);
  const kept = await old.writeSnapshot(spec(companyId, T3), batches([staged('A', 'kept')]));
  assert.equal(kept.snapshotId, dropped.snapshotId, 'before the upgrade a discarded id is given again (the bug)');
  const before = { live: await old.snapshotMeta(live.snapshotId), kept: await old.snapshotMeta(kept.snapshotId) };
  await old.close();
  const unmap = new Database(file);
  unmap.exec(`DROP TABLE chunk_map; ALTER TABLE snapshots DROP COLUMN base_snapshot_id;
    CREATE TABLE snapshot_indexes_whole (snapshot_id INTEGER NOT NULL, name TEXT NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (snapshot_id, name));
    INSERT INTO snapshot_indexes_whole SELECT snapshot_id, name, bytes FROM snapshot_indexes WHERE part = 0;
    DROP TABLE snapshot_indexes; ALTER TABLE snapshot_indexes_whole RENAME TO snapshot_indexes;`);
  unmap.close();

  const store = new SqliteStore(file);
  await store.migrate();
  try {
    assert.deepEqual(await store.snapshotMeta(live.snapshotId), before.live, 'the live snapshot, as it was');
    assert.deepEqual(await store.snapshotMeta(kept.snapshotId), before.kept, 'the staged one, as it was');
    assert.equal(await store.liveSnapshotId(companyId, 'clientes'), live.snapshotId);
    assert.ok(await store.findRecord(live.snapshotId, 'B'));

    await store.discardSnapshot(kept.snapshotId);
    const next = await store.writeSnapshot(spec(companyId, T3), batches([staged('A', 'next')]));
    assert.ok(next.snapshotId > kept.snapshotId, `next id ${next.snapshotId} after discarded ${kept.snapshotId}`);
    await store.publishSnapshot(next.snapshotId);
    assert.equal(await store.liveSnapshotId(companyId, 'clientes'), next.snapshotId);
  } finally {
    await store.close();
  }

  const check = new Database(file, { readonly: true });
  try {
    const table = check.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'snapshots'`).pluck().get() as string;
    assert.match(table, /id INTEGER PRIMARY KEY AUTOINCREMENT/);
    const indexes = check.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'snapshots' ORDER BY name`).pluck().all();
    assert.ok(indexes.includes('snapshots_by_state'), String(indexes));
    assert.ok(indexes.some((n) => String(n).startsWith('sqlite_autoindex_snapshots')), 'public_id stays UNIQUE');
    assert.deepEqual(check.pragma('foreign_key_check'), []);
    assert.equal(check.pragma('integrity_check', { simple: true }), 'ok');
  } finally {
    check.close();
  }
});
