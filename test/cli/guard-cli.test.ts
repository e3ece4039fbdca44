/** Issue 9, point 5, from the command line: the guard's settings and the decision on a held import. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { mirador } from '../helpers/cli.js';
import { customersCsv } from '../helpers/csv.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';

const postgres = await postgresFactory();
const SAMPLE = (kind: string) => fileURLToPath(new URL(`../../../samples/${kind}.csv`, import.meta.url));

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
    // Issue 18, point 3: held is not success (it exited 0), and the message names the real slug and id.
    assert.equal(held.code, 3, held.stderr);
    assert.match(held.stdout, /awaiting_confirmation/);
    assert.match(held.stdout, /would remove 10 of 20 records/);
    const id = mirador(['imports', 'acme', '--json'], env).json()[0].id;
    assert.match(held.stdout, new RegExp(`Confirm with "mirador imports acme confirm ${id}" or reject with "mirador imports acme reject ${id}"`));
    assert.doesNotMatch(held.stdout, /<slug>/);
    assert.match(held.stderr, new RegExp(`import ${id} of clientes for acme is held for confirmation`));
    const confirmed = mirador(['imports', 'acme', 'confirm', String(id), '--json'], env);
    assert.equal(confirmed.code, 0, confirmed.stderr);
    assert.equal(confirmed.json().status, 'succeeded');
    assert.equal(mirador(['imports', 'acme', '--json'], env).json()[0].status, 'succeeded');

    assert.equal(mirador(['import', 'acme', 'clientes', file('v3.csv', 2)], env).code, 3);
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
    // --json prints the report, and exits 3 too.
    const heldJson = mirador(['import', 'acme', 'clientes', file('v5.csv', 1), '--json'], env);
    assert.equal(heldJson.code, 3, heldJson.stderr);
    assert.equal(heldJson.json().status, 'awaiting_confirmation');
    assert.equal(mirador(['imports', 'acme', 'reject', String(heldJson.json().import_id)], env).code, 0);
    assert.match(mirador(['imports', 'acme', 'confirm'], env).stderr, /needs the import id/);
  });

  // Issue 18, point 1: `mirador import acme obras samples/articulos.csv` replaced 80 works with
  // 300 articles whose nombre, cliente_id_erp and estado were null.
  test('the column-drift guard: articles imported as works are held (exit 3), without data and with', () => {
    assert.equal(mirador(['company', 'create', 'works', '--name', 'Works'], env).code, 0);
    const first = mirador(['import', 'works', 'obras', SAMPLE('articulos')], env);
    assert.equal(first.code, 3, first.stderr);
    assert.match(first.stdout, /awaiting_confirmation/);
    assert.match(first.stdout, /it looks like an export of articulos, not obras \(articulos: 3 fields fed, 0 unfed; obras: 1 field fed, 3 unfed\)/);
    const firstId = mirador(['imports', 'works', '--json'], env).json()[0].id;
    assert.match(first.stdout, new RegExp(`mirador imports works reject ${firstId}`));
    assert.equal(mirador(['imports', 'works', 'reject', String(firstId)], env).code, 0);

    const works = mirador(['import', 'works', 'obras', SAMPLE('obras'), '--json'], env);
    assert.equal(works.code, 0, works.stderr);
    assert.deepEqual([works.json().status, works.json().inserted], ['succeeded', 80]);
    const drift = mirador(['import', 'works', 'obras', SAMPLE('articulos')], env);
    assert.equal(drift.code, 3, drift.stderr);
    assert.match(drift.stdout, /its header shares 6 of its 60 column names with the live data's 50:/);
    assert.match(drift.stdout, /appeared "DESCRIPCION_LARGA", "FAMILIA", .* and 34 more;/);
    assert.match(drift.stdout, /disappeared "NOMBRE", "CLIENTE", .* and 24 more\./);
    // A held import blocks the kind's queue until it is decided.
    assert.equal(mirador(['imports', 'works', 'reject', String(mirador(['imports', 'works', '--json'], env).json()[0].id)], env).code, 0);
    const asJson = mirador(['import', 'works', 'obras', SAMPLE('articulos'), '--json'], env);
    assert.equal(asJson.code, 3, asJson.stderr);
    assert.deepEqual([asJson.json().column_drift.shared, asJson.json().column_drift.appeared_count], [6, 54]);
    const confirmed = mirador(['imports', 'works', 'confirm', String(asJson.json().import_id), '--json'], env);
    assert.equal(confirmed.code, 0, confirmed.stderr);
    assert.equal(confirmed.json().status, 'succeeded');
  });

  test('the report shows the mapping, each warning once, and no made-up shape for a header it could not read', () => {
    assert.equal(mirador(['company', 'create', 'report', '--name', 'Report'], env).code, 0);
    const path = join(dir.path, 'articulos.csv');
    writeFileSync(path, 'CODIGO;DESCRIPCION;PRECIO_VENTA\r\nA1;Tubo;1,50\r\nA2;Codo;doce\r\n');
    const r = mirador(['import', 'report', 'articulos', path], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /3 columns, utf-8, delimiter ";", \d+ ms/);
    assert.match(r.stdout, /mapping \(field <- column\):\n {4}id_erp +<- "CODIGO"\n {4}codigo +<- "CODIGO"\n {4}nombre +<- "DESCRIPCION"\n {4}unidad +<- \(no column\)\n {4}precio +<- "PRECIO_VENTA"/);
    assert.match(r.stdout, /1 warnings:\n {4}Line 3: "doce" in column "PRECIO_VENTA" is not a number/);
    assert.doesNotMatch(r.stdout, /line 3: Line 3/i);
    const empty = join(dir.path, 'empty.csv');
    writeFileSync(empty, '');
    const failed = mirador(['import', 'report', 'articulos', empty], env);
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /error: The file is empty/);
    assert.doesNotMatch(failed.stdout, /\?|delimiter null|0 columns/);
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
