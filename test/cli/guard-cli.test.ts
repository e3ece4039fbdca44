/** Issue 9, point 5, from the command line: the guard's settings and the decision on a held import. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { mirador } from '../helpers/cli.js';
import { customersCsv } from '../helpers/csv.js';
import { tempDir } from '../helpers/stores.js';

describe('mass-deletion guard from the CLI', () => {
  const dir = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(dir.path, 'm.db')}` };
  after(() => dir.remove());
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

  test('a held import waits; confirm applies it, reject keeps the old data', () => {
    assert.equal(mirador(['import', 'acme', 'clientes', file('v1.csv', 20)], env).code, 0);
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
    assert.match(mirador(['imports', 'acme', 'reject', String(id3)], env).stdout, /rejected/);
    assert.equal(mirador(['imports', 'acme', '--json'], env).json()[0].status, 'rejected');
    const again = mirador(['imports', 'acme', 'confirm', String(id3)], env);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /not awaiting confirmation/);
    assert.match(mirador(['imports', 'acme', 'approve', '1'], env).stderr, /Unknown action/);
    assert.match(mirador(['imports', 'acme', 'confirm'], env).stderr, /needs the import id/);
  });
});
