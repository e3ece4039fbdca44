/**
 * Runs the parsing half of an import (upload-rows.ts) in a worker thread, so
 * that parsing and rendering on one core overlap with hashing and writing
 * the snapshot on another (or, with `hashHere`, parsing, rendering and
 * hashing with writing, when the writer is the slower). The importing thread streams the upload's bytes
 * in (transferred, not copied) and receives rendered batches back (their
 * bytes transferred too), with backpressure both ways: memory holds a few
 * chunks and a few batches, whatever the file's size.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { HashAlgorithm } from '../domain/item-renderer.js';
import type { TextEncoding } from './decode-text.js';
import { hashBatch } from '../snapshots/write-records.js';
import { ImportError, type ImportErrorCode } from './import-error.js';
import { openUploadRows, type UploadBatch, type UploadHead, type UploadOptions, type UploadRowSource } from './upload-rows.js';

/** Rendered batches the thread may run ahead of the writer. */
const BATCHES_AHEAD = 4;
/** Upload chunks (1 MiB each in the stores) queued in the thread. */
const CHUNKS_AHEAD = 2;

/**
 * The thread's old generation, in MiB. What it keeps alive is a few rows and
 * its parser's state; unbounded, V8 let garbage pile up to 100 MB and more
 * before collecting it, which pushed a 1 GiB import past its memory budget.
 * Rows of many cells near the 1 MiB limit (maxCellBytes) would not fit.
 */
const OLD_GENERATION_MB = 128;

type ToThread = { t: 'bytes'; b: Uint8Array } | { t: 'end' } | { t: 'ack' };
type SerializedError = { code?: ImportErrorCode; line?: number; message: string; stack?: string };
type FromThread =
  | { t: 'pull' }
  | { t: 'head'; head: UploadHead }
  | { t: 'batch'; batch: UploadBatch }
  | { t: 'done'; encoding: TextEncoding }
  | { t: 'error'; error: SerializedError; encoding: TextEncoding | null };

interface ThreadData {
  uploadRows: true;
  options: UploadOptions;
  hashHere: HashAlgorithm | null;
}

/** How the thread runs; both are chosen by what bounds an import on each store (apply-import.ts). */
export interface ThreadOptions {
  /**
   * Bounds the thread's young generation (V8's default lets it grow to tens
   * of MB): smaller saves memory but costs parsing time in more scavenges.
   */
  youngGenerationMb?: number;
  /**
   * Hash each batch's bodies in the thread (`hashBatch`), with this
   * algorithm, rather than leave it to the writer (`stageBatch`): for when
   * the writer is the slower of the two. The hashes are the same.
   */
  hashHere?: HashAlgorithm;
}

/** Opens an upload and renders it in a new worker thread. */
export async function openUploadRowsInThread(
  source: AsyncIterable<Buffer>,
  options: UploadOptions,
  { youngGenerationMb, hashHere }: ThreadOptions = {},
): Promise<UploadRowSource> {
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { uploadRows: true, options, hashHere: hashHere ?? null } satisfies ThreadData,
    resourceLimits: { maxOldGenerationSizeMb: OLD_GENERATION_MB, ...(youngGenerationMb ? { maxYoungGenerationSizeMb: youngGenerationMb } : {}) },
  });
  const bytes = source[Symbol.asyncIterator]();
  let pulling = Promise.resolve();
  const batches: UploadBatch[] = [];
  let finished: TextEncoding | null = null;
  let encoding: TextEncoding | null = null;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  let head: UploadHead | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  const send = (m: ToThread, transfer: ArrayBuffer[] = []) => worker.postMessage(m, transfer);

  worker.on('message', (m: FromThread) => {
    switch (m.t) {
      case 'pull':
        // One chunk per pull, in order.
        pulling = pulling.then(async () => {
          const next = await bytes.next();
          if (next.done) return send({ t: 'end' });
          const b = ownBuffer(next.value);
          send({ t: 'bytes', b }, [b.buffer as ArrayBuffer]);
        }).catch((err: unknown) => {
          failure ??= err as Error;
          notify();
        });
        break;
      case 'head':
        head = m.head;
        break;
      case 'batch':
        batches.push(m.batch);
        break;
      case 'done':
        finished = m.encoding;
        break;
      case 'error':
        failure ??= revive(m.error);
        encoding = m.encoding;
        break;
    }
    notify();
  });
  worker.on('error', (err) => {
    failure ??= err;
    notify();
  });
  worker.on('exit', (code) => {
    if (finished === null) failure ??= new Error(`The CSV thread stopped (exit code ${code}).`);
    notify();
  });
  const close = async () => {
    await worker.terminate();
    await bytes.return?.();
  };

  const waitFor = async (ready: () => boolean) => {
    while (!ready() && failure === null) await new Promise<void>((resolve) => (wake = resolve));
    if (!ready() && failure !== null) {
      await close();
      throw failure;
    }
  };
  await waitFor(() => head !== null);
  return {
    head: head!,
    encoding: () => finished ?? encoding ?? head!.encoding,
    close,
    async *batches() {
      try {
        for (;;) {
          await waitFor(() => batches.length > 0 || finished !== null);
          const batch = batches.shift();
          if (!batch) return;
          send({ t: 'ack' });
          yield batch;
        }
      } finally {
        if (finished === null) await close();
      }
    },
  };
}

/** A Buffer that owns its whole ArrayBuffer, so it can be transferred. */
function ownBuffer(b: Buffer): Uint8Array {
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : new Uint8Array(b);
}

function revive(e: SerializedError): Error {
  if (e.code) return new ImportError(e.code, e.message, e.line);
  const err = new Error(e.message);
  if (e.stack) err.stack = e.stack;
  return err;
}

// --- The thread ----------------------------------------------------------------------------------

async function threadMain(data: ThreadData) {
  const port = parentPort!;
  const post = (m: FromThread, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  const chunks: Uint8Array[] = [];
  let ended = false;
  let acked = 0;
  let sent = 0;
  let wake: (() => void) | null = null;
  port.on('message', (m: ToThread) => {
    if (m.t === 'bytes') chunks.push(m.b);
    else if (m.t === 'end') ended = true;
    else acked++;
    wake?.();
    wake = null;
  });
  const until = async (ready: () => boolean) => {
    while (!ready()) await new Promise<void>((resolve) => (wake = resolve));
  };
  async function* input(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < CHUNKS_AHEAD; i++) post({ t: 'pull' });
    for (;;) {
      await until(() => chunks.length > 0 || ended);
      const chunk = chunks.shift();
      if (!chunk) return;
      post({ t: 'pull' });
      yield chunk;
    }
  }
  let rows: UploadRowSource | null = null;
  try {
    rows = await openUploadRows(input(), data.options);
    post({ t: 'head', head: rows.head });
    for await (const batch of rows.batches()) {
      if (data.hashHere) batch.hashes = hashBatch(batch, data.hashHere);
      await until(() => sent - acked < BATCHES_AHEAD);
      sent++;
      const transfer = [batch.bytes.buffer, batch.ends.buffer, batch.lines.buffer, ...(batch.hashes ? [batch.hashes.buffer] : [])];
      post({ t: 'batch', batch }, transfer as ArrayBuffer[]);
    }
    post({ t: 'done', encoding: rows.encoding() });
  } catch (err) {
    const e = err as Error & { code?: ImportErrorCode; line?: number };
    const error = err instanceof ImportError ? { code: e.code, line: e.line, message: e.message } : { message: e.message, stack: e.stack };
    post({ t: 'error', error, encoding: rows?.encoding() ?? null });
  }
  port.close();
}

if (!isMainThread && (workerData as Partial<ThreadData> | undefined)?.uploadRows) {
  // Started from `serve`'s import process, this thread inherits its lower priority (import-process.ts).
  void threadMain(workerData as ThreadData);
}
