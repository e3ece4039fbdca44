/**
 * The Store's audit trail and shared sign-in failures, once per store: an
 * event is written with the change it describes or not at all, a company's
 * trail is its own, newest first, filtered and paged by id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateCredential } from '../../src/domain/api-keys.js';
import { auditEvent, cliActor, uploadAudit } from '../../src/domain/audit.js';
import { DEFAULT_THROTTLE } from '../../src/domain/sign-in-policy.js';
import { ConflictError, UploadTooLargeError, type Store } from '../../src/store/store.js';
import type { StoreFactory } from '../helpers/stores.js';
import { webhookCreateAudit, webhookDeleteAudit, webhookUpdateAudit } from '../../src/webhooks/webhook-audit.js';

const who = cliActor('ana');

async function* bytes(...parts: string[]) {
  for (const p of parts) yield Buffer.from(p);
}

export function storeAuditSuite(factory: StoreFactory) {
  describe(`store: audit trail and sign-in failures (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await factory.create());
    });
    after(async () => cleanup?.());

    test('an action that fails writes no event; one that succeeds writes it with the ids it made', async () => {
      const company = await store.createCompany('st-aud', 'A');
      const user = await store.createUser({ companyId: company.id, email: 'a@st-aud.example', passwordHash: 'x' }, auditEvent(who, company.id, 'user.create', { email: 'a@st-aud.example' }));
      await assert.rejects(
        store.createUser({ companyId: company.id, email: 'a@st-aud.example', passwordHash: 'x' }, auditEvent(who, company.id, 'user.create', { email: 'a@st-aud.example' })),
        ConflictError,
      );
      await assert.rejects(
        store.createImport({ companyId: company.id, kind: 'clientes', filename: 'big.csv', source: 'cli' }, bytes('CODIGO\n', 'C1\n'), 5, undefined, uploadAudit(who, company.id, 'clientes', 'big.csv', 'cli')),
        UploadTooLargeError,
      );
      const job = await store.createImport({ companyId: company.id, kind: 'clientes', filename: 'ok.csv', source: 'cli' }, bytes('CODIGO\n', 'C1\n'), 1000, undefined, uploadAudit(who, company.id, 'clientes', 'ok.csv', 'cli'));
      const copy = (await store.copyImport(job.id, 'panel', auditEvent(who, company.id, 'import.upload', { copy_of: job.id })))!;
      assert.equal(await store.copyImport(999_999, 'panel', auditEvent(who, company.id, 'import.upload', { copy_of: 999_999 })), null);
      const entries = await store.listAudit(company.id, { limit: 10 });
      assert.deepEqual(
        entries.map((e) => [e.action, e.details]),
        [
          ['import.upload', { copy_of: job.id, import_id: copy.id }],
          ['import.upload', { kind: 'clientes', filename: 'ok.csv', source: 'cli', import_id: job.id, size_bytes: 10 }],
          ['user.create', { email: 'a@st-aud.example', user_id: user.id }],
        ],
      );
    });

    test('revoking and rejecting twice, and setting a mapping or a setting, write one event each time they change something', async () => {
      const company = await store.createCompany('st-aud-2', 'B');
      const fresh = generateCredential('read');
      const expiresAt = Date.now() + 86_400_000;
      const created = await store.createCredential(
        { companyId: company.id, scope: 'read', prefix: fresh.prefix, secretHash: fresh.secretHash, label: 'k', expiresAt },
        auditEvent(who, company.id, 'key.create', { prefix: fresh.prefix }),
      );
      assert.equal(created.expiresAt?.getTime(), expiresAt);
      assert.equal((await store.credentialByPrefix(fresh.prefix))!.expiresAt?.getTime(), expiresAt);
      for (let i = 0; i < 2; i++) await store.revokeCredential(fresh.prefix, auditEvent(who, company.id, 'key.revoke', { prefix: fresh.prefix }));
      await store.rejectImport(123_456, {}, auditEvent(who, company.id, 'import.reject', { import_id: 123_456 }));
      await store.setMapping(company.id, 'obras', { nombre: 'X' }, auditEvent(who, company.id, 'mapping.change', { kind: 'obras' }));
      await store.setSetting(`deletion_guard:${company.id}`, '{}', auditEvent(who, company.id, 'guard.change', {}));
      const actions = (await store.listAudit(company.id, { limit: 10 })).map((e) => e.action);
      assert.deepEqual(actions, ['guard.change', 'mapping.change', 'key.revoke', 'key.create']);
    });

    test('webhook endpoints: created, disabled, enabled and deleted with one event each time something changed, never the secret or the query', async () => {
      const company = await store.createCompany('st-aud-wh', 'W');
      const url = 'https://erp.example.com/hooks/mirador?token=abc123';
      const secret = 'whsec_storeaudit_secret_value';
      const e = await store.createWebhookEndpoint({ companyId: company.id, url, eventTypes: ['import.failed'], secret }, webhookCreateAudit(who, company.id, url, ['import.failed']));
      for (const enabled of [false, false, true, true]) await store.setWebhookEndpointEnabled(e.id, enabled, webhookUpdateAudit(who, e, enabled));
      assert.equal(await store.deleteWebhookEndpoint(e.id, webhookDeleteAudit(who, e)), true);
      assert.equal(await store.deleteWebhookEndpoint(e.id, webhookDeleteAudit(who, e)), false);
      assert.equal(await store.setWebhookEndpointEnabled(e.id, false, webhookUpdateAudit(who, e, false)), null);
      const entries = await store.listAudit(company.id, { limit: 10 });
      const bare = 'https://erp.example.com/hooks/mirador';
      assert.deepEqual(
        entries.map((x) => [x.action, x.actor, x.details]),
        [
          ['webhook.delete', 'cli:ana', { webhook_id: e.id, url: bare }],
          ['webhook.update', 'cli:ana', { webhook_id: e.id, url: bare, enabled: true }],
          ['webhook.update', 'cli:ana', { webhook_id: e.id, url: bare, enabled: false }],
          ['webhook.create', 'cli:ana', { url: bare, events: ['import.failed'], webhook_id: e.id }],
        ],
      );
      assert.ok(!JSON.stringify(entries).includes('abc123') && !JSON.stringify(entries).includes('storeaudit'));
    });

    test("listAudit: a company's own entries, newest first, by actions, before an id, up to a limit", async () => {
      const a = await store.createCompany('st-aud-a', 'A');
      const b = await store.createCompany('st-aud-b', 'B');
      for (let i = 0; i < 6; i++) {
        await store.recordAudit(auditEvent(who, a.id, i % 2 ? 'key.create' : 'token.create', { n: i }));
        await store.recordAudit(auditEvent({ actor: 'x@b.example', ip: '10.0.0.1' }, b.id, 'key.create', { n: i }));
      }
      const all = await store.listAudit(a.id, { limit: 100 });
      assert.deepEqual(all.map((e) => e.details.n), [5, 4, 3, 2, 1, 0]);
      assert.ok(all.every((e) => e.companyId === a.id && e.actor === 'cli:ana' && e.ip === null));
      assert.deepEqual((await store.listAudit(a.id, { actions: ['key.create'], limit: 100 })).map((e) => e.details.n), [5, 3, 1]);
      assert.deepEqual((await store.listAudit(a.id, { actions: ['key.create', 'token.create'], before: all[1]!.id, limit: 2 })).map((e) => e.details.n), [3, 2]);
      assert.deepEqual((await store.listAudit(a.id, { actions: [], limit: 1 })).map((e) => e.details.n), [5], 'no actions: all');
      const [fromB] = await store.listAudit(b.id, { limit: 1 });
      assert.deepEqual([fromB!.actor, fromB!.ip], ['x@b.example', '10.0.0.1']);
    });

    test('sign-in failures: counted atomically under concurrency, locked at the limit, cleared on success', async () => {
      const now = Date.now();
      const results = await Promise.all(Array.from({ length: 5 }, () => store.signInFailed('race@x', now, DEFAULT_THROTTLE)));
      assert.deepEqual(results.filter((r) => r > 0), [now + DEFAULT_THROTTLE.lockMs], 'exactly the fifth locks');
      assert.equal(await store.signInLockedUntil('race@x'), now + DEFAULT_THROTTLE.lockMs);
      assert.equal(await store.signInLockedUntil('other@x'), 0);
      await store.signInSucceeded('race@x');
      assert.equal(await store.signInLockedUntil('race@x'), 0);
      assert.equal(await store.signInFailed('nul\0@x', now, DEFAULT_THROTTLE), 0, 'any text can be counted');
    });
  });
}
