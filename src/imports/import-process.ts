/**
 * Runs the import worker under `serve` in a child process with its own store
 * connection, and a fresh one for every import: better-sqlite3 is
 * synchronous, so an import must never run on the thread that answers HTTP;
 * and an import churns through Buffers of several MiB (upload blobs, staged
 * bodies, rendered batches) that glibc's allocator, once they are freed,
 * keeps in its per-thread arenas instead of giving back. In a long-lived
 * process that retained memory grew with every import (issue 8, the soak);
 * a process that exits after its import hands all of it back.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import type { ImportReport } from './import-report.js';
import { ImportWorker } from './import-worker.js';
import { lowerProcessPriority } from './process-priority.js';
import { v8FlagGiven } from '../v8-flags.js';

interface ProcessData {
  databaseUrl: string;
  snapshotRetentionMs: number;
  tombstoneRetentionMs: number;
  eventRetentionMs: number;
  auditRetentionMs: number;
  uploadRetentionMs: number;
}

// The settings go over the IPC channel, never in argv: DATABASE_URL may hold a password, and argv is public.
type ToChild =
  | { type: 'start'; data: ProcessData }
  | { type: 'wake' }
  | { type: 'prepare'; importId: number; declaredBytes: number | null }
  | { type: 'stop' };

type FromChild =
  | { type: 'started'; importId: number }
  | { type: 'preparing'; importId: number }
  | { type: 'finished'; importId: number; report: ImportReport; prepared: boolean }
  | { type: 'segmented'; snapshotId: number; chunks: number; ms: number }
  | { type: 'packed'; importId: number; plainBytes: number; packedBytes: number }
  | { type: 'error'; message: string };

export interface ImportProcess {
  /** Asks the worker to look for queued work now. */
  wake(): void;
  /**
   * Names an import whose upload is being stored, so that the worker may
   * prepare it meanwhile (upload-preparation.ts). An optimisation only: when
   * no child is there to hear it (between two), or the child is busy with an
   * import, the import is applied from the store once queued, as any other.
   */
  prepare(importId: number, declaredBytes: number | null): void;
  /** Lets a running import complete, then ends the worker. */
  stop(): Promise<void>;
}

/**
 * A child that died (rather than exited after an import) is replaced after a
 * pause that doubles with each crash in a row, up to the cap: a broken setup
 * (a database that cannot be opened) neither spins nor floods the log.
 */
const RESTART_AFTER_CRASH_MS = 1000;
const RESTART_AFTER_CRASH_MAX_MS = 60_000;

const CHILD_MODULE = fileURLToPath(import.meta.url);

/** Starts the worker's child process, and a new one whenever one exits, until `stop`. */
export function startImportProcess(
  data: ProcessData,
  logger: FastifyBaseLogger,
  onFinished?: (report: ImportReport) => void,
): ImportProcess {
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let stopping = false;
  let restart: NodeJS.Timeout | null = null;
  let crashes = 0;

  const start = () => {
    restart = null;
    const c = fork(CHILD_MODULE, [], {
      execArgv: importChildExecArgv(process.execArgv),
      env: importChildEnv(process.env),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child = c;
    let gone: () => void = () => {};
    exited = new Promise((resolve) => (gone = resolve));
    c.on('message', (m: FromChild) => {
      if (m.type === 'started') logger.info({ importId: m.importId, pid: c.pid }, 'import started');
      else if (m.type === 'preparing') logger.info({ importId: m.importId, pid: c.pid }, 'import preparing while its upload is stored');
      else if (m.type === 'finished') {
        const r = m.report;
        logger.info(
          { importId: m.importId, kind: r.kind, status: r.status, rows: r.rows_read, ms: r.duration_ms, error: r.error?.code, prepared: m.prepared },
          'import finished',
        );
        onFinished?.(r);
      } else if (m.type === 'segmented') {
        logger.info({ snapshotId: m.snapshotId, chunks: m.chunks, ms: Math.round(m.ms), pid: c.pid }, 'gzip segments written');
      } else if (m.type === 'packed') {
        logger.info({ importId: m.importId, plainBytes: m.plainBytes, packedBytes: m.packedBytes, pid: c.pid }, 'stored upload packed');
      } else if (m.type === 'error') logger.error({ err: m.message }, 'import worker error');
    });
    const ended = (code: number | null, signal: NodeJS.Signals | null) => {
      if (child !== c) return;
      child = null;
      gone();
      if (stopping) return;
      // 0: it applied an import and exited to hand its memory back; anything else is a crash.
      crashes = code === 0 ? 0 : crashes + 1;
      const pause = crashes === 0 ? 0 : Math.min(RESTART_AFTER_CRASH_MAX_MS, RESTART_AFTER_CRASH_MS * 2 ** (crashes - 1));
      if (crashes > 0) logger.error({ code, signal, restartInMs: pause }, 'import process died; starting another');
      restart = setTimeout(start, pause);
    };
    c.once('exit', ended);
    // A process that could not be started has no exit to wait for; sending to one that has just
    // exited fails too, and its exit is handled above.
    c.on('error', (err) => {
      logger.error({ err }, 'import process error');
      if (c.pid === undefined) ended(null, null);
    });
    if (c.connected) c.send({ type: 'start', data } satisfies ToChild);
  };
  start();

  const send = (m: ToChild) => {
    if (child?.connected) child.send(m);
  };
  return {
    // A wake that falls between two children is not lost: a new child looks for work first thing.
    wake: () => send({ type: 'wake' }),
    prepare: (importId, declaredBytes) => send({ type: 'prepare', importId, declaredBytes }),
    stop: async () => {
      stopping = true;
      if (restart) clearTimeout(restart);
      send({ type: 'stop' });
      await exited;
    },
  };
}

/** Old generation V8 lets the import process fill before its first full collection (MB). */
export const IMPORT_INITIAL_OLD_SPACE_MB = 64;
const INITIAL_OLD_SPACE = '--initial-old-space-size';

/**
 * The child's Node.js and V8 flags: the server's, without a debugger flag
 * (the child would try to listen on the parent's inspector port), and with
 * a larger first old generation unless the operator set one. Why: with
 * V8's default, the import's main thread ran a full collection every ~80 ms
 * of an import for a heap of 10-16 MB (37 in a first import of 100,000
 * customers on PostgreSQL, 430 ms of the thread), as the rendered batches
 * it receives and the chunks it writes churn through its external memory;
 * at 64 MB, 7 (93 ms). Measured in docs/performance.md, "The import
 * process's first old generation".
 */
export function importChildExecArgv(execArgv: readonly string[]): string[] {
  const kept = execArgv.filter((a) => !a.startsWith('--inspect'));
  if (v8FlagGiven(kept, INITIAL_OLD_SPACE)) return kept;
  return [...kept, `${INITIAL_OLD_SPACE}=${IMPORT_INITIAL_OLD_SPACE_MB}`];
}

/**
 * The child's environment: the server's, without jemalloc in LD_PRELOAD (the
 * unit preloads it, deploy/mirador.service) and with glibc's malloc on one
 * arena (MALLOC_ARENA_MAX=1) unless the operator chose a number. jemalloc
 * keeps a long-lived server's RSS flat; this process exits after one import,
 * and there jemalloc did not reuse the pages of the Buffers V8 frees in
 * batches: every rendered batch and every read came from fresh pages. glibc
 * with its per-thread arenas trimmed what the gzip segment pass's threads
 * freed and faulted it back in. Measured on PostgreSQL, 100,000 customers
 * (docs/performance.md, "The import process on glibc's malloc, one arena"):
 * 107,500-118,900 page faults a first import under jemalloc, 58,500-76,900
 * on one arena, peak RSS 241-254 MiB against 206-238; the segment pass
 * 5.9-7.5 s under jemalloc, 8.7-9.5 s on glibc's own arenas, 5.7-6.6 s on one.
 */
export function importChildEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { LD_PRELOAD: preload, ...rest } = env;
  const child: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: '1', ...rest };
  // ld.so splits the list at spaces and colons.
  const kept = (preload ?? '').split(/[\s:]+/).filter((lib) => lib !== '' && !/(^|\/)libjemalloc\.so[.\d]*$/.test(lib));
  if (kept.length > 0) child.LD_PRELOAD = kept.join(' ');
  return child;
}

// --- The child ---------------------------------------------------------------------------------

function childMain() {
  // The process answering HTTP comes first; threads started from here (the CSV thread) inherit this.
  lowerProcessPriority();
  // Signals are the parent's to act on: Ctrl-C and a service manager's SIGTERM reach the whole
  // process group, and the parent then asks this process to stop once its import is complete.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});

  const post = (m: FromChild) => {
    if (process.connected) process.send!(m);
  };
  let running: Promise<{ store: Store; worker: ImportWorker }> | null = null;
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      const r = await running?.catch(() => null);
      await r?.worker.stop();
      await r?.store.close();
      process.exit(0);
    })());

  process.on('message', (m: ToChild) => {
    if (m.type === 'start' && !running) {
      let claimed = false;
      running = openStore(m.data.databaseUrl).then((store) => {
        const worker = new ImportWorker(store, {
          snapshotRetentionMs: m.data.snapshotRetentionMs,
          tombstoneRetentionMs: m.data.tombstoneRetentionMs,
          eventRetentionMs: m.data.eventRetentionMs,
          auditRetentionMs: m.data.auditRetentionMs,
          uploadRetentionMs: m.data.uploadRetentionMs,
          makeSegments: true,
          packUploads: true,
          prepareUploads: true,
          events: {
            started: (job) => {
              claimed = true;
              post({ type: 'started', importId: job.id });
            },
            preparing: (importId) => post({ type: 'preparing', importId }),
            // One import per process: exiting now returns everything it allocated. The next
            // process makes the published snapshot's gzip segments, when no import is waiting.
            // stopClaiming at once: the loop must not claim more work before `stop` reaches it.
            finished: (job, report, prepared) => {
              post({ type: 'finished', importId: job.id, report, prepared });
              worker.stopClaiming();
              void stop();
            },
            // One segment pass per process too: it reads and compresses hundreds of MB.
            segmented: (snapshotId, stats) => {
              post({ type: 'segmented', snapshotId, chunks: stats.chunks, ms: stats.ms });
              worker.stopClaiming();
              void stop();
            },
            // And one packed upload: it reads and compresses up to the largest upload's size.
            packed: (upload) => {
              post({ type: 'packed', importId: upload.importId, plainBytes: upload.plainBytes, packedBytes: upload.packedBytes });
              worker.stopClaiming();
              void stop();
            },
            error: (err) => {
              post({ type: 'error', message: String((err as Error)?.message ?? err) });
              if (claimed) void stop();
            },
          },
        });
        worker.start();
        return { store, worker };
      });
      running.catch((err: unknown) => {
        post({ type: 'error', message: String((err as Error)?.message ?? err) });
        process.exit(1);
      });
    } else if (m.type === 'wake') void running?.then((r) => r.worker.wake());
    else if (m.type === 'prepare') void running?.then((r) => r.worker.prepare(m.importId, m.declaredBytes));
    // An import in hand completes; a segment pass stops between two batches and is given back; a
    // preparation is aborted and what it wrote discarded.
    else if (m.type === 'stop') void stop();
  });
  // The parent is gone (killed): complete the import in hand, as a graceful stop would, then end.
  process.on('disconnect', () => void stop());
}

if (process.argv[1] === CHILD_MODULE && process.send) childMain();
