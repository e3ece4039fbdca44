/**
 * Gzip-compressed uploads (contract §2): `.csv.gz` files to the CLI and the
 * panel, `Content-Encoding: gzip` on the upload-token API. The upload is
 * decompressed as it streams in and stored decompressed, so everything that
 * reads a stored upload later (the worker, a re-apply, recovery after a
 * restart, PostgreSQL's prepared imports) sees the plain CSV it always saw,
 * and the store's `maxBytes` bound applies to the decompressed bytes: a gzip
 * bomb is cut off after MAX_UPLOAD_BYTES of output, whatever its input size,
 * with at most one zlib buffer in memory.
 */
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** A compressed upload that does not decompress: nothing is stored. */
export class CorruptUploadError extends Error {}

/** How a gzip member starts (RFC 1952): no CSV header starts with these control bytes. */
const GZIP_MAGIC = [0x1f, 0x8b];

/** Whether a file name says gzip (`clientes.csv.gz`). */
export function isGzipName(name: string): boolean {
  return /\.gz$/i.test(name);
}

/**
 * The upload as plain bytes. `compressed` says the sender declared gzip (by
 * name or header); undeclared bodies are still sniffed for the gzip magic,
 * so `curl -T export.csv.gz` without the header is read right, not as a
 * Windows-1252 garble. Throws CorruptUploadError where it does not inflate.
 */
export async function* plainUpload(body: AsyncIterable<Buffer>, compressed: boolean): AsyncGenerator<Buffer> {
  const source = body[Symbol.asyncIterator]();
  let finished = false;
  try {
    yield* readPlain(source, compressed);
    finished = true;
  } finally {
    // Stopped early (the size limit, a corrupt body): stop the source as a for-await over it would.
    if (!finished) await source.return?.();
  }
}

async function* readPlain(source: AsyncIterator<Buffer>, compressed: boolean): AsyncGenerator<Buffer> {
  let first = await source.next();
  while (!first.done && first.value.length < GZIP_MAGIC.length && !compressed) {
    // Too short to tell: join it with the next piece (a body split after its first byte).
    const next = await source.next();
    if (next.done) break;
    first = { done: false, value: Buffer.concat([first.value, next.value]) };
  }
  const rest: AsyncIterable<Buffer> = { [Symbol.asyncIterator]: () => source };
  const head = first.done ? null : first.value;
  const isGzip = compressed || (head !== null && head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]);
  if (!isGzip) {
    if (head) yield head;
    yield* rest;
    return;
  }
  if (head === null) throw new CorruptUploadError('The upload is empty, not a gzip file.');
  yield* gunzip(prepend(head, rest));
}

async function* prepend(head: Buffer, rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield head;
  yield* rest;
}

async function* gunzip(compressed: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const input = Readable.from(compressed, { objectMode: false });
  const inflate = createGunzip();
  // A failing source (a client that hung up) ends the inflation with its own error.
  input.once('error', (err) => inflate.destroy(err));
  input.pipe(inflate);
  try {
    for await (const piece of inflate) yield piece as Buffer;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('Z_')) {
      throw new CorruptUploadError(`The upload is not a valid gzip file (${(err as Error).message}): nothing was stored.`);
    }
    throw err;
  } finally {
    // Stopped early (over the size limit, or failed): stop reading the source too.
    input.unpipe(inflate);
    inflate.destroy();
    input.destroy();
  }
}

/**
 * The decompressed size a gzip file announces in its last 4 bytes (ISIZE, modulo 2^32), for a
 * progress bar's total: an estimate only, never a limit (a file can lie, or hold several members).
 */
export function announcedSize(trailer: Buffer): number | null {
  return trailer.length >= 4 ? trailer.readUInt32LE(trailer.length - 4) : null;
}
