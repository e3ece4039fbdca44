/**
 * Issue 24 from the command line, on both stores: every administrative
 * command is recorded as `cli:<OS user>`, `mirador audit` shows the trail
 * (filtered, limited, as JSON), and `key create --expires-in` makes a key
 * that `key list` shows expiring.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { mirador } from '../helpers/cli.js';
import { customersCsv } from '../helpers/csv.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';

const postgres = await postgresFactory();
const ACTOR = `cli:${userInfo().username}`;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`audit trail and expiring keys from the CLI (${backend})`, { skip: backend === 'postgres' && postgres.skip }, () => {
    const dir = tempDir();
    const env = { DATABASE_URL: `sqlite:${join(dir.path, 'm.db')}` };
    let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
    before(async () => {
      if (backend === 'postgres') {
        database = await freshPostgresDatabase();
        env.DATABASE_URL = database.url;
      }
      assert.equal(mirador(['company', 'create', 'acme', '--name', 'Acme'], env).code, 0);
      assert.equal(mirador(['company', 'create', 'other', '--name', 'Other'], env).code, 0);
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
    const audit = (...args: string[]) => {
      const r = mirador(['audit', 'acme', '--json', ...args], env);
      assert.equal(r.code, 0, r.stderr);
      return r.json() as { id: number; at: string; actor: string; ip: string | null; action: string; details: Record<string, unknown> }[];
    };

    test('key create (with --expires-in) and revoke, user create, guard and mapping changes are recorded with the OS user', () => {
      const created = mirador(['key', 'create', 'acme', '--label', 'BI', '--expires-in', '90d', '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      const { key, prefix, expires_at } = created.json();
      assert.ok(Math.abs(Date.parse(expires_at) - (Date.now() + 90 * 86_400_000)) < 3_600_000, expires_at);
      assert.equal(mirador(['key', 'revoke', prefix], env).code, 0);
      assert.equal(mirador(['key', 'revoke', prefix], env).code, 0, 'again: nothing more is recorded');
      const user = mirador(['user', 'create', 'acme', 'ana@acme.example', '--password-stdin', '--json'], env, 'correct horse battery\n');
      assert.equal(user.code, 0, user.stderr);
      assert.equal(mirador(['company', 'guard', 'acme', '--min-records', '3'], env).code, 0);
      assert.equal(mirador(['company', 'guard', 'acme'], env).code, 0, 'showing changes nothing');
      assert.equal(mirador(['mapping', 'set', 'acme', 'obras', 'nombre=RAZON'], env).code, 0);

      const entries = audit();
      assert.deepEqual(entries.map((e) => e.action), ['mapping.change', 'guard.change', 'user.create', 'key.revoke', 'key.create']);
      assert.ok(entries.every((e) => e.actor === ACTOR && e.ip === null), JSON.stringify(entries));
      const [mapping, guard, userCreate, revoke, create] = entries;
      assert.deepEqual(create!.details, { prefix, label: 'BI', expires_at });
      assert.deepEqual(revoke!.details, { prefix, label: 'BI' });
      assert.deepEqual(userCreate!.details, { email: 'ana@acme.example', user_id: user.json().id });
      assert.deepEqual(guard!.details, {
        before: { enabled: true, min_records: 100, max_fraction: 0.2 },
        after: { enabled: true, min_records: 3, max_fraction: 0.2 },
      });
      assert.deepEqual(mapping!.details, { kind: 'obras', changes: { nombre: { from: null, to: 'RAZON' } } });
      assert.ok(!JSON.stringify(entries).includes(key.split('_')[2]), 'never the secret');
    });

    test('imports from the CLI, and confirm and reject of held ones', () => {
      const v1 = file('v1.csv', 20);
      assert.equal(mirador(['import', 'acme', 'clientes', v1], env).code, 0);
      // Held by the mass-deletion guard: exit 3 (issue 18.3).
      assert.equal(mirador(['import', 'acme', 'clientes', file('v2.csv', 10)], env).code, 3);
      const held = mirador(['imports', 'acme', '--json'], env).json()[0];
      assert.equal(held.status, 'awaiting_confirmation');
      assert.equal(mirador(['imports', 'acme', 'reject', String(held.id)], env).code, 0);
      assert.equal(mirador(['import', 'acme', 'clientes', file('v3.csv', 5)], env).code, 3, 'held again');
      const jobs = mirador(['imports', 'acme', '--json'], env).json();
      const heldAgain = jobs.find((j: { status: string }) => j.status === 'awaiting_confirmation');
      assert.ok(heldAgain, JSON.stringify(jobs.map((j: { status: string }) => j.status)));
      assert.equal(mirador(['imports', 'acme', 'confirm', String(heldAgain.id)], env).code, 0);

      const imports = audit('--action', 'import');
      assert.deepEqual(imports.map((e) => e.action).reverse(), ['import.upload', 'import.upload', 'import.reject', 'import.upload', 'import.confirm']);
      const uploads = imports.filter((e) => e.action === 'import.upload').reverse();
      assert.deepEqual(uploads[0]!.details, { kind: 'clientes', filename: 'v1.csv', source: 'cli', import_id: jobs.at(-1).id, size_bytes: customersCsv(20).length });
      const reject = imports.find((e) => e.action === 'import.reject')!;
      assert.deepEqual(reject.details, { import_id: held.id, kind: 'clientes', filename: 'v2.csv', would_insert: 0, would_update: 0, would_delete: 10 });
      const confirm = imports.find((e) => e.action === 'import.confirm')!;
      assert.equal(confirm.details.import_id, heldAgain.id);
      assert.ok(imports.every((e) => e.actor === ACTOR));
    });

    test('mirador audit: newest first, --action (action or group), --limit, --before; a plain table; errors are clear', () => {
      const all = audit();
      assert.ok(all.length >= 10);
      assert.deepEqual(all.map((e) => e.id), [...all.map((e) => e.id)].sort((a, b) => b - a), 'newest first');
      assert.deepEqual(audit('--action', 'key').map((e) => e.action), ['key.revoke', 'key.create']);
      assert.deepEqual(audit('--action', 'key.create').map((e) => e.action), ['key.create']);
      assert.deepEqual(audit('--limit', '2').map((e) => e.id), all.slice(0, 2).map((e) => e.id));
      assert.deepEqual(audit('--limit', '2', '--before', String(all[1]!.id)).map((e) => e.id), all.slice(2, 4).map((e) => e.id));
      const text = mirador(['audit', 'acme', '--action', 'guard'], env);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /^ID\s+AT\s+ACTOR\s+ACTION\s+DETAILS/);
      assert.match(text.stdout, new RegExp(`${ACTOR}\\s+guard\\.change\\s+before=\\{"enabled":true`));
      assert.deepEqual(mirador(['audit', 'other', '--json'], env).json(), [], "another company's trail is its own");
      assert.match(mirador(['audit', 'other'], env).stdout, /No audit entries for other/);
      const bad = mirador(['audit', 'acme', '--action', 'nope'], env);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /"nope" is not an audit action: use one of session\.sign_in/);
      assert.match(mirador(['audit', 'acme', '--limit', '0'], env).stderr, /--limit must be an integer from 1 to 1000/);
      assert.match(mirador(['audit', 'acme', '--before', 'x'], env).stderr, /--before must be an entry id/);
      assert.match(mirador(['audit', 'nobody'], env).stderr, /There is no company with slug "nobody"/);
    });

    test('key create --expires-in accepts days and hours and refuses anything else; key list shows the expiry', () => {
      for (const bad of ['90', '0d', '2w', '-1d', '1.5d', '3651d', 'd']) {
        const r = mirador(['key', 'create', 'other', '--expires-in', bad], env);
        assert.equal(r.code, 1, bad);
        assert.match(r.stderr, /--expires-in must be a whole number of days or hours, such as 90d or 12h/, bad);
      }
      assert.deepEqual(mirador(['key', 'list', 'other', '--json'], env).json(), [], 'a refused option creates nothing');
      const hours = mirador(['key', 'create', 'other', '--expires-in', '12h', '--json'], env).json();
      assert.ok(Math.abs(Date.parse(hours.expires_at) - (Date.now() + 12 * 3_600_000)) < 600_000);
      const forever = mirador(['key', 'create', 'other', '--json'], env).json();
      assert.deepEqual(Object.keys(forever), ['key', 'prefix'], 'the contract shape without --expires-in');
      const list = mirador(['key', 'list', 'other', '--json'], env).json();
      assert.deepEqual(
        list.map((k: { prefix: string; expires_at: string | null; status: string }) => [k.prefix, k.expires_at, k.status]),
        [[hours.prefix, hours.expires_at, 'active'], [forever.prefix, null, 'active']],
      );
      const table = mirador(['key', 'list', 'other'], env).stdout;
      assert.match(table, /EXPIRES/);
      assert.match(table, new RegExp(`${hours.prefix}.*${hours.expires_at.replace(/\./g, '\\.')}`));
      assert.match(table, new RegExp(`${forever.prefix}.*never\\s+no`));
    });
  });
}
