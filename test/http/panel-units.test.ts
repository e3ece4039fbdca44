/** The panel's small parts on their own: escaping, the sign-in throttle, passwords, return paths, translations. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { afterFailure } from '../../src/domain/sign-in-policy.js';
import { sqliteFactory } from '../helpers/stores.js';
import { hashPassword, verifyPassword } from '../../src/domain/passwords.js';
import { previewMapping, resolveMapping } from '../../src/imports/column-mapping.js';
import { escapeHtml, html } from '../../src/http/panel/html.js';
import { translator } from '../../src/http/panel/i18n.js';
import { safePanelPath } from '../../src/http/panel/panel-context.js';
import { SignInThrottle, StoreThrottleBackend } from '../../src/http/panel/sign-in-throttle.js';

describe('panel html', () => {
  test('escapeHtml escapes the five characters that matter in content and quoted attributes', () => {
    assert.equal(escapeHtml(`<a href="x" title='y'>&amp;</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
  });

  test('html escapes every interpolated value, except markup made by html itself', () => {
    const cell = '"><img src=x onerror=alert(1)>';
    const row = html`<td title="${cell}">${cell}</td>`;
    assert.equal(row.value, '<td title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</td>');
    assert.equal(html`<tr>${row}</tr>`.value, `<tr>${row.value}</tr>`);
    assert.equal(html`<ul>${['<a>', html`<li>b</li>`]}</ul>`.value, '<ul>&lt;a&gt;<li>b</li></ul>');
    assert.equal(html`${null}${undefined}${false}${0}`.value, '0');
  });
});

describe('sign-in throttle (over a SQLite store)', () => {
  let store: Awaited<ReturnType<typeof sqliteFactory.create>>;
  before(async () => {
    store = await sqliteFactory.create();
  });
  after(async () => store?.cleanup());

  test('the fifth failure locks the email for 15 minutes; success clears; other emails are free', async () => {
    let now = 1_000_000;
    const throttle = new SignInThrottle(new StoreThrottleBackend(store.store), undefined, () => now);
    for (let i = 1; i <= 4; i++) assert.equal(await throttle.failed('a@x'), 0, `failure ${i}`);
    assert.equal(await throttle.retryAfter('a@x'), 0);
    assert.equal(await throttle.failed('a@x'), 900);
    assert.equal(await throttle.retryAfter('a@x'), 900);
    assert.equal(await throttle.retryAfter('b@x'), 0);
    now += 600_000;
    assert.equal(await throttle.retryAfter('a@x'), 300);
    now += 300_001;
    assert.equal(await throttle.retryAfter('a@x'), 0);
    // Right after a lock, one more failure locks again.
    assert.equal(await throttle.failed('a@x'), 900);
    await throttle.succeeded('a@x');
    assert.equal(await throttle.retryAfter('a@x'), 0);
  });

  test('failures spread beyond the window start over; the sweep forgets records that no longer count', async () => {
    let now = 0;
    const throttle = new SignInThrottle(new StoreThrottleBackend(store.store), undefined, () => now);
    for (let i = 0; i < 4; i++) await throttle.failed('c@x');
    now += 16 * 60_000;
    assert.equal(await throttle.failed('c@x'), 0);
    assert.equal(await store.store.sweepSignInFailures(now), 0, 'the window that just began still counts');
    assert.equal(await store.store.sweepSignInFailures(now + 15 * 60_000 + 1), 1);
  });
});

describe('afterFailure', () => {
  test('counts within the window, locks at the limit, and starts the next window after the lock', () => {
    const policy = { maxFailures: 2, windowMs: 100, lockMs: 1000 };
    const one = afterFailure(null, 10, policy);
    assert.deepEqual(one, { failures: 1, firstAt: 10, lockedUntil: 0, expiresAt: 110 });
    assert.deepEqual(afterFailure(one, 20, policy), { failures: 1, firstAt: 1020, lockedUntil: 1020, expiresAt: 1120 });
    assert.deepEqual(afterFailure(one, 111, policy), { failures: 1, firstAt: 111, lockedUntil: 0, expiresAt: 211 });
  });
});

describe('passwords', () => {
  test('scrypt hashes verify only the same password, and malformed stored values never match', async () => {
    const stored = await hashPassword('correct horse battery');
    assert.equal(await verifyPassword('correct horse battery', stored), true);
    assert.equal(await verifyPassword('correct horse batterY', stored), false);
    for (const bad of ['', 'scrypt$1$1$1$x$y', 'bcrypt$whatever', stored.replace(/\$[^$]+$/, '$AAAA'), 'scrypt$99999999$8$1$AAAA$AAAAAAAAAAAAAAAAAAAAAA']) {
      assert.equal(await verifyPassword('correct horse battery', bad), false, bad);
    }
  });
});

describe('previewMapping', () => {
  test('agrees with resolveMapping on a good file, and still answers where resolveMapping refuses', () => {
    const columns = ['CODIGO', '01_NOMBRE_COMERCIAL', 'RAZON', 'NIF'];
    assert.deepEqual(previewMapping('clientes', columns), resolveMapping('clientes', columns).sources);
    assert.deepEqual(previewMapping('clientes', columns, { nombre: 'RAZON' }), resolveMapping('clientes', columns, { nombre: 'RAZON' }).sources);
    // No id column, and an override naming a column the file lacks: shown as null, not thrown.
    assert.deepEqual(previewMapping('clientes', ['NOMBRE', 'CIF'], { cif: 'GONE' }), {
      id_erp: null, nombre: 'NOMBRE', cif: null, email: null, telefono: null, direccion: null,
    });
  });
});

describe('panel return paths and translations', () => {
  test('only /panel paths are followed after sign-in or a language switch', () => {
    for (const ok of ['/panel', '/panel/keys', '/panel/imports/3?again=1']) assert.equal(safePanelPath(ok), ok);
    for (const bad of ['//evil.example', 'https://evil.example/panel', '/panelx', '/panel//evil', '/panel/../v1', '/panel\\x', '/v1/clientes', 3, null]) {
      assert.equal(safePanelPath(bad), null, String(bad));
    }
  });

  test('parameters are filled in once: a value holding {name} is not expanded again', () => {
    assert.equal(translator('es')('recordCount', { count: '1.523' }), '1.523 registros');
    assert.equal(translator('en')('recordCount', { count: '1,523' }), '1,523 records');
    assert.equal(translator('en')('warningLine', { line: 3, value: '{line}', column: 'P', expected: 'x', field: 'precio' }), 'Line 3: "{line}" in column "P" is not x; precio is left empty.');
  });
});
