/**
 * The key flow with the keyboard alone (issue 20, point 10): sign in, go to
 * the API keys, create one, see it once, and confirm "I have saved it" —
 * only Tab, typing and Enter, no clicks — with a visible focus ring (an
 * outline of 2 px or more) on every control the focus passes through.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Store } from '../../src/store/store.js';
import { browserSkip, DESKTOP, focusVisible, launchChromium, MOBILE, newContext, watchForErrors } from '../helpers/browser.js';
import { companyWithAdmin, startPanelServer, type PanelServer } from '../helpers/panel.js';
import { sqliteFactory } from '../helpers/stores.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

declare const document: any;

/** Where the focus is: whether it matches `selector`. */
function focusedMatches(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector);
}

/**
 * Presses Tab until the focus reaches `selector` (at most `max` times),
 * checking that every control the focus lands on shows its ring.
 */
async function tabTo(page: Page, selector: string, max = 40): Promise<number> {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press('Tab');
    const focus = await focusVisible(page);
    assert.ok(focus.visible, `no visible focus on ${JSON.stringify(focus)} (on the way to ${selector})`);
    if (await focusedMatches(page, selector)) return presses;
  }
  throw new Error(`${max} presses of Tab did not reach ${selector}`);
}

describe('the key flow with the keyboard alone', { skip: browserSkip(), timeout: HANG_GUARD_MS }, () => {
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

  for (const viewport of [DESKTOP, MOBILE]) {
    test(`at ${viewport.width} px: sign in, create a key, see it once, "I have saved it"`, async () => {
      const admin = await companyWithAdmin(store, `teclado-${viewport.width}`);
      const context = await newContext(browser, viewport);
      const page = await context.newPage();
      const errors: string[] = [];
      watchForErrors(page, errors);
      try {
        await page.goto(`${server.baseUrl}/panel/sign-in`);
        // Sign in: the email field has the focus on load.
        assert.ok(await focusedMatches(page, '#email'), 'the email field is focused on load');
        await page.keyboard.type(admin.email);
        await tabTo(page, '#password', 1);
        await page.keyboard.type(admin.password);
        await tabTo(page, 'button[type=submit]', 1);
        await Promise.all([page.waitForURL(/\/panel$/), page.keyboard.press('Enter')]);

        // To the API keys through the main navigation (the skip link and the header come first).
        await tabTo(page, 'nav a[href="/panel/keys"]');
        await Promise.all([page.waitForURL(/\/panel\/keys$/), page.keyboard.press('Enter')]);

        // Create a key: a label, past the expiry choice, to the button.
        await tabTo(page, '#label');
        await page.keyboard.type('Cuadro de mando');
        await tabTo(page, 'button[type=submit].primary', 3);
        await Promise.all([page.waitForURL(/\/panel\/keys\/[a-z0-9]{8}\/created$/), page.keyboard.press('Enter')]);

        // Shown once, in the highlighted panel: the value, its copy button, then "I have saved it".
        const key = await page.inputValue('#new-secret');
        assert.match(key, /^api_[a-z0-9]{8}_[A-Za-z0-9]{33}$/);
        await tabTo(page, '#new-secret');
        await tabTo(page, 'button[data-copy="new-secret"]', 1);
        await tabTo(page, 'a.button.primary[href="/panel/keys"]', 3);
        await Promise.all([page.waitForURL(/\/panel\/keys$/), page.keyboard.press('Enter')]);

        // Back on the list: the key is there by its prefix, its value nowhere.
        const prefix = key.slice(4, 12);
        assert.match(await page.locator('tr', { hasText: prefix }).textContent() ?? '', /Cuadro de mando[\s\S]*Activa/);
        assert.equal((await page.content()).includes(key), false, 'the value is not shown again');
        assert.equal((await store.listCredentials(admin.company.id, 'read')).length, 1, 'one key, created once');
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    });
  }
});
