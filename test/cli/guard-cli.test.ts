/** Issue 9, point 5, from the command line: the guard's settings and the decision on a held import. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { mirador } from '../helpers/cli.js';
import { customersCsv } from '../helpers/csv.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';

const postgres = await postgresFactory();

for (const backend of ['sqlite', 'postgres'] as const) describe(`mass-deletion guard from the CLI (${backend})`, { skip: backend === 'postgres' && postgres.skip }, () => {
  const dir = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(dir.path, 'm.db')}` };
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
  before(async () => {
    if (backend !== 'postgres') return;
    // On PostgreSQL, `mirador import` prepares each import while it stores the file.
    database = await freshPostgresDatabase();
    env.DATABASE_URL = database.url;
    assert.equal(mirador(['migrate'], env).code, 0);
  });
  after(async () => {
    dir.remove();
    await database?.drop();
  });
  const file = (name: string, rows: number) => {
    const path = join(dir.path, name);
    writeFileSync(path, customersCsv(rows));
    return path;
  };

  test('company guard shows and sets the thresholds', () => {
    assert.equal(mirador(['company', 'create', 'acme', '--name', 'Acme'], env).code, 0);
    assert.deepEqual(mirador(['company', 'guard', 'acme', '--json'], env).json(), { enabled: true, min_records: 100, max_fraction: 0.2 });
    const set = mirador(['company', 'guard', 'acme', '--min-records', '3', '--max-fraction', '0.1', '--json'], env);
    assert.deepEqual(set.json(), { enabled: true, min_records: 3, max_fraction: 0.1 });
    assert.match(mirador(['company', 'guard', 'acme', '--max-fraction', '2'], env).stderr, /--max-fraction/);
    assert.notEqual(mirador(['company', 'guard', 'acme', '--on', '--off'], env).code, 0);
  });

  test('a held import waits; confirm applies it, reject keeps the old data', async () => {
    const first = mirador(['import', 'acme', 'clientes', file('v1.csv', 20), '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual([first.json().status, first.json().inserted], ['succeeded', 20]);
    // The job's own count is exact once it ends, however it was applied.
    assert.equal(mirador(['imports', 'acme', '--json'], env).json()[0].rows_read, 20);
    const held = mirador(['import', 'acme', 'clientes', file('v2.csv', 10)], env);
    assert.equal(held.code, 0, held.stderr);
    assert.match(held.stdout, /awaiting_confirmation/);
    assert.match(held.stdout, /would remove 10 of 20 records/);
    const id = mirador(['imports', 'acme', '--json'], env).json()[0].id;
    const confirmed = mirador(['imports', 'acme', 'confirm', String(id), '--json'], env);
    assert.equal(confirmed.code, 0, confirmed.stderr);
    assert.equal(confirmed.json().status, 'succeeded');
    assert.equal(mirador(['imports', 'acme', '--json'], env).json()[0].status, 'succeeded');

    mirador(['import', 'acme', 'clientes', file('v3.csv', 2)], env);
    const id3 = mirador(['imports', 'acme', '--json'], env).json()[0].id;
    if (database) {
      // Each import was concluded with the snapshot prepared while its file was stored: none
      // was discarded and written again (PostgreSQL's ids would show the gap).
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query('SELECT id FROM snapshots ORDER BY id');
      // Written before its import was claimed: prepared, not applied after the claim.
      const prepared = await client.query('SELECT bool_and(s.created_at < i.started_at) AS all FROM snapshots s JOIN imports i ON i.id = s.import_id');
      await client.end();
      assert.deepEqual(rows.map((r) => Number(r.id)), [1, 2, 3]);
      assert.equal(prepared.rows[0].all, true);
    }
    assert.match(mirador(['imports', 'acme', 'reject', String(id3)], env).stdout, /rejected/);
    assert.equal(mirador(['imports', 'acme', '--json'], env).json()[0].status, 'rejected');
    const again = mirador(['imports', 'acme', 'confirm', String(id3)], env);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /not awaiting confirmation/);
    assert.match(mirador(['imports', 'acme', 'approve', '1'], env).stderr, /Unknown action/);
    assert.match(mirador(['imports', 'acme', 'confirm'], env).stderr, /needs the import id/);
  });

  test('--no-wait returns once the file is queued, and prepares nothing', async () => {
    const queued = mirador(['import', 'acme', 'clientes', file('v4.csv', 20), '--no-wait', '--json'], env);
    assert.equal(queued.code, 0, queued.stderr);
    assert.equal(queued.json().status, 'queued');
    assert.equal(mirador(['imports', 'acme', '--json'], env).json()[0].status, 'queued');
    if (database) {
      // Preparing is for the command that waits: nothing may be left written and unpublished.
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM snapshots WHERE state IN ('staging', 'staged')`);
      await client.end();
      assert.equal(rows[0].n, 0);
    }
  });
});
