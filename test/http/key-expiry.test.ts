/**
 * Issue 24, point 3: a key that expires is refused from its expiry on with a
 * 401 `unauthorized` that says it expired — on the general path, and on the
 * in-memory detail path (api-routes.ts `detailNow`), whose cached key entry
 * was checked while the key was still valid. The server's credentials cache
 * runs on a clock the test moves, with entries trusted for an hour, so the
 * cached entry is certainly the one answering.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateCredential } from '../../src/domain/api-keys.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { bearer, request } from '../helpers/http.js';
import { customers, CUSTOMER_COLUMNS, range } from '../helpers/records.js';
import { storeFactories } from '../helpers/stores.js';
import { startServer, type TestServer } from '../helpers/test-server.js';

/** The store, counting the lookups of credentials (the general path makes one; the cached path none). */
function countingLookups(store: Store): { store: Store; lookups: () => number } {
  let lookups = 0;
  const view = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (prop === 'credentialByPrefix') lookups++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: view, lookups: () => lookups };
}

for (const factory of await storeFactories()) {
  describe(`keys that expire (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let spy: ReturnType<typeof countingLookups>;
    let now = Date.now();
    let companyId: number;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      companyId = (await store.createCompany('caduca', 'Caduca')).id;
      await replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-04-01T00:00:00Z') }, customers(range(5)));
      spy = countingLookups(store);
      server = await startServer(spy.store, {}, { credentialsCache: { ttlMs: 3_600_000, now: () => now } });
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    const key = async (expiresAt: number | null) => {
      const fresh = generateCredential('read');
      await store.createCredential({ companyId, scope: 'read', prefix: fresh.prefix, secretHash: fresh.secretHash, label: null, expiresAt });
      return fresh;
    };

    test('valid until its time, from memory too; refused at it with a message that says it expired, on every path', async () => {
      const expiresAt = now + 90 * 86_400_000;
      const { token } = await key(expiresAt);
      const detail = `${server.baseUrl}/v1/clientes/C000001`;
      assert.equal((await request(detail, { headers: bearer(token) })).status, 200);
      const before = spy.lookups();
      assert.equal((await request(detail, { headers: bearer(token) })).status, 200);
      assert.equal(spy.lookups(), before, 'the second detail is answered from the cached key entry');

      now = expiresAt;
      const refused = await request(detail, { headers: bearer(token) });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers['www-authenticate'], 'Bearer');
      assert.equal(refused.json().error, 'unauthorized');
      assert.equal(
        refused.json().message,
        `The API key expired on ${new Date(expiresAt).toISOString()}. Create a new one, switch to it, and revoke this one.`,
      );
      const list = await request(`${server.baseUrl}/v1/clientes`, { headers: { 'x-api-key': token } });
      assert.equal(list.status, 401);
      assert.match(list.json().message, /expired on/);
    });

    test("only the key's holder learns it expired: a wrong secret gets the usual message", async () => {
      const { prefix } = await key(now - 1000);
      const forged = `api_${prefix}_${'A'.repeat(33)}`;
      const res = await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(forged) });
      assert.equal(res.status, 401);
      assert.equal(res.json().message, 'The API key is not valid: it is unknown, malformed or revoked.');
    });

    test('a key without expiry, and a revoked one that also expired (revoked wins)', async () => {
      const forever = await key(null);
      assert.equal((await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(forever.token) })).status, 200);
      const both = await key(now - 1000);
      await store.revokeCredential(both.prefix);
      server.app.credentials.forget(both.prefix);
      const res = await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(both.token) });
      assert.equal(res.status, 401);
      assert.doesNotMatch(res.json().message, /expired/);
    });
  });
}
