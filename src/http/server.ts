/**
 * Runs Mirador: the HTTP server and the import worker. Listens, and shuts down
 * gracefully on SIGTERM/SIGINT: stop accepting, finish requests in flight,
 * stop the worker, close the store.
 */
import cluster from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Store } from '../store/store.js';
import { buildApp, type App, type AppDeps } from './app.js';
import { FILL_GROWTH_PERCENT, watchCacheFill } from './cache-fill-growth.js';
import { applyHeapGrowth } from './heap-growth.js';
import { applyNoPretenuring } from './pretenuring.js';
import { Metrics } from './metrics.js';

export interface RunningServer {
  app: App;
  address: string;
  close(): Promise<void>;
}

export async function startHttp(
  config: Config,
  store: Store,
  logger: FastifyBaseLogger,
  metrics?: Metrics,
  imports: Pick<AppDeps, 'onImportQueued' | 'onImportReceiving'> = {},
): Promise<RunningServer> {
  const app = await buildApp({ config, store, logger, metrics, ...imports });
  const address = await app.fastify.listen({ port: config.port, host: config.host });
  return {
    app,
    address,
    close: async () => {
      await app.fastify.close();
      await app.close();
    },
  };
}

export interface ServeOptions {
  workers: number;
  /** Starts the background import worker, reporting to `metrics`; returns its stop function. */
  startImportWorker?: (metrics: Metrics) => Promise<() => Promise<void>>;
  /** Wakes the import worker (in this process) when an upload is queued. */
  onImportQueued?: () => void;
  /** Names an upload being received to the import worker (in this process), which may prepare its import meanwhile. */
  onImportReceiving?: (importId: number, declaredBytes: number | null) => void;
  /** Starts the webhook delivery loop (in the background, one per instance) when `store` has endpoints; returns its stop function. */
  startDeliveries?: (store: Store) => Promise<() => Promise<void>>;
}

/** What a forked HTTP process sends the primary, which runs the import worker. */
const IMPORT_QUEUED = 'mirador:import-queued';
const IMPORT_RECEIVING = 'mirador:import-receiving';
type ImportReceiving = { type: typeof IMPORT_RECEIVING; importId: number; declaredBytes: number | null };

/**
 * With `workers` > 1 the primary process forks that many HTTP processes (node's
 * cluster shares the listening socket) and runs the import worker itself.
 */
export async function serve(
  config: Config,
  openStore: () => Promise<Store>,
  logger: FastifyBaseLogger,
  options: ServeOptions,
): Promise<void> {
  const heapGrowthPercent = applyHeapGrowth(config.chunkCacheBytes);
  const pretenuringOff = applyNoPretenuring();
  const store = await openStore();
  if (cluster.isPrimary) await store.migrate();

  const metrics = new Metrics();
  const stops: (() => Promise<void>)[] = [];
  if (cluster.isPrimary && options.startImportWorker) stops.push(await options.startImportWorker(metrics));
  if (cluster.isPrimary && options.startDeliveries) stops.push(await options.startDeliveries(store));

  if (cluster.isPrimary && options.workers > 1) {
    for (let i = 0; i < options.workers; i++) cluster.fork();
    cluster.on('message', (_worker, message) => {
      if (message === IMPORT_QUEUED) options.onImportQueued?.();
      else if ((message as ImportReceiving | null)?.type === IMPORT_RECEIVING) {
        const m = message as ImportReceiving;
        options.onImportReceiving?.(m.importId, m.declaredBytes);
      }
    });
    let stopping = false;
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) return;
      logger.error({ pid: worker.process.pid, code, signal }, 'HTTP worker died; starting another');
      cluster.fork();
    });
    logger.info({ workers: options.workers, port: config.port }, 'mirador started');
    onSignals(async () => {
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
      await Promise.all(
        Object.values(cluster.workers ?? {}).map((w) => new Promise((resolve) => w?.once('exit', resolve))),
      );
      for (const stop of stops) await stop();
      await store.close();
    }, logger);
    return;
  }

  // A forked HTTP process has no worker of its own: it asks the primary to wake its.
  const imports = cluster.isPrimary
    ? { onImportQueued: options.onImportQueued, onImportReceiving: options.onImportReceiving }
    : {
        onImportQueued: () => process.send?.(IMPORT_QUEUED),
        onImportReceiving: (importId: number, declaredBytes: number | null) =>
          process.send?.({ type: IMPORT_RECEIVING, importId, declaredBytes } satisfies ImportReceiving),
      };
  const server = await startHttp(config, store, logger, metrics, imports);
  const fillWatch = watchCacheFill(() => server.app.readCaches().find((c) => c.cache === 'chunks')!, config.chunkCacheBytes);
  logger.info(
    {
      address: server.address,
      pid: process.pid,
      ...(heapGrowthPercent === null ? {} : { heapGrowthPercent }),
      ...(fillWatch === null ? {} : { heapGrowthWhileFilling: FILL_GROWTH_PERCENT }),
      ...(pretenuringOff ? { allocationSitePretenuring: false } : {}),
      ...(store.pageCacheKiB === undefined ? {} : { sqlitePageCacheKiB: store.pageCacheKiB }),
    },
    'mirador listening',
  );
  onSignals(async () => {
    fillWatch?.stop();
    await server.close();
    for (const stop of stops) await stop();
    await store.close();
  }, logger);
}

function onSignals(shutdown: () => Promise<void>, logger: FastifyBaseLogger) {
  let called = false;
  const handler = (signal: string) => {
    if (called) return;
    called = true;
    logger.info({ signal }, 'shutting down');
    shutdown()
      .then(() => process.exit(0))
      .catch((err) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      });
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
