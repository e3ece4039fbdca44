/**
 * A real Chromium for the panel's browser tests: Debian's `chromium`,
 * driven headless by playwright-core. Where none is installed the tests are
 * skipped, out loud — except in CI (CI=true), where they must run.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { HANG_GUARD_MS } from './timing.js';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/** Why the browser tests are skipped, or false when they run. */
export function browserSkip(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') return false; // launching fails, loudly: CI must run them
  const message = `Panel browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH; required when CI=true)`;
  process.stderr.write(`${message}\n`);
  return message;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

export const MOBILE = { width: 360, height: 780 };
export const DESKTOP = { width: 1280, height: 900 };

/** The test's own code runs in the page; it is not type-checked against the DOM (no DOM lib here). */
declare const document: any;
declare const window: any;

const AXE = readFileSync(fileURLToPath(new URL('../../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');
export const SCREENSHOTS = fileURLToPath(new URL('../../../test-results/panel/', import.meta.url));

export interface AxeProblem {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core on the page and returns its violations of every impact
 * (minor and moderate too: issue 20 asks for none at all). Injected through
 * the DevTools protocol (page.evaluate), which the page's CSP does not
 * govern, so the CSP under test stays on.
 */
export async function axeViolations(page: Page): Promise<AxeProblem[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n: any) => n.target.join(' ')) }));
  });
}

/** The serious and critical ones among `axeViolations`. */
export async function seriousViolations(page: Page): Promise<AxeProblem[]> {
  return (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A full-page screenshot in test-results/panel/ (gitignored), named for the page and the width. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const width = page.viewportSize()?.width ?? 0;
  // Chromium now and then answers "Unable to capture screenshot" when the machine is loaded (the
  // whole suite runs at once; seen once in a full run, never in the file alone): the picture is
  // a by-product for people to look at, not what the test checks, so it is taken again.
  for (let attempt = 1; ; attempt++) {
    try {
      await page.screenshot({ path: `${SCREENSHOTS}${name}-${width}.png`, fullPage });
      return;
    } catch (err) {
      if (attempt === 3 || !/Unable to capture screenshot/.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Fails the test when the page violates its CSP (an inline script would) or throws. */
export function watchForErrors(page: Page, errors: string[]) {
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => {
    errors.push(`a dialog opened: ${d.message()}`);
    void d.dismiss();
  });
}

export async function newContext(browser: Browser, viewport = DESKTOP, options: { bypassCSP?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, locale: 'es-ES', bypassCSP: options.bypassCSP ?? false });
  // Playwright's 30 s defaults are bounds on a hang, not on speed: a busy machine gets room.
  context.setDefaultTimeout(HANG_GUARD_MS);
  context.setDefaultNavigationTimeout(HANG_GUARD_MS);
  return context;
}

/** Whether the focused element shows a focus ring someone can see (an outline at least 2 px wide). */
export function focusVisible(page: Page): Promise<{ tag: string; text: string; outline: string; visible: boolean }> {
  return page.evaluate(() => {
    const el = document.activeElement;
    const style = window.getComputedStyle(el);
    const width = parseFloat(style.outlineWidth) || 0;
    return {
      tag: el.tagName,
      text: (el.textContent || el.getAttribute('name') || '').trim().slice(0, 40),
      outline: `${style.outlineStyle} ${style.outlineWidth}`,
      visible: style.outlineStyle !== 'none' && width >= 2,
    };
  });
}

/** Fills the sign-in form on the current page and submits it; resolves on the overview. */
export async function signInThroughForm(page: Page, admin: { email: string; password: string }): Promise<void> {
  await page.fill('#email', admin.email);
  await page.fill('#password', admin.password);
  await Promise.all([page.waitForURL(/\/panel$/), page.click('button[type=submit].primary')]);
}
