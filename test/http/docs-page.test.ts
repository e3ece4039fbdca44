/**
 * /docs in a real Chromium (issue 7 point 2, issue 20 point 8): every
 * operation of the document is on the page, nothing is loaded from another
 * origin, the page runs under its CSP without an error, axe finds nothing at
 * 360 and 1280 px, nothing scrolls sideways, and "try it" answers from the sandbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Store } from '../../src/store/store.js';
import { browserSkip, DESKTOP, launchChromium, MOBILE, screenshot, axeViolations } from '../helpers/browser.js';
import { request } from '../helpers/http.js';
import { sqliteFactory } from '../helpers/stores.js';
import { startServer, type TestServer } from '../helpers/test-server.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

declare const document: any;
declare const window: any;

describe('the /docs page in Chromium', { skip: browserSkip(), timeout: HANG_GUARD_MS }, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let browser: Browser;
  const requested: string[] = [];
  const problems: string[] = [];
  const preflights: string[] = [];

  async function open(viewport: { width: number; height: number }): Promise<Page> {
    const page = await browser.newPage({ viewport });
    page.on('request', (r) => {
      requested.push(r.url());
      if (r.method() === 'OPTIONS') preflights.push(r.url());
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${server.baseUrl}/docs`);
    await page.waitForSelector('li[data-sidebar-id*="/tag/"]', { state: 'attached', timeout: HANG_GUARD_MS });
    await page.waitForSelector('h1', { timeout: HANG_GUARD_MS });
    // Scalar renders the reference in steps, the schemas last: axe and the width
    // are checked once the last schema of the document is on the page.
    const doc = (await request(`${server.baseUrl}/openapi.json`)).json();
    const lastSchema = Object.keys(doc.components.schemas).at(-1)!.toLowerCase();
    await page.waitForSelector(`[id$="/model/${lastSchema}"]`, { state: 'attached', timeout: HANG_GUARD_MS });
    return page;
  }

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startServer(store);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await cleanup?.();
  });

  test('the page has no inline script and a CSP allowing scripts from this origin only', async () => {
    const res = await request(`${server.baseUrl}/docs`);
    assert.equal(res.status, 200);
    const scripts = res.text().match(/<script\b[^>]*>/g) ?? [];
    assert.ok(scripts.length > 0);
    for (const tag of scripts) assert.match(tag, /\bsrc="[^"]+"/, tag);
    assert.doesNotMatch(res.text(), /<script\b[^>]*>\s*[^<\s]/, 'an inline script body');
    assert.match(String(res.headers['content-security-policy']), /script-src 'self';/);
    assert.match(String(res.headers['content-security-policy']), /connect-src 'self'/);
  });

  test('every operation of the document is listed, at 1280 px', async () => {
    const page = await open(DESKTOP);
    const doc = (await request(`${server.baseUrl}/openapi.json`)).json();
    const expected = Object.entries<Record<string, { tags?: string[] }>>(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'head', 'options', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, op]) => `/tag/${op.tags?.[0]?.toLowerCase()}/${method.toUpperCase()}${path}`),
    );
    // Each operation has its entry in the sidebar and its section in the reference.
    const listed = await page.$$eval('li[data-sidebar-id]', (items) => items.map((li) => li.getAttribute('data-sidebar-id')));
    const sections = await page.$$eval('section[id]', (found) => found.map((section) => section.id));
    for (const id of expected) {
      assert.ok(listed.some((l) => l?.endsWith(id)), `${id} is in the sidebar`);
      assert.ok(sections.some((l) => l.endsWith(id)), `${id} has its section`);
    }
    assert.ok(expected.length >= 18, `${expected.length} operations`);
    await page.close();
  });

  for (const viewport of [DESKTOP, MOBILE]) {
    test(`axe finds nothing and nothing scrolls sideways, at ${viewport.width} px`, async () => {
      const page = await open(viewport);
      // The first screen only: the whole reference is over 100,000 px tall.
      await screenshot(page, `docs-${viewport.width}`, false);
      // Every impact, minor and moderate included.
      assert.deepEqual(await axeViolations(page), [], `axe on /docs at ${viewport.width}`);
      const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      assert.ok(widths[0]! <= widths[1]!, `page is ${widths[0]} px wide in a ${widths[1]} px viewport`);
      await page.close();
    });
  }

  test('"try it" lists sandbox customers from this server', async () => {
    const page = await open(DESKTOP);
    const section = page.locator('[id$="/tag/clientes/GET/v1/sandbox/clientes"]').first();
    await section.scrollIntoViewIfNeeded();
    await section.getByRole('button', { name: /test request/i }).first().click();
    const answer = page.waitForResponse((r) => /^\/v1\/sandbox\/clientes(\?|$)/.test(r.url().slice(server.baseUrl.length)) && r.url().startsWith(server.baseUrl));
    await page.getByRole('button', { name: /^send/i }).first().click();
    const response = await answer;
    assert.equal(response.status(), 200);
    const body = await response.json();
    assert.equal(body.sandbox, true);
    assert.ok(body.items.length > 0);
    await page.getByText('"sandbox": true').first().waitFor({ timeout: HANG_GUARD_MS });
    await page.close();
  });

  test('assets come from this server only, and the page ran without errors or CSP violations', () => {
    const origins = new Set(requested.map((u) => new URL(u).origin));
    assert.deepEqual([...origins], [server.baseUrl]);
    // "try it" asks the sandbox directly: no CORS preflight.
    assert.deepEqual(preflights, []);
    assert.ok(requested.some((u) => u.includes('/docs/assets/scalar.js')));
    assert.deepEqual(problems, []);
  });
});
