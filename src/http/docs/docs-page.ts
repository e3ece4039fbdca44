/**
 * `GET /docs`: the API reference, rendered in the browser by Scalar
 * (@scalar/api-reference's standalone bundle, served from node_modules) from
 * the same document as /openapi.json, under a page header in Mirador's colours.
 *
 * Why Scalar: tried side by side with the Swagger UI we served before and with
 * Redoc. Swagger UI's markup nests buttons in buttons (36 axe "nested-interactive"
 * findings that CSS cannot fix) and reads poorly on a phone; Redoc has no "try it".
 * Scalar has a request client ("try it", which the sandbox answers without a
 * key), a readable phone layout, and its remaining axe findings were colour
 * contrast, fixed by our own theme (assets/docs.css). Its telemetry, hosted
 * fonts and AI agent are turned off (assets/docs-init.js), and the CSP lets it
 * reach this origin only.
 *
 * Pinned to 1.46.4, the newest Scalar whose installed packages all support
 * Node 20 (1.47 and later declare Node >= 22; npm ci warned EBADENGINE). The axe
 * findings of its markup are mended by assets/docs-init.js and docs.css; see
 * docs/architecture.md (Node 20).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';

/**
 * The page's policy: scripts from this origin only (no inline script, no eval);
 * inline styles, which Scalar sets on elements; `data:` images and fonts; and
 * requests to PUBLIC_BASE_URL too, the other server "try it" may be pointed at.
 */
export function docsCsp(publicBaseUrl: string): string {
  let extra = '';
  try {
    extra = ` ${new URL(publicBaseUrl).origin}`;
  } catch {
    // A PUBLIC_BASE_URL that is not a URL: "try it" still works against this origin.
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${extra}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}

/** Our own files live beside this module in the repository; compiled code runs from dist/. */
function ownAssetsDir(): string {
  for (const candidate of ['./assets/', '../../../../src/http/docs/assets/']) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(`${dir}docs-init.js`)) return dir;
  }
  throw new Error('The docs page assets (src/http/docs/assets) are missing.');
}

/** Scalar's self-contained browser bundle, inside the npm package. */
function scalarBundlePath(): string {
  const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
  return join(dirname(entry), 'browser', 'standalone.js');
}

interface Asset {
  body: Buffer;
  /** Made on first request (Scalar's bundle is 4 MB, 1 MB gzipped), then kept. */
  gzipped: Buffer | null;
  type: string;
  /** `?v=<hash>`: the page names each asset by content, so it may be cached for a year. */
  path: string;
}

function asset(name: string, file: string, type: string): Asset {
  const body = readFileSync(file);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { body, gzipped: null, type, path: `/docs/assets/${name}?v=${hash}` };
}

let loaded: Record<'css' | 'scalar' | 'init', Asset> | null = null;

/** Read once per process: every app built in it (tests build many) shares them. */
function docsAssets(): Record<'css' | 'scalar' | 'init', Asset> {
  if (loaded) return loaded;
  const dir = ownAssetsDir();
  loaded = {
    css: asset('docs.css', `${dir}docs.css`, 'text/css; charset=utf-8'),
    scalar: asset('scalar.js', scalarBundlePath(), 'text/javascript; charset=utf-8'),
    init: asset('docs-init.js', `${dir}docs-init.js`, 'text/javascript; charset=utf-8'),
  };
  return loaded;
}

function pageHtml(assets: Record<'css' | 'scalar' | 'init', Asset>): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Mirador</title>
<meta name="description" content="Mirador's read-only REST/JSON API: customers, products, projects and corrective notices, with a sandbox that needs no key.">
<link rel="icon" href="/panel/assets/mark.svg" type="image/svg+xml">
<link rel="stylesheet" href="${assets.css.path}">
<script src="${assets.scalar.path}" defer></script>
<script src="${assets.init.path}" defer></script>
</head>
<body>
<a class="skip" href="#reference">Skip to the reference</a>
<nav class="docs-top" aria-label="Mirador">
  <a class="docs-brand" href="/docs"><img src="/panel/assets/mark.svg" alt="" width="28" height="28">Mirador <span>API reference</span></a>
  <div class="docs-links">
    <a href="/openapi.json">OpenAPI</a>
    <a href="/panel">Panel</a>
  </div>
</nav>
<div id="reference"></div>
</body>
</html>
`;
}

export async function registerDocsPage(app: FastifyInstance, publicBaseUrl: string): Promise<void> {
  const assets = docsAssets();
  const body = pageHtml(assets);
  const csp = docsCsp(publicBaseUrl);
  const byName = new Map(Object.values(assets).map((a) => [a.path.slice('/docs/assets/'.length).split('?')[0]!, a]));

  app.get('/docs', async (_request, reply) =>
    reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Content-Security-Policy', csp)
      .header('Cache-Control', 'no-cache')
      .send(body),
  );
  app.get('/docs/', async (_request, reply) => reply.redirect('/docs', 301));
  app.get<{ Params: { name: string } }>('/docs/assets/:name', async (request, reply) => {
    const found = byName.get(request.params.name);
    if (!found) return reply.callNotFound();
    reply
      .header('Content-Type', found.type)
      .header('Cache-Control', 'public, max-age=31536000, immutable')
      .header('Vary', 'Accept-Encoding');
    if (!/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.send(found.body);
    found.gzipped ??= gzipSync(found.body, { level: 9 });
    return reply.header('Content-Encoding', 'gzip').send(found.gzipped);
  });
}
