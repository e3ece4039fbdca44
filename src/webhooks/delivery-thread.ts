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
  wake(): void;
  stop(): Promise<void>;
}

const MODULE = fileURLToPath(import.meta.url);

export function startDeliveryThread(databaseUrl: string, config: WebhookConfig, logger: FastifyBaseLogger): DeliveryThread {
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
