/**
 * The management panel at /panel (contract §5): server-rendered pages, a
 * small client script, and a JSON API for upload tokens. Everything here is
 * encapsulated in this plugin — cookies, security headers, form and
 * multipart parsing — so none of it touches the /v1 hot path.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import multipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { StoreUnavailableError, UploadTooLargeError, type Store } from '../../store/store.js';
import { CorruptUploadError } from '../../imports/compressed-upload.js';
import type { CredentialsCache } from '../credentials-cache.js';
import { ApiError, sendError } from '../errors.js';
import { registerAuditRoutes } from './audit-routes.js';
import { registerAuthRoutes } from './auth-routes.js';
import { registerCredentialRoutes } from './credential-routes.js';
import { registerImportRoutes } from './import-routes.js';
import { registerMappingRoutes } from './mapping-routes.js';
import { csrfBinding, CsrfError, loadVisitor, pageContext, sendPage, type PanelDeps } from './panel-context.js';
import { PanelSessions, resolveSessionSecret } from './panel-session.js';
import { SecretReveals } from './secret-reveal.js';
import { createThrottleBackend, SignInThrottle } from './sign-in-throttle.js';
import { registerUploadApi } from './upload-api.js';
import { registerWebhookRoutes } from './webhook-routes.js';
import { errorPage } from './views/error-page.js';
import { MARK_SVG } from './views/mark.js';

export interface PanelOptions {
  config: Config;
  store: Store;
  credentials: CredentialsCache;
  onImportQueued?: () => void;
  onImportReceiving?: (importId: number, declaredBytes: number | null) => void;
}

/** The stylesheet and script live beside this file in the repository; compiled code runs from dist/. */
function assetsDir(): string {
  for (const candidate of ['./assets/', '../../../../src/http/panel/assets/']) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(`${dir}panel.js`)) return dir;
  }
  throw new Error('The panel assets (src/http/panel/assets) are missing.');
}

/** Inter's Latin subset (variable weight), from the npm package's files. */
function interFontPath(): string {
  return createRequire(import.meta.url).resolve('@fontsource-variable/inter/files/inter-latin-wght-normal.woff2');
}

/** `?v=<hash of the content>`: browsers may cache an asset until the file changes. */
function versioned(dir: string, name: string): string {
  const hash = createHash('sha256').update(readFileSync(`${dir}${name}`)).digest('hex').slice(0, 12);
  return `/panel/assets/${name}?v=${hash}`;
}

/** Answers JSON for the API and for scripts that ask for it; pages otherwise. */
function wantsJson(request: FastifyRequest): boolean {
  return request.url.startsWith('/panel/api/') || (request.headers.accept ?? '').includes('application/json');
}

export async function panelPlugin(app: FastifyInstance, options: PanelOptions) {
  const { config, store } = options;
  const secret = await resolveSessionSecret(config, store);
  const dir = assetsDir();
  const deps: PanelDeps = {
    config,
    store,
    credentials: options.credentials,
    sessions: new PanelSessions(secret, config.publicBaseUrl),
    reveals: new SecretReveals(secret),
    throttle: new SignInThrottle(createThrottleBackend(config.redisUrl, store, app.log)),
    onImportQueued: options.onImportQueued ?? (() => {}),
    onImportReceiving: options.onImportReceiving ?? (() => {}),
    assets: { css: versioned(dir, 'panel.css'), js: versioned(dir, 'panel.js') },
  };

  app.addHook('onClose', async () => deps.throttle.close());
  await app.register(cookie, { secret });
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        // Only our own script file: no inline scripts, no inline event handlers, no eval.
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        ...(config.publicBaseUrl.startsWith('https:') ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    // HSTS only means something over HTTPS; over plain HTTP (development) it is left out.
    strictTransportSecurity: config.publicBaseUrl.startsWith('https:'),
  });
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(multipart, {
    // The size limit is the store's (UploadTooLargeError); busboy's is a backstop one byte later.
    limits: { fileSize: config.maxUploadBytes + 1, files: 1, fields: 5, fieldSize: 1024, parts: 10 },
  });
  await app.register(fastifyStatic, {
    root: dir,
    prefix: '/assets/',
    index: false,
    list: false,
    wildcard: false,
    maxAge: 3600_000,
  });

  // The panel's typeface, from npm (@fontsource-variable/inter): never a font CDN.
  const font = readFileSync(interFontPath());
  app.get('/assets/inter-latin.woff2', { config: { panelAccess: 'public' } }, async (_request, reply) =>
    reply.header('Content-Type', 'font/woff2').header('Cache-Control', 'public, max-age=31536000, immutable').send(font),
  );

  app.get('/assets/mark.svg', { config: { panelAccess: 'public' } }, async (_request, reply) =>
    reply.header('Content-Type', 'image/svg+xml').header('Cache-Control', 'public, max-age=86400').send(MARK_SVG),
  );

  app.decorateRequest('panel', null);

  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/panel/assets/')) return;
    // Pages carry CSRF tokens and, once, new keys; answers depend on the session: never cached.
    reply.header('Cache-Control', 'no-store');
    request.panel = await loadVisitor(request, deps);
  });

  // The guard: pages need a signed-in administrator; forms need their CSRF token.
  app.addHook('preHandler', async (request, reply) => {
    const config = request.routeOptions.config;
    if (config.panelAccess === 'api' || request.url.startsWith('/panel/assets/')) return;
    if (config.panelAccess !== 'public' && !request.panel?.user) {
      if (wantsJson(request)) throw new ApiError('unauthorized', 'The panel session has expired: sign in again.');
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '?expired=1';
      return reply.redirect(`/panel/sign-in${next}`, 303);
    }
    if (request.method === 'GET' || request.method === 'HEAD' || config.csrfInHandler) return;
    const body = request.body as Record<string, unknown> | undefined;
    const binding = csrfBinding(request, deps);
    const presented = request.headers['x-csrf-token'] ?? body?._csrf;
    if (binding === null || !deps.sessions.csrfMatches(binding, presented)) throw new CsrfError();
  });

  app.setNotFoundHandler(async (request, reply) => {
    if (wantsJson(request)) return sendError(reply, new ApiError('not_found'));
    const ctx = pageContext(request, reply, deps);
    return sendPage(reply, errorPage(ctx, ctx.t('notFoundTitle'), ctx.t('notFoundText')), 404);
  });

  app.setErrorHandler(async (error, request, reply) => {
    const failure = classify(error);
    if (failure.code === 'internal_error') request.log.error({ err: error }, 'panel error');
    // A refused upload is not read to its end: close the connection rather than drain it.
    if (!request.raw.complete) reply.header('Connection', 'close');
    if (wantsJson(request)) {
      return sendError(reply, failure);
    }
    const ctx = pageContext(request, reply, deps);
    const { t } = ctx;
    const [title, text] =
      failure.code === 'not_found' ? [t('notFoundTitle'), t('notFoundText')]
      : failure.code === 'forbidden' ? [t('csrfTitle'), t('csrfText')]
      : failure.code === 'internal_error' || failure.code === 'unavailable' ? [t('errorTitle'), t('errorText')]
      : [t('badRequestTitle'), failure.message];
    for (const [name, value] of Object.entries(failure.headers)) reply.header(name, value);
    return sendPage(reply, errorPage(ctx, title, text), failure.status);
  });

  registerAuthRoutes(app, deps);
  registerImportRoutes(app, deps);
  registerMappingRoutes(app, deps);
  registerCredentialRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  registerAuditRoutes(app, deps);
  await app.register(async (api) => registerUploadApi(api, deps));
}

/** Any error thrown in the panel, as the contract's error it is answered with. */
function classify(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof UploadTooLargeError) return new ApiError('payload_too_large', error.message);
  if (error instanceof CorruptUploadError) return new ApiError('bad_request', error.message);
  if (error instanceof StoreUnavailableError) return new ApiError('unavailable', undefined, { 'Retry-After': '5' });
  const status = (error as { statusCode?: number }).statusCode;
  if (status === 413) return new ApiError('payload_too_large');
  if (status && status >= 400 && status < 500) return new ApiError('bad_request', 'The request is malformed.');
  return new ApiError('internal_error');
}
