/**
 * The panel's doors, once per store: signing in and out, sessions in
 * cookies, the sign-in throttle, CSRF tokens on every form, the session
 * secret, security headers and the language switch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { companyWithAdmin, PanelClient, signedIn, startPanelServer, type PanelServer } from '../helpers/panel.js';
import type { StoreFactory } from '../helpers/stores.js';

export function panelAuthSuite(factory: StoreFactory) {
  describe(`panel sign-in, sessions and CSRF (${factory.name})`, { skip: factory.skip }, () => {
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

    test('pages need a session: a GET goes to sign-in (and back after it), the JSON API answers 401', async () => {
      const client = new PanelClient(server.baseUrl);
      const page = await client.get('/panel/keys');
      assert.equal(page.status, 303);
      assert.equal(page.location, '/panel/sign-in?next=%2Fpanel%2Fkeys');
      const api = await client.get('/panel/api/imports/1');
      assert.equal(api.status, 401);
      assert.equal(api.json().error, 'auth_required');
      const admin = await companyWithAdmin(store, 'door');
      await client.get('/panel/sign-in?next=%2Fpanel%2Fkeys');
      const res = await client.post('/panel/sign-in', { email: admin.email, password: admin.password, next: '/panel/keys' });
      assert.equal(res.status, 303);
      assert.equal(res.location, '/panel/keys');
      const plain = await new PanelClient(server.baseUrl).signIn(admin.email, admin.password);
      assert.equal(plain.location, '/panel', 'without next, the overview');
    });

    test('sign-in sets an HttpOnly, SameSite=Lax session cookie for /panel; sign-out ends it', async () => {
      const admin = await companyWithAdmin(store, 'cookie');
      const client = new PanelClient(server.baseUrl);
      await client.get('/panel/sign-in');
      const res = await client.post('/panel/sign-in', { email: '  ADMIN@cookie.example ', password: admin.password });
      assert.equal(res.status, 303);
      const session = client.setCookies.find((c) => c.startsWith('mirador_session='))!;
      assert.ok(session, client.setCookies.join('\n'));
      assert.match(session, /; HttpOnly/i);
      assert.match(session, /; SameSite=Lax/i);
      assert.match(session, /; Path=\/panel/i);
      assert.doesNotMatch(session, /; Secure/i, 'plain HTTP with an http PUBLIC_BASE_URL');
      const overview = await client.get('/panel');
      assert.equal(overview.status, 200);
      assert.match(overview.text, /admin@cookie\.example · Empresa cookie/);
      const out = await client.post('/panel/sign-out');
      assert.equal(out.status, 303);
      assert.equal(out.location, '/panel/sign-in?bye=1');
      assert.equal((await client.get('/panel')).status, 303);
    });

    test('a tampered or forged session cookie is no session', async () => {
      const { client, user } = await signedIn(server, store, 'tamper');
      const value = client.cookies.get('mirador_session')!;
      const other = new PanelClient(server.baseUrl);
      other.cookies.set('mirador_session', value.replace(/^\d+/, String(user.id + 1)));
      assert.equal((await other.get('/panel')).status, 303);
      other.cookies.set('mirador_session', `${user.id}.${Date.now()}.AAAAAAAAAAAAAAAAAAAAAA`);
      assert.equal((await other.get('/panel')).status, 303);
    });

    test('cookies are Secure when PUBLIC_BASE_URL is https, and HSTS is sent', async () => {
      const secure = await startPanelServer(store, { PUBLIC_BASE_URL: 'https://mirador.example' });
      try {
        const admin = await companyWithAdmin(store, 'secure');
        const client = new PanelClient(secure.baseUrl);
        const page = await client.get('/panel/sign-in');
        assert.match(page.headers.get('strict-transport-security') ?? '', /max-age=/);
        assert.ok(client.setCookies.every((c) => /; Secure/i.test(c)), client.setCookies.join('\n'));
        await client.post('/panel/sign-in', { email: admin.email, password: admin.password });
        assert.match(client.setCookies.find((c) => c.startsWith('mirador_session='))!, /; Secure/i);
      } finally {
        await secure.close();
      }
    });

    test('a wrong password is a 401 page; after 5 failures for one email, 429 with Retry-After even with the right password', async () => {
      const admin = await companyWithAdmin(store, 'throttle');
      const other = await companyWithAdmin(store, 'throttle-other');
      const client = new PanelClient(server.baseUrl);
      await client.get('/panel/sign-in');
      for (let i = 1; i <= 5; i++) {
        const res = await client.post('/panel/sign-in', { email: admin.email, password: `wrong ${i}` });
        assert.equal(res.status, 401, `attempt ${i}`);
        assert.match(res.text, /El correo o la contraseña no son correctos/);
        assert.match(res.text, /value="admin@throttle\.example"/, 'the email is kept in the form');
      }
      const locked = await client.post('/panel/sign-in', { email: admin.email, password: admin.password });
      assert.equal(locked.status, 429);
      const retryAfter = Number(locked.headers.get('retry-after'));
      assert.ok(retryAfter > 60 && retryAfter <= 900, String(retryAfter));
      assert.match(locked.text, /Demasiados intentos fallidos/);
      assert.equal(client.cookies.has('mirador_session'), false);
      // Another email is not affected; an unknown email is counted the same way.
      assert.equal((await new PanelClient(server.baseUrl).signIn(other.email, other.password)).status, 303);
      const ghost = new PanelClient(server.baseUrl);
      await ghost.get('/panel/sign-in');
      for (let i = 0; i < 5; i++) assert.equal((await ghost.post('/panel/sign-in', { email: 'nobody@x.example', password: 'x' })).status, 401);
      assert.equal((await ghost.post('/panel/sign-in', { email: 'nobody@x.example', password: 'x' })).status, 429);
    });

    test('every state-changing request needs the CSRF token: without it, or with another visitor\'s, 403 and nothing changes', async () => {
      const { client, company } = await signedIn(server, store, 'csrf');
      const stranger = await signedIn(server, store, 'csrf-stranger');
      const attempts: [string, Record<string, string>][] = [
        ['/panel/keys', { label: 'x' }],
        ['/panel/tokens', { label: 'x' }],
        ['/panel/kinds/clientes/mapping', { map_nombre: 'X' }],
        ['/panel/lang', { lang: 'en' }],
        ['/panel/sign-out', {}],
      ];
      for (const [path, fields] of attempts) {
        for (const token of ['', stranger.client.csrf, 'A'.repeat(43)]) {
          const res = await client.post(path, { ...fields, _csrf: token });
          assert.equal(res.status, 403, `${path} with token "${token}"`);
          assert.match(res.text, /El formulario ha caducado/);
        }
      }
      assert.deepEqual(await store.listCredentials(company.id, 'read'), []);
      assert.deepEqual(await store.listCredentials(company.id, 'upload'), []);
      assert.deepEqual(await store.getMapping(company.id, 'clientes'), {});
      assert.equal((await client.get('/panel')).status, 200, 'still signed in');
      // The upload form too, and nothing is stored.
      const upload = await client.upload('clientes', Buffer.from('CODIGO;NOMBRE\r\nC1;Uno\r\n'), 'c.csv', { csrf: stranger.client.csrf });
      assert.equal(upload.status, 403);
      assert.equal(upload.json().error, 'forbidden');
      assert.deepEqual(await store.listImports(company.id), []);
      // Signing in needs the pre-session token of the sign-in page.
      const fresh = new PanelClient(server.baseUrl);
      const res = await fresh.post('/panel/sign-in', { email: 'admin@csrf.example', password: 'x', _csrf: client.csrf });
      assert.equal(res.status, 403);
    });

    test('the session secret is generated once and stored, or taken from SESSION_SECRET', async () => {
      const stored = await store.getSetting('panel_session_secret');
      assert.ok(stored && stored.length >= 40);
      const { client } = await signedIn(server, store, 'secret');
      // A second instance over the same store accepts the first one's session.
      const twin = await startPanelServer(store);
      const other = await startPanelServer(store, { SESSION_SECRET: 'another secret entirely, at least 32 chars' });
      try {
        const onTwin = new PanelClient(twin.baseUrl);
        client.cookies.forEach((v, k) => onTwin.cookies.set(k, v));
        assert.equal((await onTwin.get('/panel')).status, 200);
        const onOther = new PanelClient(other.baseUrl);
        client.cookies.forEach((v, k) => onOther.cookies.set(k, v));
        assert.equal((await onOther.get('/panel')).status, 303);
      } finally {
        await twin.close();
        await other.close();
      }
      assert.equal(await store.getSetting('panel_session_secret'), stored);
    });

    test('security headers: a CSP with no inline scripts and frame-ancestors none; no page has inline script', async () => {
      const { client } = await signedIn(server, store, 'headers');
      for (const path of ['/panel/sign-in', '/panel', '/panel/kinds/obras', '/panel/kinds/obras/mapping', '/panel/keys', '/panel/tokens', '/panel/help', '/panel/nope']) {
        const res = await client.get(path);
        const csp = res.headers.get('content-security-policy') ?? '';
        assert.match(csp, /script-src 'self'(;|$)/, path);
        assert.match(csp, /frame-ancestors 'none'/, path);
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path);
        assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
        assert.equal(res.headers.get('cache-control'), 'no-store', path);
        for (const tag of res.text.match(/<script\b[^>]*>/g) ?? []) assert.match(tag, / src="\/panel\/assets\/panel\.js\?v=[0-9a-f]+"/, path);
        assert.doesNotMatch(res.text, /\son[a-z]+=/i, `${path}: no inline event handlers`);
      }
      const js = await client.get('/panel/assets/panel.js');
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /javascript/);
      // The /v1 API is untouched by the panel's headers.
      const v1 = await fetch(`${server.baseUrl}/v1/sandbox/clientes?limit=1`);
      assert.equal(v1.headers.get('content-security-policy'), null);
    });

    test('Spanish by default; the language switch is remembered in a cookie and returns to the page', async () => {
      const { client } = await signedIn(server, store, 'lang');
      const es = await client.get('/panel/keys');
      assert.match(es.text, /<html lang="es">/);
      assert.match(es.text, /<h1>Claves API<\/h1>/);
      const res = await client.post('/panel/lang', { lang: 'en', back: '/panel/keys' });
      assert.equal(res.status, 303);
      assert.equal(res.location, '/panel/keys');
      assert.match(client.setCookies.find((c) => c.startsWith('mirador_lang='))!, /Max-Age=31536000/);
      const en = await client.get('/panel/keys');
      assert.match(en.text, /<html lang="en">/);
      assert.match(en.text, /<h1>API keys<\/h1>/);
      for (const back of ['https://evil.example/', '//evil.example', '/panel/..//evil', '/v1/clientes']) {
        assert.equal((await client.post('/panel/lang', { lang: 'es', back })).location, '/panel', back);
      }
    });
  });
}
