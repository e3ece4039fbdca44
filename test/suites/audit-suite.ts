/**
 * Issue 24, point 1, once per store: every administrative action in the
 * panel and through an upload token lands in its company's audit trail, with
 * its actor, what it touched and never a secret; an administrator sees only
 * their own company's trail, newest first, filtered and paged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateCredential } from '../../src/domain/api-keys.js';
import { auditEvent, cliActor, type AuditEntry } from '../../src/domain/audit.js';
import { writeGuard } from '../../src/imports/deletion-guard.js';
import type { Store } from '../../src/store/store.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { csv } from '../helpers/csv.js';
import { companyWithAdmin, credentialFor, PanelClient, signedIn, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import type { StoreFactory } from '../helpers/stores.js';

const articles = (n: number) => csv([['CODIGO', 'DESCRIPCION', 'PRECIO'], ...Array.from({ length: n }, (_, i) => [`A${i + 1}`, `Artículo ${i + 1}`, '1,5'])]);

/** The trail of a company, newest first, as the store gives it. */
const trail = (store: Store, companyId: number, limit = 100) => store.listAudit(companyId, { limit });
const only = (entries: AuditEntry[], action: string) => entries.filter((e) => e.action === action);

export function auditSuite(factory: StoreFactory) {
  describe(`audit trail (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: PanelServer;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      server = await startPanelServer(store);
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    test('sign-in, a failed sign-in (with the email tried, for its company), sign-out; unknown emails write nothing', async () => {
      const admin = await companyWithAdmin(store, 'aud-sign');
      const client = new PanelClient(server.baseUrl);
      await client.get('/panel/sign-in');
      assert.equal((await client.post('/panel/sign-in', { email: admin.email, password: 'wrong password!' })).status, 401);
      assert.equal((await client.post('/panel/sign-in', { email: 'nobody@aud-sign.example', password: 'whatever it is' })).status, 401);
      assert.equal((await client.signIn(admin.email, admin.password)).status, 303);
      assert.equal((await client.post('/panel/sign-out')).status, 303);
      const entries = await trail(store, admin.company.id);
      assert.deepEqual(entries.map((e) => e.action), ['session.sign_out', 'session.sign_in', 'session.sign_in_failed']);
      const [out, signIn, failed] = entries;
      assert.equal(failed!.actor, admin.email);
      assert.deepEqual(failed!.details, { email: admin.email });
      assert.equal(failed!.ip, '127.0.0.1');
      assert.deepEqual([signIn!.actor, signIn!.details], [admin.email, { user_id: admin.user.id }]);
      assert.equal(out!.actor, admin.email);
      assert.ok(out!.id > signIn!.id && signIn!.id > failed!.id, 'ids increase with time');
      assert.ok(entries.every((e) => e.companyId === admin.company.id && e.at instanceof Date));
    });

    test('key and upload-token create and revoke: prefix, label and expiry, never the secret', async () => {
      const { client, company, email } = await signedIn(server, store, 'aud-keys');
      await client.get('/panel/keys');
      const posted = await client.post('/panel/keys', { label: 'BI', expires_in: '90d' });
      assert.equal(posted.status, 303);
      const created = await client.get(posted.location!);
      const token = /value="(api_[a-z0-9]{8}_[0-9A-Za-z]+)"|>(api_[a-z0-9]{8}_[0-9A-Za-z]+)</.exec(created.text)!;
      const fullKey = token[1] ?? token[2]!;
      const prefix = fullKey.split('_')[1]!;
      await client.get('/panel/tokens');
      const upl = await client.get((await client.post('/panel/tokens', { label: 'ERP' })).location!);
      const tokenPrefix = /upl_([a-z0-9]{8})_/.exec(upl.text)![1]!;
      await client.get(`/panel/keys/${prefix}/revoke`);
      assert.equal((await client.post(`/panel/keys/${prefix}/revoke`)).status, 303);
      await client.get(`/panel/tokens/${tokenPrefix}/revoke`);
      assert.equal((await client.post(`/panel/tokens/${tokenPrefix}/revoke`)).status, 303);
      // Revoking again changes nothing, and records nothing.
      await store.revokeCredential(prefix, auditEvent(cliActor('x'), company.id, 'key.revoke', { prefix }));

      const entries = (await trail(store, company.id)).filter((e) => e.action !== 'session.sign_in');
      assert.deepEqual(entries.map((e) => e.action), ['token.revoke', 'key.revoke', 'token.create', 'key.create']);
      const keyCreate = entries[3]!;
      assert.equal(keyCreate.actor, email);
      assert.equal(keyCreate.details.prefix, prefix);
      assert.equal(keyCreate.details.label, 'BI');
      const expires = Date.parse(keyCreate.details.expires_at as string);
      assert.ok(Math.abs(expires - (Date.now() + 90 * 86_400_000)) < 3_600_000, String(keyCreate.details.expires_at));
      assert.deepEqual(entries[1]!.details, { prefix, label: 'BI' });
      assert.deepEqual(entries[0]!.details, { prefix: tokenPrefix, label: 'ERP' });
      const everything = JSON.stringify(await trail(store, company.id));
      assert.ok(!everything.includes(fullKey.split('_')[2]!), 'no secret in the trail');
      assert.doesNotMatch(everything, /(api|upl)_[a-z0-9]{8}_[0-9A-Za-z]{8}/);
    });

    test('the key form sets an expiry (or none); a bad one is refused and creates nothing; the list shows expiry and expired keys', async () => {
      const { client, company } = await signedIn(server, store, 'aud-expiry');
      const form = await client.get('/panel/keys');
      assert.match(form.text, /<select id="expires_in" name="expires_in" aria-describedby="expires-hint">/);
      assert.match(form.text, /<option value="90d">90 días<\/option>/);
      const bad = await client.post('/panel/keys', { label: 'x', expires_in: '2w' });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /La caducidad debe ser un número de días u horas/);
      assert.deepEqual(await store.listCredentials(company.id, 'read'), []);
      const posted = await client.post('/panel/keys', { label: 'BI', expires_in: '30d' });
      assert.equal(posted.status, 303);
      assert.match((await client.get(posted.location!)).text, /Válida hasta <time datetime="/);
      const [key] = await store.listCredentials(company.id, 'read');
      assert.ok(Math.abs(key!.expiresAt!.getTime() - (Date.now() + 30 * 86_400_000)) < 3_600_000);
      await client.post('/panel/keys', { label: 'forever' });
      const old = await credentialFor(store, company.id, 'read');
      // An expired key: created with an expiry already past, as if time had run out.
      const gone = generateCredential('read');
      await store.createCredential({ companyId: company.id, scope: 'read', prefix: gone.prefix, secretHash: gone.secretHash, label: 'old', expiresAt: Date.now() - 1000 });
      const list = await client.get('/panel/keys');
      assert.match(list.text, /<th scope="col">Caduca<\/th>/);
      const row = (prefix: string) => new RegExp(`<code>${prefix}</code>[\\s\\S]*?</tr>`).exec(list.text)![0];
      assert.match(row(key!.prefix), new RegExp(`<time datetime="${key!.expiresAt!.toISOString()}">`));
      assert.match(row(old.prefix), /<td data-label="Caduca">Nunca<\/td>/);
      assert.match(row(gone.prefix), /<span class="badge badge-bad">Caducada<\/span>/);
      assert.match(row(gone.prefix), /\/revoke"/, 'an expired key can still be revoked');
    });

    test('an event holding a full key by mistake keeps only its prefix', async () => {
      const company = await store.createCompany('aud-mask', 'Mask');
      const fresh = await credentialFor(store, company.id, 'read');
      await store.recordAudit(auditEvent(cliActor('ana'), company.id, 'key.create', { note: `made ${fresh.token}`, secret: 'whsec_abcdefgh1234' }));
      const [entry] = await trail(store, company.id);
      assert.deepEqual(entry!.details, { note: `made api_${fresh.prefix}_…`, secret: 'whsec_…' });
      assert.equal(entry!.actor, 'cli:ana');
      assert.equal(entry!.ip, null);
    });

    test('uploads from the panel and with an upload token, a re-import, a mapping change, confirm and reject of held imports', async () => {
      const { client, company, email } = await signedIn(server, store, 'aud-imports');
      await writeGuard(store, company.id, { enabled: true, minRecords: 1, maxFraction: 0.1 });
      const first = await client.upload('articulos', articles(10), 'tarifa.csv');
      assert.equal(first.status, 201);
      const firstId = first.json().import_id as number;
      assert.equal((await waitForImport(store, firstId)).status, 'succeeded');

      const upload = await credentialFor(store, company.id, 'upload');
      const put = await fetch(`${server.baseUrl}/panel/api/imports/articulos?filename=nocturno.csv`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${upload.token}` },
        body: articles(4),
      });
      assert.equal(put.status, 202);
      const held = await waitForImport(store, ((await put.json()) as { import_id: number }).import_id);
      assert.equal(held.status, 'awaiting_confirmation');
      await client.get(`/panel/imports/${held.id}`);
      assert.equal((await client.post(`/panel/imports/${held.id}/reject`)).status, 303);

      const again = await client.upload('articulos', articles(3), 'otra.csv');
      const againJob = await waitForImport(store, again.json().import_id);
      assert.equal(againJob.status, 'awaiting_confirmation');
      await client.get(`/panel/imports/${againJob.id}`);
      assert.equal((await client.post(`/panel/imports/${againJob.id}/confirm`)).status, 303);

      await client.get('/panel/kinds/articulos/mapping');
      const saved = await client.post('/panel/kinds/articulos/mapping', { map_nombre: 'CODIGO' });
      assert.equal(saved.location, '/panel/kinds/articulos/mapping?saved=1');
      assert.equal((await client.post('/panel/kinds/articulos/mapping', { map_nombre: 'CODIGO' })).status, 303, 'saved unchanged');
      await client.get(`/panel/imports/${againJob.id}`);
      const reapply = await client.post(`/panel/imports/${againJob.id}/reapply`);
      assert.equal(reapply.status, 303);
      const copyId = Number(/\/panel\/imports\/(\d+)/.exec(reapply.location!)![1]);
      await waitForImport(store, copyId);

      const entries = (await trail(store, company.id)).filter((e) => e.action !== 'session.sign_in').reverse();
      assert.deepEqual(entries.map((e) => e.action), [
        'import.upload', 'import.upload', 'import.reject', 'import.upload', 'import.confirm', 'mapping.change', 'import.upload',
      ]);
      const [panelUpload, tokenUpload, reject, , confirm, mapping, copy] = entries;
      assert.equal(panelUpload!.actor, email);
      assert.deepEqual(panelUpload!.details, { kind: 'articulos', filename: 'tarifa.csv', source: 'panel', import_id: firstId, size_bytes: articles(10).length });
      assert.equal(tokenUpload!.actor, `token:${upload.prefix}`);
      assert.deepEqual(tokenUpload!.details, { kind: 'articulos', filename: 'nocturno.csv', source: `token:${upload.prefix}`, import_id: held.id, size_bytes: articles(4).length });
      assert.equal(reject!.actor, email);
      assert.deepEqual(reject!.details, { import_id: held.id, kind: 'articulos', filename: 'nocturno.csv', would_insert: 0, would_update: 0, would_delete: 6 });
      assert.deepEqual(confirm!.details, { import_id: againJob.id, kind: 'articulos', filename: 'otra.csv', inserted: 0, updated: 0, deleted: 7 });
      assert.deepEqual(mapping!.details, { kind: 'articulos', changes: { nombre: { from: null, to: 'CODIGO' } } });
      assert.deepEqual(copy!.details, { kind: 'articulos', filename: 'otra.csv', source: 'panel', copy_of: againJob.id, size_bytes: againJob.sizeBytes, import_id: copyId });
    });

    test('a refused upload (over the size limit) records nothing', async () => {
      const company = await store.createCompany('aud-refused', 'Refused');
      const upload = await credentialFor(store, company.id, 'upload');
      const small = await startPanelServer(store, { MAX_UPLOAD_BYTES: '10' });
      try {
        const put = await fetch(`${small.baseUrl}/panel/api/imports/articulos`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${upload.token}` },
          body: articles(50),
        });
        assert.equal(put.status, 413);
      } finally {
        await small.close();
      }
      assert.deepEqual(await trail(store, company.id), []);
    });

    test("the panel's activity page: only the administrator's own company, newest first, filtered by action, paged", async () => {
      const mine = await signedIn(server, store, 'aud-page');
      const theirs = await signedIn(server, store, 'aud-page-other');
      await theirs.client.get('/panel/keys');
      await theirs.client.post('/panel/keys', { label: 'secreto de otros' });
      for (let i = 0; i < 55; i++) {
        await store.recordAudit(auditEvent(cliActor('ana'), mine.company.id, 'guard.change', { n: i }));
      }
      await mine.client.get('/panel/keys');
      await mine.client.post('/panel/keys', { label: 'mía <img src=x onerror=alert(1)>' });

      const page = await mine.client.get('/panel/audit');
      assert.equal(page.status, 200);
      assert.match(page.text, /<h1>Registro de actividad<\/h1>/);
      assert.match(page.text, /<a href="\/panel\/audit" aria-current="page">(<svg[^]*?<\/svg>)?Actividad</);
      assert.doesNotMatch(page.text, /secreto de otros|admin@aud-page-other/, 'nothing of another company');
      const actions = [...page.text.matchAll(/<code>([a-z_.]+)<\/code>/g)].map((m) => m[1]);
      assert.equal(actions.length, 50, 'a page of 50');
      assert.equal(actions[0], 'key.create', 'newest first');
      assert.match(page.text, /label=mía &lt;img src=x onerror=alert\(1\)&gt;/, 'escaped');
      assert.doesNotMatch(page.text, /<img/);
      const older = /<a href="([^"]+)" rel="next">/.exec(page.text)![1]!.replaceAll('&amp;', '&');
      const page2 = await mine.client.get(older);
      const actions2 = [...page2.text.matchAll(/<code>([a-z_.]+)<\/code>/g)].map((m) => m[1]);
      // 55 guard changes + sign-in + key: 57 entries, 7 on the second page.
      assert.equal(actions2.length, 7);
      assert.equal(actions2.at(-1), 'session.sign_in');
      assert.doesNotMatch(page2.text, /rel="next"/);
      assert.match(page2.text, /href="\/panel\/audit">Volver a las más recientes/);

      const keys = await mine.client.get('/panel/audit?action=key');
      assert.deepEqual([...keys.text.matchAll(/<code>([a-z_.]+)<\/code>/g)].map((m) => m[1]), ['key.create']);
      assert.match(keys.text, /<option value="key" selected>/);
      const sessions = await mine.client.get('/panel/audit?action=session.sign_in');
      assert.deepEqual([...sessions.text.matchAll(/<code>([a-z_.]+)<\/code>/g)].map((m) => m[1]), ['session.sign_in']);
      const bad = await mine.client.get('/panel/audit?action=nonsense');
      assert.equal(bad.status, 400);
      assert.match(bad.text, /Esa acción no existe/);

      const signedOut = await new PanelClient(server.baseUrl).get('/panel/audit');
      assert.equal(signedOut.status, 303, 'signed-out visitors go to sign-in');
    });

    test("AUDIT_RETENTION_DAYS: a year by default, validated; the import worker's sweep applies it", async () => {
      assert.equal(loadConfig({}).auditRetentionMs, 365 * 86_400_000);
      assert.equal(loadConfig({ AUDIT_RETENTION_DAYS: '730' }).auditRetentionMs, 730 * 86_400_000);
      for (const bad of ['0', '-1', 'x', '1.5']) assert.throws(() => loadConfig({ AUDIT_RETENTION_DAYS: bad }), ConfigError, bad);
      const company = await store.createCompany('aud-worker', 'Worker');
      await store.recordAudit(auditEvent(cliActor('ana'), company.id, 'guard.change', { n: 1 }));
      const [entry] = await trail(store, company.id);
      // A worker that keeps a year leaves it; one that keeps nothing removes whatever is older than its sweep.
      const keep = new ImportWorker(store, { snapshotRetentionMs: 60_000, pollMs: 20 });
      keep.start();
      await keep.stop();
      assert.deepEqual(await trail(store, company.id), [entry]);
      while (Date.now() <= entry!.at.getTime()) await new Promise((r) => setTimeout(r, 1));
      const sweep = new ImportWorker(store, { snapshotRetentionMs: 60_000, auditRetentionMs: 0, pollMs: 20 });
      sweep.start();
      await sweep.stop();
      assert.deepEqual(await trail(store, company.id), []);
    });

    test('entries older than the retention are swept; recent ones stay', async () => {
      const company = await store.createCompany('aud-sweep', 'Sweep');
      await store.recordAudit(auditEvent(cliActor('ana'), company.id, 'guard.change', { n: 1 }));
      const [entry] = await trail(store, company.id);
      await store.sweepAudit(entry!.at.getTime());
      assert.deepEqual(await trail(store, company.id), [entry], 'not older than itself');
      assert.ok((await store.sweepAudit(entry!.at.getTime() + 1)) >= 1);
      assert.deepEqual(await trail(store, company.id), []);
    });
  });
}
