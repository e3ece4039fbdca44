/**
 * Issue 6, point 10: a CSV whose header, cells and file name hold
 * `<script>` and `"><img onerror=…>`, and a key label holding `<script>`,
 * uploaded through the browser: on every page that shows them nothing runs,
 * and they read as the text they are. The browser here ignores the panel's
 * CSP (bypassCSP), so what is proven is the escaping itself, not the CSP
 * catching a mistake.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Store } from '../../src/store/store.js';
import { browserSkip, DESKTOP, launchChromium, newContext, screenshot, signInThroughForm, watchForErrors } from '../helpers/browser.js';
import { companyWithAdmin, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import { sqliteFactory } from '../helpers/stores.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

declare const document: any;
declare const window: any;

const HOSTILE = readFileSync(fileURLToPath(new URL('../../../test/fixtures/csv/hostile.csv', import.meta.url)));

describe('panel escaping in Chromium', { skip: browserSkip(), timeout: HANG_GUARD_MS }, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: PanelServer;
  let browser: Browser;

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startPanelServer(store);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await cleanup?.();
  });

  test('a hostile CSV, file name and key label run nothing on any page, and show as text', async () => {
    const admin = await companyWithAdmin(store, 'hostil');
    const context = await newContext(browser, DESKTOP, { bypassCSP: true });
    const page = await context.newPage();
    const errors: string[] = [];
    watchForErrors(page, errors);
    const base = server.baseUrl;
    try {
      await page.goto(`${base}/panel/sign-in`);
      await signInThroughForm(page, admin);

      await page.goto(`${base}/panel/kinds/articulos`);
      await page.setInputFiles('#file', { name: `"><img src=x onerror=window.__xss='file'>.csv`, mimeType: 'text/csv', buffer: HOSTILE });
      await page.click('#upload-form button[type=submit]');
      // The hostile file name is shown in the drop zone as text, then the report is one click away.
      await page.click('#report-link');
      await page.waitForURL(/\/panel\/imports\/\d+#report$/);
      const id = Number(/imports\/(\d+)/.exec(page.url())![1]);
      assert.equal((await waitForImport(store, id)).status, 'succeeded');

      await page.goto(`${base}/panel/keys`);
      await page.fill('#label', `<script>window.__xss='label'</script><img src=x onerror=window.__xss='label2'>`);
      await page.click('button:has-text("Crear clave")');

      const shown: Record<string, string[]> = {
        [`/panel/imports/${id}`]: [`"><img src=x onerror="window.__xss='precio'">`],
        '/panel/kinds/articulos': [`<script>window.__xss='cell'</script>`, `"><img src=x onerror="window.__xss='desc'">`, '<b>ud</b>', `onerror=window.__xss='file'>.csv`],
        '/panel/kinds/articulos/mapping': [],
        '/panel/keys': [`<script>window.__xss='label'</script>`],
        '/panel': [],
      };
      for (const [path, texts] of Object.entries(shown)) {
        await page.goto(`${base}${path}`);
        await page.waitForLoadState('load');
        const state = await page.evaluate(() => ({
          xss: window.__xss ?? null,
          images: document.querySelectorAll('img').length,
          scripts: [...document.querySelectorAll('script')].map((s: any) => s.getAttribute('src')),
          bold: document.querySelectorAll('main b').length,
          text: document.body.innerText,
          options: [...document.querySelectorAll('option')].map((o: any) => o.value),
        }));
        assert.equal(state.xss, null, `${path}: injected code ran`);
        assert.equal(state.images, 0, `${path}: an <img> was injected`);
        assert.equal(state.bold, 0, `${path}: markup from a cell was rendered`);
        assert.equal(state.scripts.length, 1, `${path}: ${state.scripts.join(', ')}`);
        assert.match(state.scripts[0], /^\/panel\/assets\/panel\.js\?v=/);
        for (const t of texts) assert.ok(state.text.includes(t), `${path} shows ${t} as text`);
        if (path.endsWith('/mapping')) assert.ok(state.options.includes(`"><img src=x onerror="window.__xss='column'">`), 'the column name is an option value');
        await screenshot(page, `xss${path.replaceAll('/', '-')}`);
      }
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});
