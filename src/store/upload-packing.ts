/**
 * Stored uploads, packed once their import has ended. An upload is stored
 * plain while it may still be applied (1 MiB blobs in `import_blobs`, which
 * PostgreSQL's TOAST compresses with lz4, about 1.9x on an ERP export), and
 * is kept UPLOAD_RETENTION_DAYS after its import ends for "import this file
 * again". For that time it is recompressed with brotli into
 * `import_packed_blobs`, and the import's `file_encoding` says so: both are
 * written, and the plain blobs deleted, in one transaction, so a reader finds
 * the whole upload one way or the other.
 *
 * Measured on the bench's 100,000-customer file (71.5 MiB, 1 MiB pieces;
 * zlib's synchronous calls over the pieces, CPU of one core by
 * process.cpuUsage, load ~2.6):
 *
 * | codec          | ratio | compress | inflate |
 * |----------------|-------|----------|---------|
 * | deflate 1      | 2.74  | 1.0 s    | 0.32 s  |
 * | deflate 6      | 3.29  | 2.0 s    | 0.22 s  |
 * | deflate 9      | 3.32  | 5.3 s    | 0.25 s  |
 * | brotli 1       | 3.53  | 0.5 s    | 0.32 s  |
 * | brotli 4       | 4.60  | 1.7-1.9 s| 0.17 s  |
 * | brotli 5       | 4.89  | 2.7 s    | 0.23 s  |
 * | brotli 9       | 5.32  | 8.9 s    | 0.20 s  |
 *
 * Brotli 4 packs better than any deflate level for less CPU than deflate 6;
 * in 4 MiB pieces instead of 1 MiB it reaches 4.90x for the same CPU.
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';

/** `imports.file_encoding` of a packed upload (NULL: plain, in `import_blobs`). */
export const PACKED_ENCODING = 'br';
/** Plain bytes packed into one blob of `import_packed_blobs` (a whole number of plain blobs, at least this many bytes). */
export const PACK_BYTES = 4 * 1024 * 1024;
/** Brotli's quality: see the table above. */
const QUALITY = 4;

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/** Inflates one packed blob (in libuv's thread pool: the event loop stays free). */
export function unpackBlob(packed: Buffer): Promise<Buffer> {
  return decompress(packed);
}

/**
 * One packed blob of `plain`, or null when it does not inflate back to the
 * same bytes: an upload is only ever replaced by a copy proven equal.
 */
async function packBlob(plain: Buffer): Promise<Buffer | null> {
  const packed = await compress(plain, {
    params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: plain.length },
  });
  return (await unpackBlob(packed)).equals(plain) ? packed : null;
}

/** What packing one upload did (Store.packUpload). */
export interface PackedUpload {
  importId: number;
  /**
   * False when the upload was left as it was: another process packed or
   * removed it meanwhile, or (never seen) it did not read back the same.
   */
  packed: boolean;
  plainBytes: number;
  packedBytes: number;
}

/**
 * Packs the plain blobs `plainBlob(0)`, `plainBlob(1)`… (up to the first
 * missing one, as a reader stops there), handing each packed blob to
 * `write` in order. Null when a piece did not read back the same: nothing
 * must then be committed.
 */
export async function packBlobs(
  plainBlob: (seq: number) => Promise<Buffer | undefined> | Buffer | undefined,
  write: (seq: number, packed: Buffer) => Promise<void> | void,
): Promise<{ plainBytes: number; packedBytes: number } | null> {
  let plainBytes = 0;
  let packedBytes = 0;
  let packedSeq = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async (): Promise<boolean> => {
    if (pending.length === 0) return true;
    const packed = await packBlob(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes));
    if (!packed) return false;
    await write(packedSeq++, packed);
    packedBytes += packed.length;
    pending = [];
    pendingBytes = 0;
    return true;
  };
  for (let seq = 0; ; seq++) {
    const plain = await plainBlob(seq);
    if (!plain) break;
    plainBytes += plain.length;
    pending.push(plain);
    pendingBytes += plain.length;
    if (pendingBytes >= PACK_BYTES && !(await flush())) return null;
  }
  if (!(await flush())) return null;
  return { plainBytes, packedBytes };
}

/** How an adapter reads one stored upload's parts. */
export interface UploadBlobs {
  /** The import's `file_encoding`: null while it is plain (or when it is unknown). */
  encoding(): Promise<string | null>;
  plain(seq: number): Promise<Buffer | undefined>;
  packed(seq: number): Promise<Buffer | undefined>;
}

/**
 * A stored upload's plain bytes, whichever way it is stored. An upload packed
 * while it is being read (only an ended one is: the panel's mapping page
 * reading the header of a failed import) has lost its plain blobs at once,
 * in the packing's one transaction: the read goes on from the packed copy,
 * past the bytes it already gave.
 */
export async function* readUpload(blobs: UploadBlobs): AsyncGenerator<Buffer> {
  let encoding = await blobs.encoding();
  let given = 0;
  if (encoding === null) {
    // One blob read ahead: the next one's round trip to the store overlaps the
    // work on this one (72 sequential reads of 1 MiB were ~0.5 s of waiting on
    // PostgreSQL for the 100,000-customer file).
    let next = ahead(blobs.plain(0));
    for (let seq = 0; ; seq++) {
      const plain = await next;
      if (plain) {
        next = ahead(blobs.plain(seq + 1));
        given += plain.length;
        yield plain;
        continue;
      }
      encoding = await blobs.encoding();
      if (encoding === null) return;
      break;
    }
  }
  if (encoding !== PACKED_ENCODING) {
    throw new Error(`This stored upload is encoded "${encoding}", which this release cannot read: it was stored by a newer one.`);
  }
  let skip = given;
  for (let seq = 0; ; seq++) {
    const packed = await blobs.packed(seq);
    if (!packed) return;
    const plain = await unpackBlob(packed);
    if (skip >= plain.length) {
      skip -= plain.length;
      continue;
    }
    yield skip > 0 ? plain.subarray(skip) : plain;
    skip = 0;
  }
}

/** `read`, marked as handled: a read ahead that the consumer never takes (it stopped early) must not fail the process. */
function ahead<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}
