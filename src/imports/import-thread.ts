/**
 * Runs the import worker in a worker thread with its own store connection:
 * better-sqlite3 is synchronous, and an import must never block the thread
 * that answers HTTP.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { openStore } from '../store/open-store.js';
import { ImportWorker } from './import-worker.js';
import { lowerThreadPriority } from './thread-priority.js';

interface ThreadData {
  databaseUrl: string;
  snapshotRetentionMs: number;
}

type ThreadMessage =
  | { type: 'started'; importId: number }
  | { type: 'finished'; importId: number; status: string }
  | { type: 'error'; message: string }
  | { type: 'stopped' };

export interface ImportThread {
  /** Asks the worker to look for queued work now. */
  wake(): void;
  stop(): Promise<void>;
}

/** Starts the worker thread from the main thread. */
export function startImportThread(data: ThreadData, logger: FastifyBaseLogger): ImportThread {
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  const stopped = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (m: ThreadMessage) => {
    if (m.type === 'started') logger.info({ importId: m.importId }, 'import started');
    else if (m.type === 'finished') logger.info({ importId: m.importId, status: m.status }, 'import finished');
    else if (m.type === 'error') logger.error({ err: m.message }, 'import worker error');
  });
  worker.on('error', (err) => logger.error({ err }, 'import worker crashed'));
  return {
    wake: () => worker.postMessage('wake'),
    stop: async () => {
      worker.postMessage('stop');
      await stopped;
    },
  };
}

async function threadMain(data: ThreadData) {
  // The HTTP thread of this process comes first; threads started from here (the CSV thread) inherit this.
  lowerThreadPriority();
  const store = await openStore(data.databaseUrl);
  const post = (m: ThreadMessage) => parentPort!.postMessage(m);
  const worker = new ImportWorker(store, {
    snapshotRetentionMs: data.snapshotRetentionMs,
    events: {
      started: (job) => post({ type: 'started', importId: job.id }),
      finished: (job, report) => post({ type: 'finished', importId: job.id, status: report.status }),
      error: (err) => post({ type: 'error', message: String((err as Error)?.message ?? err) }),
    },
  });
  parentPort!.on('message', (m: string) => {
    if (m === 'wake') worker.wake();
    if (m === 'stop') {
      void worker.stop().then(async () => {
        await store.close();
        process.exit(0);
      });
    }
  });
  worker.start();
}

if (!isMainThread && (workerData as ThreadData | undefined)?.databaseUrl) {
  void threadMain(workerData as ThreadData);
}
