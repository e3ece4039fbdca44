/**
 * Contract §5: an administrator of one company never sees or changes
 * anything of another. Every URL that names an import, a key or a token of
 * company B answers company A's administrator 404 — the same as a URL naming
 * nothing — and changes nothing. One test per URL, once per store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Credential, ImportJob, Store } from '../../src/store/store.js';
import { csv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { credentialFor, signedIn, startPanelServer, waitForImport, type PanelClient, type PanelServer } from '../helpers/panel.js';
import type { StoreFactory } from '../helpers/stores.js';

export function panelIsolationSuite(factory: StoreFactory) {
  describe(`panel isolation between companies (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: PanelServer;
    let a: PanelClient;
    let aToken: string;
    let bImport: ImportJob;
    let bKey: Credential;
    let bToken: Credential;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      server = await startPanelServer(store);
      a = (await signedIn(server, store, 'company-a')).client;
      const b = await signedIn(server, store, 'company-b');
      const up = await b.client.upload('clientes', csv([['CODIGO', 'NOMBRE'], ['B1', 'Secreto de B']]));
      bImport = await waitForImport(store, up.json().import_id);
      const key = await credentialFor(store, b.company.id, 'read');
      const token = await credentialFor(store, b.company.id, 'upload');
      bKey = (await store.credentialByPrefix(key.prefix))!;
      bToken = (await store.credentialByPrefix(token.prefix))!;
      const aCompany = (await store.companyBySlug('company-a'))!;
      aToken = (await credentialFor(store, aCompany.id, 'upload')).token;
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    /** The answer is 404, and it does not mention B's data. */
    function assertHidden(res: { status: number; text: string }, what: string) {
      assert.equal(res.status, 404, what);
      assert.doesNotMatch(res.text, /Secreto de B|company-b|Empresa company-b/, what);
    }

    async function assertUntouched() {
      assert.equal((await store.importById(bImport.id))!.status, 'succeeded');
      assert.equal((await store.listImports(bImport.companyId)).length, 1, 'no import was queued for B');
      assert.equal((await store.credentialByPrefix(bKey.prefix))!.revokedAt, null);
      assert.equal((await store.credentialByPrefix(bToken.prefix))!.revokedAt, null);
    }

    test("GET /panel/imports/<B's import>", async () => {
      assertHidden(await a.get(`/panel/imports/${bImport.id}`), 'import page');
    });

    test("GET /panel/api/imports/<B's import>, with A's session and with A's upload token", async () => {
      const bySession = await a.get(`/panel/api/imports/${bImport.id}`, { accept: 'application/json' });
      assertHidden(bySession, 'status by session');
      assert.equal(bySession.json().error, 'not_found');
      const byToken = await request(`${server.baseUrl}/panel/api/imports/${bImport.id}`, { headers: bearer(aToken) });
      assertHidden({ status: byToken.status, text: byToken.text() }, 'status by token');
    });

    test("POST /panel/imports/<B's import>/reapply", async () => {
      assertHidden(await a.post(`/panel/imports/${bImport.id}/reapply`), 'reapply');
      await assertUntouched();
    });

    test("GET and POST /panel/keys/<B's key>/revoke", async () => {
      assertHidden(await a.get(`/panel/keys/${bKey.prefix}/revoke`), 'key revoke confirmation');
      assertHidden(await a.post(`/panel/keys/${bKey.prefix}/revoke`), 'key revoke');
      await assertUntouched();
      assert.equal((await a.get('/panel/keys')).text.includes(bKey.prefix), false, "B's key is not listed");
    });

    test("GET and POST /panel/tokens/<B's token>/revoke", async () => {
      assertHidden(await a.get(`/panel/tokens/${bToken.prefix}/revoke`), 'token revoke confirmation');
      assertHidden(await a.post(`/panel/tokens/${bToken.prefix}/revoke`), 'token revoke');
      await assertUntouched();
      assert.equal((await a.get('/panel/tokens')).text.includes(bToken.prefix), false, "B's token is not listed");
    });

    test('a key is not reachable under /panel/tokens, nor a token under /panel/keys (even one\'s own)', async () => {
      assertHidden(await a.get(`/panel/tokens/${bKey.prefix}/revoke`), 'key as token');
      assertHidden(await a.get(`/panel/keys/${bToken.prefix}/revoke`), 'token as key');
      const own = aToken.slice(4, 12);
      assert.equal((await a.get(`/panel/keys/${own}/revoke`)).status, 404);
      assert.equal((await a.get(`/panel/tokens/${own}/revoke`)).status, 200);
    });

    test("A's pages show none of B's data; malformed and unknown ids are 404 too", async () => {
      for (const path of ['/panel', '/panel/kinds/clientes', '/panel/kinds/clientes/mapping', '/panel/keys', '/panel/tokens']) {
        const res = await a.get(path);
        assert.equal(res.status, 200, path);
        assert.doesNotMatch(res.text, /Secreto de B|company-b/, path);
      }
      for (const path of ['/panel/imports/999999', '/panel/imports/abc', '/panel/imports/1e3', '/panel/keys/zzzzzzzz/revoke', '/panel/keys/SHORT/revoke', '/panel/kinds/nope']) {
        assert.equal((await a.get(path)).status, 404, path);
      }
    });
  });
}
