/**
 * Runs the import worker in a worker thread with its own store connection:
 * better-sqlite3 is synchronous, and an import must never block the thread
 * that answers HTTP.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { openStore } from '../store/open-store.js';
import type { ImportReport } from './import-report.js';
import { ImportWorker } from './import-worker.js';
import { lowerThreadPriority } from './thread-priority.js';

interface ThreadData {
  databaseUrl: string;
  snapshotRetentionMs: number;
  tombstoneRetentionMs: number;
}

type ThreadMessage =
  | { type: 'started'; importId: number }
  | { type: 'finished'; importId: number; report: ImportReport }
  | { type: 'error'; message: string }
  | { type: 'stopped' };

export interface ImportThread {
  /** Asks the worker to look for queued work now. */
  wake(): void;
  stop(): Promise<void>;
}

/** Starts the worker thread from the main thread. */
export function startImportThread(
  data: ThreadData,
  logger: FastifyBaseLogger,
  onFinished?: (report: ImportReport) => void,
): ImportThread {
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  const stopped = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (m: ThreadMessage) => {
    if (m.type === 'started') logger.info({ importId: m.importId }, 'import started');
    else if (m.type === 'finished') {
      const r = m.report;
      logger.info(
        { importId: m.importId, kind: r.kind, status: r.status, rows: r.rows_read, ms: r.duration_ms, error: r.error?.code },
        'import finished',
      );
      onFinished?.(r);
    }
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
    tombstoneRetentionMs: data.tombstoneRetentionMs,
    events: {
      started: (job) => post({ type: 'started', importId: job.id }),
      finished: (job, report) => post({ type: 'finished', importId: job.id, report }),
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
