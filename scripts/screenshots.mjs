// Regenerates the panel screenshots docs/panel.md shows (issue 20): `npm run screenshots`.
//
// Runs a checkout's built CLI (`dist/src/main.js`) on a new SQLite database in a
// temporary directory: a company with an administrator, the shipped samples
// imported, then a shortened products file held by the mass-deletion guard.
// Serves it on a free port and, in Debian's Chromium (playwright-core, as the
// browser tests), signs in and photographs the overview, a kind's upload page,
// a key just created, the held import's decision and /docs, at 360 and 1280 px
// (the viewport, not the whole page, to keep the files small).
//
//   node scripts/screenshots.mjs [--root DIR] [--out DIR]
//
// --root: the checkout to run (default: this one; another one, e.g. an older
// commit's worktree, gives "before" pictures); --out: where the PNGs go
// (default: docs/screenshots/ of this checkout). Not part of `npm test`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] ? resolve(args[at + 1]) : fallback;
};
const root = option('--root', here);
const out = option('--out', join(here, 'docs', 'screenshots'));
const samples = join(here, 'samples');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const SLUG = 'demo';
const EMAIL = 'admin@demo.example';
const PASSWORD = 'una contraseña de muestra';
const WIDTHS = [
  { width: 360, height: 780 },
  { width: 1280, height: 860 },
];

const work = mkdtempSync(join(tmpdir(), 'mirador-screens-'));
const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
// The working directory is the temporary one, so no .env of the checkout is read.
const env = {
  ...process.env,
  DATABASE_URL: `sqlite:${join(work, 'mirador.db')}`,
  PORT: String(port),
  HOST: '127.0.0.1',
  PUBLIC_BASE_URL: baseUrl,
  LOG_LEVEL: 'silent',
};

/** Runs `mirador …` of the checkout; returns stdout, failing unless the exit code is one of `ok`. */
function mirador(cli, input, ok = [0]) {
  const res = spawnSync(process.execPath, [join(root, 'dist', 'src', 'main.js'), ...cli], { cwd: work, env, input, encoding: 'utf8' });
  if (!ok.includes(res.status)) throw new Error(`mirador ${cli.join(' ')} exited ${res.status}: ${res.stderr}`);
  return res.stdout;
}

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/** The first `n` records of a CSV (quoted line breaks kept inside their record), as bytes. */
function firstRecords(bytes, n) {
  const text = bytes.toString('latin1'); // byte for byte: only the ASCII quote and line breaks matter here
  let quoted = false;
  let records = -1; // the header is not counted
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (c === '\n' && !quoted && ++records === n) return Buffer.from(text.slice(0, i + 1), 'latin1');
  }
  return bytes;
}

/** Polls the server until it answers (it migrates the database first). */
async function waitForServer(child) {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mirador serve exited ${child.exitCode}`);
    try {
      const res = await fetch(`${baseUrl}/panel/sign-in`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

let server;
let browser;
try {
  // The data: the four samples, then products shortened to 200 of 300 records, held by the guard.
  mirador(['company', 'create', SLUG, '--name', 'Construcciones Demo S.L.']);
  mirador(['user', 'create', SLUG, EMAIL, '--password-stdin'], `${PASSWORD}\n`);
  for (const kind of ['clientes', 'articulos', 'obras', 'avisos-correctivo']) mirador(['import', SLUG, kind, join(samples, `${kind}.csv`)]);
  mirador(['company', 'guard', SLUG, '--on', '--min-records', '10', '--max-fraction', '0.1']);
  const shortened = join(work, 'articulos-incompleto.csv');
  writeFileSync(shortened, firstRecords(readFileSync(join(samples, 'articulos.csv')), 200));
  // Held: exit 3 (releases before the exit code said so exit 0; the report tells either way).
  const held = JSON.parse(mirador(['import', SLUG, 'articulos', shortened, '--json'], undefined, [0, 3]));
  if (held.status !== 'awaiting_confirmation') throw new Error(`the shortened file was not held: ${held.status}`);
  const heldId = held.import_id;

  server = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js'), 'serve'], { cwd: work, env, stdio: 'ignore' });
  await waitForServer(server);

  mkdirSync(out, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const written = [];
  const contexts = [];
  for (const viewport of WIDTHS) {
    const context = await browser.newContext({ viewport, locale: 'es-ES' });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/panel/sign-in`);
    await page.fill('#email', EMAIL);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/panel$/), page.press('#password', 'Enter')]);
    contexts.push({ viewport, context, page });
  }
  /** Each picture at every width before the next one: both widths show the same data. */
  const shoot = async (name, show) => {
    for (const { viewport, page } of contexts) {
      await show(page);
      await page.waitForLoadState('networkidle');
      const path = join(out, `${name}-${viewport.width}.png`);
      await page.screenshot({ path });
      written.push(path);
    }
  };
  await shoot('overview', (page) => page.goto(`${baseUrl}/panel`));
  await shoot('upload', (page) => page.goto(`${baseUrl}/panel/kinds/clientes`));
  await shoot('guard', async (page) => {
    await page.goto(`${baseUrl}/panel/imports/${heldId}`);
    // The decision, rather than the import's facts above it.
    await page.evaluate(() => globalThis.document.getElementById('held')?.scrollIntoView());
  });
  await shoot('docs', (page) => page.goto(`${baseUrl}/docs`));
  await shoot('key-created', async (page) => {
    await page.goto(`${baseUrl}/panel/keys`);
    await page.fill('#label', 'Cuadro de mando');
    await Promise.all([page.waitForNavigation(), page.click('form[action="/panel/keys"] button[type=submit]')]);
  });
  for (const { context } of contexts) await context.close();
  for (const path of written) process.stdout.write(`${path}\n`);
} finally {
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(work, { recursive: true, force: true });
}
