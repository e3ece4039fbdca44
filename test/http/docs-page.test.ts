/**
 * Issue 7, point 2: /docs in a real Chromium. Every endpoint of the document
 * is on the page, nothing is loaded from another origin, the page runs under
 * its CSP without a violation, and "try it" answers from the sandbox.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Store } from '../../src/store/store.js';
import { request } from '../helpers/http.js';
import { sqliteFactory } from '../helpers/stores.js';
import { startServer, type TestServer } from '../helpers/test-server.js';

const CHROMIUM = '/usr/bin/chromium';
const skip =
  existsSync(CHROMIUM) || process.env.CI === 'true'
    ? false
    : `docs page browser test skipped: no Chromium at ${CHROMIUM} (install Debian's chromium; required when CI=true)`;
if (skip) process.stderr.write(`${skip}\n`);

describe('the /docs page in Chromium', { skip }, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];
  const problems: string[] = [];

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startServer(store);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
        '--disable-component-update', '--no-first-run', '--disable-sync',
      ],
    });
    page = await browser.newPage();
    page.setDefaultTimeout(120_000);
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${server.baseUrl}/docs`);
    await page.waitForSelector('.opblock', { timeout: 120_000 });
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
  });

  test('every endpoint of the document is on the page', async () => {
    const doc = (await request(`${server.baseUrl}/openapi.json`)).json();
    const expected = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const shown = await page.$$eval('.opblock', (blocks) =>
      blocks.map((b) => {
        const method = b.querySelector('.opblock-summary-method')?.textContent?.trim();
        const path = b.querySelector('.opblock-summary-path')?.getAttribute('data-path');
        return `${method} ${path}`;
      }),
    );
    assert.deepEqual([...shown].sort(), [...expected].sort());
    assert.equal(expected.length, 36, '16 paths of kinds and 2 of estado, GET and OPTIONS each');
  });

  test('assets come from this server only, and the page runs without errors or CSP violations', async () => {
    const origins = new Set(requested.map((u) => new URL(u).origin));
    assert.deepEqual([...origins], [server.baseUrl]);
    assert.ok(requested.some((u) => u.endsWith('/docs/static/swagger-ui-bundle.js')));
    assert.deepEqual(problems, []);
  });

  test('"try it" lists sandbox customers from this server', async () => {
    const op = '#operations-clientes-listSandboxClientes';
    await page.click(`${op} .opblock-summary`);
    await page.click(`${op} .try-out__btn`);
    await page.fill(`${op} tr[data-param-name="limit"] input`, '3');
    await page.click(`${op} .execute`);
    const status = await page.waitForSelector(`${op} .live-responses-table tbody .response-col_status`, { timeout: 120_000 });
    assert.equal((await status.textContent())?.trim(), '200');
    const body = JSON.parse((await page.textContent(`${op} .live-responses-table .response-col_description pre.microlight`)) ?? '{}');
    assert.equal(body.sandbox, true);
    assert.equal(body.items.length, 3);
    assert.ok(requested.includes(`${server.baseUrl}/v1/sandbox/clientes?limit=3&offset=0`), requested.filter((u) => u.includes('/v1/')).join(' '));
    assert.deepEqual(problems, []);
  });
});
