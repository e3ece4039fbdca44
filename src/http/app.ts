/**
 * Builds the HTTP application. Never listens: `server.ts` does that, and tests
 * may drive the app directly or start it on port 0.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Store } from '../store/store.js';
import { SandboxSnapshots } from '../sandbox/sandbox-snapshots.js';
import { registerApiRoutes } from './api/api-routes.js';
import { registerEventRoutes } from './api/event-routes.js';
import { apiDocs } from './api/api-docs.js';
import { CompressedBodyCache } from './api/send-body.js';
import { CachedChunkSource } from './api/cached-chunk-source.js';
import { splitReadCacheBudget, type CacheUse } from './api/read-cache-budget.js';
import { ProjectionCache } from './api/thin-projection.js';
import { MatchCache } from './api/subset-page.js';
import { TombstoneCache } from './api/tombstone-cache.js';
import { CredentialsCache } from './credentials-cache.js';
import { createRateCounter, RateLimiter } from './rate-limit.js';
import { clientErrorHandler, MAX_URL_LENGTH } from './client-errors.js';
import { Metrics } from './metrics.js';
import { registerOpsRoutes } from './ops-routes.js';
import { registerDocsPage } from './docs/docs-page.js';
import { registerOpenApi } from './docs/openapi-document.js';
import { closeConnectionsGracefully } from './graceful-close.js';
import { skipEmptyBodyLifeCycle } from './empty-request-body.js';
import { panelPlugin } from './panel/panel-plugin.js';
import { ApiError, sendError } from './errors.js';
import { allowAnyOrigin } from './cors.js';
import { REQUEST_ID } from './api/api-components.js';
import { StoreUnavailableError } from '../store/store.js';

export interface AppDeps {
  config: Config;
  store: Store;
  logger: FastifyBaseLogger;
  /** Built once per process; shared when several apps run in one process (tests). */
  sandbox?: SandboxSnapshots;
  /** Process metrics; the server shares them with the import worker's events. */
  metrics?: Metrics;
  /** Called when an upload is queued, so the import worker takes it now rather than at its next poll. */
  onImportQueued?: () => void;
  /**
   * Called when an upload begins to be stored, with its import's id and the
   * size its client declared (null when it declared none), where the store
   * `writesWhileStoring`: the import worker may prepare the import meanwhile
   * (imports/upload-preparation.ts).
   */
  onImportReceiving?: (importId: number, declaredBytes: number | null) => void;
  /** How long a key's checked entry is trusted, and the clock its expiry is judged by (tests set them). */
  credentialsCache?: { ttlMs?: number; now?: () => number };
}

export interface App {
  fastify: FastifyInstance;
  credentials: CredentialsCache;
  metrics: Metrics;
  /** What each cache of the read path holds now, against its share of CHUNK_CACHE_MB (read-cache-budget.ts). */
  readCaches(): CacheUse[];
  /** Stops timers and flushes last-use times. Does not close the store. */
  close(): Promise<void>;
}


export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, store } = deps;
  const fastify = Fastify({
    loggerInstance: deps.logger,
    // One log line per request, written in onResponse with what we choose to show.
    logController: new LogController({ disableRequestLogging: true }),
    // A child logger per request (for its reqId) costs ~2% of a 304; with logging off nothing would use it.
    childLoggerFactory: (logger, bindings, options) => (logger.level === 'silent' ? logger : logger.child(bindings, options)),
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // id_erp values can be long; the default of 100 characters would turn them into 404s.
    routerOptions: { maxParamLength: 2048 },
    return503OnClosing: true,
    trustProxy: config.trustProxy,
    clientErrorHandler,
    // A malformed URL (bad percent-encoding) gets the contract's 400, not Fastify's own body.
    frameworkErrors: (_error, _request, reply) => sendError(reply, new ApiError('bad_request', 'The URL is malformed.')),
    // Connections are closed by graceful-close.ts, which lets buffered responses drain.
    forceCloseConnections: false,
  });

  closeConnectionsGracefully(fastify.server);
  const credentials = new CredentialsCache(store, deps.credentialsCache?.ttlMs, undefined, deps.credentialsCache?.now);
  credentials.start();

  const metrics = deps.metrics ?? new Metrics();

  // Both hooks run on every request: callback style, no promise per hook.
  fastify.addHook('onRequest', (request, reply, done) => {
    // Before anything is written: the server finds a bodiless request finished when the response is.
    skipEmptyBodyLifeCycle(request.raw);
    const url = request.url;
    reply.header('x-request-id', request.id);
    allowAnyOrigin(reply, url);
    if (url.length > MAX_URL_LENGTH) return done(new ApiError('uri_too_long'));
    if (url.startsWith('/v1/')) {
      // Paths are exact: `/v1/clientes/` is no path (issue 21, point 6), not the list nor an empty id_erp.
      const query = url.indexOf('?');
      if (url.charCodeAt((query < 0 ? url.length : query) - 1) === 47 /* / */) {
        return done(new ApiError('not_found', `There is nothing at ${request.method} ${clipPath(url)}: API paths do not end with a slash.`));
      }
    }
    done();
  });

  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? null;
    metrics.observeRequest(route ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    request.log.info(
      {
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        company: request.credential?.companyId,
        keyPrefix: request.credential?.prefix,
      },
      'request',
    );
    done();
  });

  fastify.setNotFoundHandler(async (request, reply) =>
    sendError(reply, new ApiError('not_found', `There is nothing at ${request.method} ${clipPath(request.url)}.`)),
  );

  fastify.setErrorHandler(async (error, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    if (error instanceof StoreUnavailableError) {
      // The client only learns "retry later"; the operator needs the cause (a pool wait, a cancelled statement, a lost server).
      request.log.warn({ cause: (error.cause as Error | undefined)?.message ?? error.message }, 'store unavailable: answered 503');
      return sendError(reply, new ApiError('unavailable', undefined, { 'Retry-After': '5' }));
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (status === 413) return sendError(reply, new ApiError('payload_too_large'));
    if (status && status >= 400 && status < 500) {
      return sendError(reply, new ApiError('bad_request', `The request is malformed.`));
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, new ApiError('internal_error'));
  });

  // Before the routes: @fastify/swagger collects them as they are added.
  await registerOpenApi(fastify, config.publicBaseUrl);
  await registerDocsPage(fastify, config.publicBaseUrl);

  const sandbox = deps.sandbox ?? new SandboxSnapshots();
  const counter = createRateCounter(config.redisUrl, deps.logger);
  // Every cache of the read path that grows with the data shares CHUNK_CACHE_MB (read-cache-budget.ts).
  const budget = splitReadCacheBudget(config.chunkCacheBytes);
  const compressed = new CompressedBodyCache(budget.compressedBodies);
  const chunkSource = new CachedChunkSource(store, budget.chunks);
  const matches = new MatchCache(budget.filterMatches);
  const projections = new ProjectionCache(budget.thinProjections);
  const tombstones = new TombstoneCache(store, budget.tombstones);
  metrics.watchChunkCache(() => chunkSource.stats());
  const readCaches = (): CacheUse[] => [
    { cache: 'chunks', bytes: chunkSource.cachedBytes, budgetBytes: budget.chunks },
    { cache: 'compressed_bodies', bytes: compressed.cachedBytes, budgetBytes: budget.compressedBodies },
    { cache: 'filter_matches', bytes: matches.cachedBytes, budgetBytes: budget.filterMatches },
    { cache: 'thin_projections', bytes: projections.cachedBytes, budgetBytes: budget.thinProjections },
    { cache: 'tombstones', bytes: tombstones.cachedBytes, budgetBytes: budget.tombstones },
  ];
  metrics.watchReadCaches(readCaches);
  const keyLimiter = new RateLimiter(counter, config.rateLimitPerMinute, deps.logger);
  const sandboxLimiter = new RateLimiter(counter, config.sandboxRateLimitPerMinute, deps.logger);
  registerApiRoutes(fastify, {
    store,
    credentials,
    chunkSource,
    sandbox,
    compressed,
    matches,
    projections,
    tombstones,
    keyLimiter,
    sandboxLimiter,
    snapshotRetentionMs: config.snapshotRetentionMs,
  });
  registerEventRoutes(fastify, { store, credentials, compressed, keyLimiter, sandboxLimiter }, apiDocs(sandbox));

  registerOpsRoutes(fastify, store, metrics);
  await fastify.register(panelPlugin, {
    prefix: '/panel',
    config,
    store,
    credentials,
    onImportQueued: deps.onImportQueued,
    onImportReceiving: deps.onImportReceiving,
  });

  await fastify.ready();
  return {
    fastify,
    credentials,
    metrics,
    readCaches,
    close: async () => {
      await credentials.stop();
      await counter.close();
    },
  };
}

function clipPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path.length > 100 ? `${path.slice(0, 100)}…` : path;
}
