/**
 * The guard's decision in Chromium (issue 20, points 5 and 10): a held
 * import's page at 360 px and 1280 px — axe finds nothing serious, nothing
 * overflows sideways, the two sides sit side by side on a wide screen and
 * one above the other on a phone, the apply button is red and the reject
 * button neutral — then the decision taken with a click (reject on the
 * phone, apply on the wide screen), its result page audited too. And an
 * upload from the kind page that the guard holds: its steps say held, not
 * finished, and its link leads to the decision.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Store } from '../../src/store/store.js';
import { writeGuard } from '../../src/imports/deletion-guard.js';
import { browserSkip, DESKTOP, launchChromium, MOBILE, newContext, screenshot, axeViolations, signInThroughForm, watchForErrors } from '../helpers/browser.js';
import { csv } from '../helpers/csv.js';
import { companyWithAdmin, startPanelServer, waitForImport, type PanelServer } from '../helpers/panel.js';
import { sqliteFactory } from '../helpers/stores.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

declare const document: any;
declare const window: any;

async function* once(bytes: Buffer) {
  yield bytes;
}

const products = (n: number) =>
  csv([['CODIGO', 'DESCRIPCION', 'PRECIO_VENTA'], ...Array.from({ length: n }, (_, i) => [`ART-${String(i + 1).padStart(4, '0')}`, `Tornillo hexagonal DIN 933 M${8 + (i % 6)} x ${40 + i} cincado`, '0,35'])]);

describe('the guard decision in Chromium', { skip: browserSkip(), timeout: HANG_GUARD_MS }, () => {
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

  /** A company whose second upload of products is held: 40 served, the file keeps 25. */
  async function heldImport(slug: string) {
    const admin = await companyWithAdmin(store, slug);
    await writeGuard(store, admin.company.id, { enabled: true, minRecords: 1, maxFraction: 0.1 });
    const upload = async (n: number) => {
      const job = await store.createImport({ companyId: admin.company.id, kind: 'articulos', filename: `tarifa-${n}.csv`, source: 'panel' }, once(products(n)), 1 << 20);
      server.resumeImports();
      return waitForImport(store, job.id);
    };
    assert.equal((await upload(40)).status, 'succeeded');
    const held = await upload(25);
    assert.equal(held.status, 'awaiting_confirmation');
    return { admin, held };
  }

  async function audit(page: Page, errors: string[], name: string) {
    await screenshot(page, name);
    assert.deepEqual(await axeViolations(page), [], `axe on ${name}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${name} is ${overflow}px wider than the viewport`);
    assert.deepEqual(errors, [], `errors on ${name}`);
  }

  test('an upload held by the guard from the kind page: its steps say held, not finished, and lead to the decision', async () => {
    const admin = await companyWithAdmin(store, 'guarda-subida');
    await writeGuard(store, admin.company.id, { enabled: true, minRecords: 1, maxFraction: 0.1 });
    const first = await store.createImport({ companyId: admin.company.id, kind: 'articulos', filename: 'tarifa.csv', source: 'panel' }, once(products(40)), 1 << 20);
    server.resumeImports();
    assert.equal((await waitForImport(store, first.id)).status, 'succeeded');
    const context = await newContext(browser, DESKTOP);
    const page = await context.newPage();
    const errors: string[] = [];
    watchForErrors(page, errors);
    try {
      await page.goto(`${server.baseUrl}/panel/sign-in`);
      await signInThroughForm(page, admin);
      await page.goto(`${server.baseUrl}/panel/kinds/articulos`);
      await page.setInputFiles('#file', { name: 'tarifa-corta.csv', mimeType: 'text/csv', buffer: products(25) });
      await page.click('#upload-form button[type=submit]');
      await page.waitForSelector('[data-step="publish"][data-state="held"]');
      assert.equal(await page.textContent('[data-step-count="publish"]'), 'Retenida: decide en su página');
      await page.waitForSelector('#report-link:not([hidden])');
      const status = await page.textContent('#import-status');
      assert.equal(status, 'Retenida: decide en su página', 'held, not "Importación terminada."');
      assert.equal((await page.textContent('#report-link'))?.trim(), 'Decidir sobre la importación retenida');
      await audit(page, errors, 'upload-held');
      await Promise.all([page.waitForURL(/\/panel\/imports\/\d+#held$/), page.click('#report-link')]);
      assert.equal(await page.textContent('button.danger'), 'Aplicar y eliminar 15 registros');
    } finally {
      await context.close();
    }
  });

  for (const viewport of [MOBILE, DESKTOP]) {
    const wide = viewport.width >= 768;
    test(`at ${viewport.width} px: the decision is clear, and ${wide ? 'applying removes the records' : 'rejecting keeps them'}`, async () => {
      const { admin, held } = await heldImport(`guarda-${viewport.width}`);
      const context = await newContext(browser, viewport);
      const page = await context.newPage();
      const errors: string[] = [];
      watchForErrors(page, errors);
      try {
        await page.goto(`${server.baseUrl}/panel/sign-in`);
        await signInThroughForm(page, admin);
        await page.goto(`${server.baseUrl}/panel/imports/${held.id}`);
        await audit(page, errors, 'import-held');

        const apply = page.locator('button.danger');
        const reject = page.locator('button:has-text("Rechazar")');
        assert.equal(await apply.textContent(), 'Aplicar y eliminar 15 registros');
        // Red with white text for the destructive choice; the neutral one is not red.
        const colours = await page.evaluate(() => {
          const style = (selector: string) => window.getComputedStyle(document.querySelector(selector));
          return { apply: style('button.danger').backgroundColor, applyText: style('button.danger').color, reject: style('button.secondary').backgroundColor };
        });
        assert.deepEqual(colours, { apply: 'rgb(185, 28, 28)', applyText: 'rgb(255, 255, 255)', reject: 'rgb(255, 255, 255)' });
        // Served now beside the file on a wide screen; one above the other on a phone.
        const [live, next] = await Promise.all([page.locator('#live-title').boundingBox(), page.locator('#new-title').boundingBox()]);
        if (wide) assert.ok(Math.abs(live!.y - next!.y) < 2 && next!.x > live!.x + live!.width, JSON.stringify({ live, next }));
        else assert.ok(next!.y > live!.y + live!.height, JSON.stringify({ live, next }));
        assert.equal(await page.locator('.removed tbody tr').count(), 10);
        assert.equal(await page.locator('dt:has-text("Terminó")').count(), 0, 'no finish time while it waits');

        if (wide) {
          await Promise.all([page.waitForURL(/decided=confirmed/), apply.click()]);
          assert.match(await page.textContent('.notice-success') ?? '', /Importación confirmada/);
          assert.equal(await page.textContent('dt:has-text("Eliminados") + dd'), '15');
          await audit(page, errors, 'import-held-applied');
          assert.equal((await store.snapshotMeta((await store.liveSnapshotId(admin.company.id, 'articulos'))!))!.count, 25);
        } else {
          await Promise.all([page.waitForURL(/decided=rejected/), reject.click()]);
          const text = await page.textContent('main') ?? '';
          assert.match(text, /no se eliminó ningún registro/);
          assert.doesNotMatch(text, /Eliminados|Aplicar y eliminar/);
          await audit(page, errors, 'import-held-rejected');
          assert.equal((await store.snapshotMeta((await store.liveSnapshotId(admin.company.id, 'articulos'))!))!.count, 40);
        }
      } finally {
        await context.close();
      }
    });
  }
});
