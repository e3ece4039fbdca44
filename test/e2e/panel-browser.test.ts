/**
 * The panel in a real Chromium (issue 6): sign-in, an upload through the
 * file input followed to its report, a mapping change, a key created, used
 * and revoked, a token upload, the language switch and the keyboard — with
 * the page's CSP on, every CSP violation and page error failing the test.
 * Pages are audited by axe-core and photographed at 360 px and 1280 px by
 * panel-pages.test.ts; the hostile CSV is in panel-xss.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Store } from '../../src/store/store.js';
import { browserSkip, DESKTOP, focusVisible, launchChromium, newContext, screenshot, axeViolations, watchForErrors } from '../helpers/browser.js';
import { bearer, request } from '../helpers/http.js';
import { companyWithAdmin, credentialFor, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import { sqliteFactory, tempDir } from '../helpers/stores.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

const SAMPLES = new URL('../../../test/fixtures/csv/samples/', import.meta.url);

describe('panel in Chromium', { skip: browserSkip(), timeout: HANG_GUARD_MS }, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: PanelServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: Awaited<ReturnType<typeof companyWithAdmin>>;
  const errors: string[] = [];

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startPanelServer(store);
    admin = await companyWithAdmin(store, 'navegador');
    browser = await launchChromium();
    context = await newContext(browser, DESKTOP);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    page = await context.newPage();
    watchForErrors(page, errors);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await cleanup?.();
  });

  async function noProblems(name: string) {
    assert.deepEqual(await axeViolations(page), [], `axe on ${name}`);
    assert.deepEqual(errors, [], `errors on ${name}`);
    await screenshot(page, name);
  }

  test('sign-in: a failed attempt says so; the keyboard alone signs in, with a visible focus ring', async () => {
    await page.goto(`${server.baseUrl}/panel`);
    assert.equal(new URL(page.url()).pathname, '/panel/sign-in');
    await page.fill('#email', admin.email);
    await page.fill('#password', 'not the password');
    await page.click('button[type=submit].primary');
    await page.waitForSelector('#sign-in-error');
    assert.match(await page.textContent('#sign-in-error') ?? '', /no son correctos/);
    assert.equal(await page.getAttribute('#password', 'aria-invalid'), 'true');
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'email', 'focus on the first field in error');
    await noProblems('sign-in-failed');

    await page.goto(`${server.baseUrl}/panel/sign-in`);
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'email', 'the email field is focused on load');
    await page.keyboard.type(admin.email);
    await page.keyboard.press('Tab');
    assert.ok((await focusVisible(page)).visible, 'the password field shows focus');
    await page.keyboard.type(admin.password);
    await page.keyboard.press('Tab');
    const button = await focusVisible(page);
    assert.equal(button.tag, 'BUTTON');
    assert.ok(button.visible, JSON.stringify(button));
    await Promise.all([page.waitForURL(/\/panel$/), page.keyboard.press('Enter')]);
    assert.equal(await page.textContent('h1'), 'Resumen');
    await page.keyboard.press('Tab');
    const skip = await focusVisible(page);
    assert.equal(skip.tag, 'A', 'the skip link comes first');
    assert.ok(skip.visible, JSON.stringify(skip));
    await noProblems('overview-empty');
  });

  test('an upload through the file input: upload progress, the import queued, then its report', async () => {
    await page.goto(`${server.baseUrl}/panel/kinds/articulos`);
    // Held in the queue for a moment so the page's waiting state can be seen, and slowed so the upload shows progress.
    await server.pauseImports();
    // Resumed whatever happens: a failure here must not leave the next tests' imports queued.
    try {
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 256 * 1024 });
      await page.setInputFiles('#file', fileURLToPath(new URL('articulos.csv', SAMPLES)));
      // The drop zone names the chosen file and its size, in the page's language.
      assert.match(await page.textContent('[data-drop-file]') ?? '', /^Elegido: articulos\.csv \(\d+(,\d)? KB\)$/);
      // Every value the progress bar takes is recorded in the page as it is set: on a busy machine
      // the upload can be over before a poll of the bar would catch it midway.
      await page.evaluate(() => {
        const g = globalThis as any;
        g.progressSeen = [];
        const bar = g.document.getElementById('import-progress');
        new g.MutationObserver(() => g.progressSeen.push(Number(bar.value))).observe(bar, { attributes: true, attributeFilter: ['value'] });
        // The upload step's states likewise: 'active' can last less than a poll.
        g.uploadStates = [];
        const step = g.document.querySelector('[data-step="upload"]');
        new g.MutationObserver(() => g.uploadStates.push(step.dataset.state)).observe(step, { attributes: true, attributeFilter: ['data-state'] });
      });
      await page.click('#upload-form button[type=submit]');
      await page.waitForFunction(() => (globalThis as any).uploadStates.includes('active'));
      await page.waitForFunction(() => (globalThis as any).progressSeen.some((v: number) => v > 0 && v < 100));
      await page.waitForSelector('#import-status:has-text("En cola")');
      assert.equal(await page.getAttribute('[data-step="upload"]', 'data-state'), 'done');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await screenshot(page, 'upload-queued');
      server.resumeImports();
      await page.waitForSelector('[data-step="publish"][data-state="done"]');
      assert.match(await page.textContent('[data-step-count="read"]') ?? '', /^300 filas$/);
      assert.match(await page.textContent('[data-step-count="publish"]') ?? '', /^300 nuevos, 0 modificados, 0 eliminados$/);
      await page.click('#report-link');
      await page.waitForURL(/\/panel\/imports\/\d+#report$/);
      await page.waitForSelector('#report');
      assert.match(await page.textContent('#report') ?? '', /Filas leídas\s*300/);
      assert.match(await page.textContent('h1') ?? '', /Importación \d+: Artículos/);
      await noProblems('import-report');
      await page.click('text=Volver a Artículos');
      assert.equal(await page.locator('tbody tr').first().locator('td').nth(4).textContent(), 'Correcta');
      await noProblems('kind-articulos');
    } finally {
      server.resumeImports();
    }
  });

  test('a mapping change: saved, the last file imported again, and the API serves the new column', async () => {
    await page.goto(`${server.baseUrl}/panel/kinds/articulos/mapping`);
    assert.match(await page.textContent('#map-nombre option[value=""]') ?? '', /Automático \(DESCRIPCION\)/);
    await page.selectOption('#map-nombre', 'MARCA');
    await page.click('button:has-text("Guardar mapeo")');
    await page.waitForSelector('.notice-success');
    assert.equal(await page.inputValue('#map-nombre'), 'MARCA');
    await noProblems('mapping-saved');
    await page.click('button:has-text("Importar de nuevo el último archivo")');
    await page.waitForURL(/\/panel\/imports\/\d+\?again=1/);
    const id = Number(/imports\/(\d+)/.exec(page.url())![1]);
    await waitForImport(store, id);
    await page.waitForSelector('#report');
    const key = await credentialFor(store, admin.company.id, 'read');
    const items = (await request(`${server.baseUrl}/v1/articulos?limit=3`, { headers: bearer(key.token) })).json().items;
    assert.deepEqual(items.map((i: any) => i.nombre), items.map((i: any) => i.data.MARCA.trim() || null));
  });

  test('a key: created with a label, copied, used against /v1, then revoked after confirmation', async () => {
    await page.goto(`${server.baseUrl}/panel/keys`);
    await page.fill('#label', 'Cuadro de mando');
    await page.click('button:has-text("Crear clave")');
    const key = await page.inputValue('#new-secret');
    assert.match(key, /^api_[a-z0-9]{8}_[A-Za-z0-9]{33}$/);
    await page.click('button[data-copy="new-secret"]');
    await page.waitForSelector('[data-copy-status="new-secret"]:has-text("Copiado")');
    assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), key);
    await noProblems('key-created');
    assert.equal((await request(`${server.baseUrl}/v1/articulos?limit=1`, { headers: bearer(key) })).status, 200);

    // F5 on the page that showed it (the POST redirected there): nothing is created, nothing shown again.
    const keysBefore = (await store.listCredentials(admin.company.id, 'read')).length;
    await page.reload();
    await page.waitForSelector('#gone-title');
    assert.equal(await page.locator('#new-secret').count(), 0, 'the value is not shown again');
    assert.equal((await page.content()).includes(key), false);
    assert.equal((await store.listCredentials(admin.company.id, 'read')).length, keysBefore, 'a refresh creates no key');

    await page.goto(`${server.baseUrl}/panel/keys`);
    const prefix = key.slice(4, 12);
    await page.click(`a[href="/panel/keys/${prefix}/revoke"]`);
    assert.match(await page.textContent('h1') ?? '', new RegExp(`¿Revocar la clave ${prefix}\\?`));
    await noProblems('key-revoke-confirm');
    await page.click('button:has-text("Sí, revocar")');
    await page.waitForSelector('.notice-success');
    assert.match(await page.locator('tr', { hasText: prefix }).textContent() ?? '', /Revocada/);
    const refused = await request(`${server.baseUrl}/v1/articulos?limit=1`, { headers: bearer(key) });
    assert.equal(refused.status, 401);
    await noProblems('keys-after-revoke');
  });

  test('a token: created in the panel, and the curl command it shows (pointed at this server) uploads a file', async () => {
    await page.goto(`${server.baseUrl}/panel/tokens`);
    await page.fill('#label', 'Exportación nocturna');
    await page.click('button:has-text("Crear token")');
    const token = await page.inputValue('#new-secret');
    const command = await page.inputValue('#new-command');
    assert.equal(command, `curl -T export.csv -H "Authorization: Bearer ${token}" http://localhost:3000/panel/api/imports/clientes`);
    await noProblems('token-created');
    // The command as shown, pointed at this test's server instead of PUBLIC_BASE_URL's default.
    const dir = tempDir();
    let answer: any;
    try {
      copyFileSync(fileURLToPath(new URL('clientes.csv', SAMPLES)), join(dir.path, 'export.csv'));
      const url = `${server.baseUrl}/panel/api/imports/clientes`;
      if (existsSync('/usr/bin/curl')) {
        const args = ['-sS', '-T', 'export.csv', '-H', `Authorization: Bearer ${token}`, url];
        // Asynchronously: the server answering curl runs in this very process.
        answer = JSON.parse((await promisify(execFile)('curl', args, { cwd: dir.path, encoding: 'utf8' })).stdout);
      } else {
        answer = (await request(url, { method: 'PUT', headers: bearer(token), body: readFileSync(join(dir.path, 'export.csv')) })).json();
      }
    } finally {
      dir.remove();
    }
    assert.equal(answer.ok, true);
    assert.match(answer.status_url, new RegExp(`/panel/api/imports/${answer.import_id}$`));
    assert.equal((await waitForImport(store, answer.import_id)).status, 'succeeded');
    await page.goto(`${server.baseUrl}/panel/kinds/clientes`);
    assert.match(await page.locator('tbody tr').first().textContent() ?? '', new RegExp(`token ${token.slice(4, 12)}`));
    await page.goto(`${server.baseUrl}/panel`);
    assert.match(await page.textContent('#kind-clientes + p') ?? '', /200 registros/);
    await noProblems('overview');
  });

  test('the language switch: English is remembered across pages and sessions, and Spanish comes back', async () => {
    await page.goto(`${server.baseUrl}/panel/keys`);
    await page.click('button:has-text("English")');
    await page.waitForURL(/\/panel\/keys$/);
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    assert.equal(await page.textContent('h1'), 'API keys');
    await page.click('nav >> text=Overview');
    assert.equal(await page.textContent('h1'), 'Overview');
    await noProblems('overview-en');
    await page.click('button:has-text("Sign out")');
    await page.waitForURL(/sign-in\?bye=1$/);
    assert.equal(await page.textContent('h1'), 'Sign in', 'remembered after signing out');
    await page.click('button:has-text("Español")');
    assert.equal(await page.textContent('h1'), 'Iniciar sesión');
    assert.equal(await page.getAttribute('html', 'lang'), 'es');
  });
});
