/**
 * Runs the delivery loop under `serve` in a worker thread with its own store
 * connection: better-sqlite3 is synchronous, and a write that waits for the
 * import process's lock must block this thread, never the one answering HTTP.
 * The thread reports attempts to the parent, which logs them (URL host,
 * status, duration; never the secret nor the body).
 */
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import type { WebhookConfig } from '../config.js';
import { openStore } from '../store/open-store.js';
import { DeliveryLoop } from './delivery-loop.js';

interface ThreadData {
  role: 'mirador-deliveries';
  databaseUrl: string;
  config: WebhookConfig;
}

type ToThread = { type: 'wake' } | { type: 'stop' };
type FromThread =
  | { type: 'attempt'; endpointId: number; deliveryId: number; eventId: string; status: number | null; ok: boolean; ms: number; error: string | null; retryAt: number | null }
  | { type: 'error'; message: string }
  | { type: 'stopped' };

export interface DeliveryThread {
  /** Delivers what is due now (starting the thread first if an enabled endpoint now exists). */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * How often a server whose store has no enabled endpoint looks again: as often
 * as the delivery loop itself polls, so an endpoint added elsewhere (the
 * panel of another instance, the CLI) is served as soon as it would be.
 */
export const ENDPOINT_CHECK_MS = 1000;

const MODULE = fileURLToPath(import.meta.url);

/**
 * Starts the delivery thread when `needed` (the store has an enabled
 * endpoint) says so: now, or at a later check or wake. A thread is a second
 * V8 isolate with its own store connection (12–15 MB of RSS measured), which a
 * server with no webhooks has no use for. Once started it runs until `stop`.
 */
export async function startDeliveryThread(
  databaseUrl: string,
  config: WebhookConfig,
  logger: FastifyBaseLogger,
  needed: () => Promise<boolean>,
): Promise<DeliveryThread> {
  let thread: DeliveryThread | null = null;
  let stopped = false;
  let checking: Promise<void> | null = null;
  let failing = false;
  const check = () =>
    (checking ??= (async () => {
      try {
        const want = await needed();
        failing = false;
        if (want && !thread && !stopped) {
          thread = spawnThread(databaseUrl, config, logger);
          clearInterval(timer);
          logger.info('webhook delivery thread started');
        }
      } catch (err) {
        // The store away: the next check tries again; one line per outage, not one a second.
        if (!failing) logger.warn({ err }, 'could not check for webhook endpoints');
        failing = true;
      } finally {
        checking = null;
      }
    })());
  const timer = setInterval(() => void check(), ENDPOINT_CHECK_MS);
  timer.unref();
  await check();
  if (!thread) logger.info('no enabled webhook endpoint: the delivery thread starts when one exists');
  return {
    wake: () => (thread ? thread.wake() : void check()),
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await checking;
      await thread?.stop();
    },
  };
}

function spawnThread(databaseUrl: string, config: WebhookConfig, logger: FastifyBaseLogger): DeliveryThread {
  const worker = new Worker(MODULE, { workerData: { role: 'mirador-deliveries', databaseUrl, config } satisfies ThreadData });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (m: FromThread) => {
    if (m.type === 'attempt') {
      const fields = { endpoint: m.endpointId, delivery: m.deliveryId, event: m.eventId, status: m.status, ms: m.ms };
      if (m.ok) logger.debug(fields, 'webhook delivered');
      else logger.warn({ ...fields, error: m.error, retryAt: m.retryAt === null ? null : new Date(m.retryAt).toISOString() }, 'webhook attempt failed');
    } else if (m.type === 'error') logger.error({ err: m.message }, 'webhook delivery error');
  });
  worker.on('error', (err) => logger.error({ err }, 'webhook delivery thread died'));
  return {
    wake: () => worker.postMessage({ type: 'wake' } satisfies ToThread),
    stop: async () => {
      worker.postMessage({ type: 'stop' } satisfies ToThread);
      await exited;
    },
  };
}

function threadMain(data: ThreadData) {
  const port = parentPort!;
  const post = (m: FromThread) => port.postMessage(m);
  const ready = openStore(data.databaseUrl).then((store) => {
    const loop = new DeliveryLoop(store, data.config, {
      events: {
        attempted: (d, r) =>
          post({ type: 'attempt', endpointId: d.endpointId, deliveryId: d.id, eventId: d.eventId, status: r.statusCode, ok: r.ok, ms: r.durationMs, error: r.error, retryAt: r.retryAt }),
        error: (err) => post({ type: 'error', message: String((err as Error)?.message ?? err) }),
      },
    });
    loop.start();
    return { store, loop };
  });
  ready.catch((err: unknown) => post({ type: 'error', message: String((err as Error)?.message ?? err) }));
  port.on('message', (m: ToThread) => {
    if (m.type === 'wake') void ready.then(({ loop }) => loop.wake(), () => {});
    else if (m.type === 'stop') {
      void ready
        .then(async ({ store, loop }) => {
          await loop.stop();
          await store.close();
        })
        .catch(() => {})
        .finally(() => {
          post({ type: 'stopped' });
          port.close();
        });
    }
  });
}

if (!isMainThread && (workerData as ThreadData | undefined)?.role === 'mirador-deliveries') threadMain(workerData as ThreadData);
