/**
 * Every panel page, at 360 px and at 1280 px: axe-core finds no serious or
 * critical violation, nothing overflows the viewport sideways, no CSP
 * violation or script error happens, and a screenshot is saved in
 * test-results/panel/ to be looked at.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Store } from '../../src/store/store.js';
import { browserSkip, DESKTOP, launchChromium, MOBILE, newContext, screenshot, axeViolations, seriousViolations, signInThroughForm, watchForErrors } from '../helpers/browser.js';
import { csv } from '../helpers/csv.js';
import { companyWithAdmin, credentialFor, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import { sqliteFactory } from '../helpers/stores.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

declare const document: any;

async function* once(bytes: Buffer) {
  yield bytes;
}

describe('panel pages: accessibility, layout and screenshots', { skip: browserSkip(), timeout: HANG_GUARD_MS }, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: PanelServer;
  let browser: Browser;
  let admin: Awaited<ReturnType<typeof companyWithAdmin>>;
  const ids = { ok: 0, failed: 0, queued: 0, key: '', token: '', webhook: 0 };

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startPanelServer(store);
    admin = await companyWithAdmin(store, 'paginas');
    const companyId = admin.company.id;
    const upload = async (kind: 'articulos' | 'clientes', bytes: Buffer, filename: string) => {
      const job = await store.createImport({ companyId, kind, filename, source: 'panel' }, once(bytes), 1 << 20);
      server.resumeImports();
      return (await waitForImport(store, job.id)).id;
    };
    ids.ok = await upload(
      'articulos',
      csv([['CODIGO', 'DESCRIPCION', 'UNIDAD', 'PRECIO_VENTA', 'OBSERVACIONES'], ['A1', 'Tornillo hexagonal M8 x 40 cincado', 'ud', '0,35', ''], ['A2', 'Tuerca', 'ud', 'a consultar', 'Precio según volumen'], ['A3', 'Arandela', 'caja', '1.234,50', '']]),
      'tarifa-2026.csv',
    );
    ids.failed = await upload('clientes', csv([['CODIGO', 'NOMBRE'], ['C1', 'Uno'], ['C2'], ['C3', 'Tres']]), 'clientes-roto.csv');
    await server.pauseImports();
    ids.queued = (await store.createImport({ companyId, kind: 'obras', filename: 'obras.csv', source: 'panel' }, once(csv([['CODIGO', 'NOMBRE'], ['O1', 'Obra']])), 1 << 20)).id;
    ids.key = (await credentialFor(store, companyId, 'read')).prefix;
    ids.token = (await credentialFor(store, companyId, 'upload')).prefix;
    // A webhook endpoint with an attempts log: one delivered, one failed with a long error.
    const endpoint = await store.createWebhookEndpoint({ companyId, url: 'https://erp.example.com/hooks/mirador?source=panel-test', eventTypes: ['import.published'], secret: 'whsec_pages' });
    ids.webhook = endpoint.id;
    for (const ok of [true, false]) {
      await store.queueDelivery(endpoint.id, { publicId: `evt_pages${ok ? 1 : 2}`, type: 'webhook.test', body: '{}' });
      const [d] = await store.claimDeliveries('pages:1:a', 1, 60_000, []);
      await store.finishDelivery(d!.id, 'pages:1:a', {
        at: Date.now(), durationMs: ok ? 42 : 10_000, statusCode: ok ? 204 : null, ok,
        error: ok ? null : 'No complete answer within 10000 ms (timeout).', responseBody: null, retryAt: ok ? null : Date.now() + 60_000,
      });
    }
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await cleanup?.();
  });

  async function check(page: Page, errors: string[], name: string) {
    await screenshot(page, name);
    assert.deepEqual(await axeViolations(page), [], `axe on ${name}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${name} is ${overflow}px wider than the viewport`);
    // On a phone, tables are stacked cards: nothing is hidden off to the side inside them either.
    if ((page.viewportSize()?.width ?? 0) < 600) {
      const hidden = await page.evaluate(() =>
        [...document.querySelectorAll('.table-wrap')].filter((w: any) => w.scrollWidth > w.clientWidth + 1).length,
      );
      assert.equal(hidden, 0, `${name}: a table scrolls sideways at phone width`);
      const unlabelled = await page.evaluate(() => document.querySelectorAll('.stack td:not([data-label])').length);
      assert.equal(unlabelled, 0, `${name}: every stacked cell says which column it is`);
    }
    assert.deepEqual(errors, [], `errors on ${name}`);
  }

  test('the audit itself works: axe reports a page with known serious violations', async () => {
    const page = await browser.newPage();
    try {
      await page.setContent('<html><body><img src="data:,"><input type="text"><a href="#"></a></body></html>');
      const ids = (await seriousViolations(page)).map((v) => v.id).sort();
      assert.deepEqual(ids, ['document-title', 'html-has-lang', 'image-alt', 'label', 'link-name']);
    } finally {
      await page.close();
    }
  });

  for (const viewport of [MOBILE, DESKTOP]) {
    test(`every page at ${viewport.width} px`, async () => {
      const context = await newContext(browser, viewport);
      const page = await context.newPage();
      const errors: string[] = [];
      watchForErrors(page, errors);
      const base = server.baseUrl;
      try {
        await page.goto(`${base}/panel/sign-in`);
        await check(page, errors, 'sign-in');
        await signInThroughForm(page, admin);

        const pages: [string, string][] = [
          ['overview-data', '/panel'],
          ['kind-with-preview', '/panel/kinds/articulos'],
          ['kind-empty', '/panel/kinds/avisos-correctivo'],
          ['import-warnings', `/panel/imports/${ids.ok}`],
          ['import-failed', `/panel/imports/${ids.failed}`],
          ['import-queued', `/panel/imports/${ids.queued}`],
          ['mapping', '/panel/kinds/articulos/mapping'],
          ['mapping-no-file', '/panel/kinds/avisos-correctivo/mapping'],
          ['keys', '/panel/keys'],
          ['key-revoke', `/panel/keys/${ids.key}/revoke`],
          ['tokens', '/panel/tokens'],
          ['help', '/panel/help'],
          ['webhooks', '/panel/webhooks'],
          ['webhook', `/panel/webhooks/${ids.webhook}`],
          ['webhook-delete', `/panel/webhooks/${ids.webhook}/delete`],
          ['audit', '/panel/audit'],
          ['not-found', '/panel/imports/999999'],
        ];
        for (const [name, path] of pages) {
          const res = await page.goto(`${base}${path}`);
          assert.equal(res?.status(), name === 'not-found' ? 404 : 200, name);
          await check(page, errors, name);
        }
        // The queued import's page shows its progress bar, waiting.
        await page.goto(`${base}/panel/imports/${ids.queued}`);
        await page.waitForSelector('#import-status:has-text("En cola")');

        await page.goto(`${base}/panel/tokens`);
        await page.fill('#label', 'ERP');
        await page.click('button:has-text("Crear token")');
        await check(page, errors, 'token-created');
        await page.goto(`${base}/panel/keys`);
        await page.fill('#label', 'Cuadro de mando de dirección');
        await page.selectOption('#expires_in', '90d');
        await page.click('button:has-text("Crear clave")');
        await check(page, errors, 'key-created');
        await page.goto(`${base}/panel/webhooks`);
        await page.fill('#url', 'https://erp.example.com/hooks/nuevo');
        await page.check('input[value="import.failed"]');
        await page.click('button:has-text("Añadir endpoint")');
        await page.waitForSelector('#new-secret');
        await check(page, errors, 'webhook-created');
        await page.goto(`${base}/panel/audit?action=key`);
        await check(page, errors, 'audit-filtered');
        await page.goto(`${base}/panel/kinds/clientes/mapping`);
        await page.selectOption('#map-nombre', 'NOMBRE');
        await page.click('button:has-text("Guardar mapeo")');
        await check(page, errors, 'mapping-saved');
      } finally {
        await context.close();
      }
    });
  }
});
