/**
 * A gzip body assembled from precompressed pieces (issue 4): a list page is
 * the envelope, chunk slices joined by commas and `]}`; every whole chunk
 * goes out as its segment (see ChunkSegment; made once after publication,
 * see snapshot-reader.ts's readBodyParts for which chunks), and only the
 * rest — the envelope, the partial chunks at the page's edges — is
 * compressed now. A first gzip download then costs about what a plain one
 * does, instead of deflating every byte of every page.
 *
 * Why the pieces fit together: each segment and each piece compressed here is
 * a raw deflate stream of its own, ended with a sync flush (byte-aligned, no
 * final block), and a deflate stream is just a sequence of blocks, so they
 * concatenate; none refers back before its own start. The last piece ends
 * the stream with a final block. The gzip trailer's CRC-32 combines the
 * stored segments' CRCs with those of the pieces compressed here.
 */
import { constants, crc32, createDeflateRaw } from 'node:zlib';
import type { ChunkSegment } from '../../store/store.js';
import { crc32Combine } from './crc32-combine.js';
import { throughZlib } from './zlib-pieces.js';

/** One piece of a body, in order: bytes to compress now, or a chunk's stored segment. */
export type BodyPart = { raw: Buffer } | { segment: ChunkSegment };

/** Magic, deflate, no flags, no time, no extra flags, OS unknown (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);
/** An empty final block (fixed Huffman, just the end-of-block code), for a body that ends with a segment. */
const EMPTY_FINAL_BLOCK = Buffer.from([0x03, 0x00]);
/**
 * Runs of fewer bytes than this (the commas between segments, the closing
 * `]}`) are written as stored blocks by hand: a zlib stream for 1 byte costs
 * far more than the 5 bytes of a stored block's header.
 */
const STORE_BELOW_BYTES = 256;
/** Output buffers of 64 KiB: an edge of up to two chunks comes out in one or two pieces. */
const OUT_CHUNK_BYTES = 64 * 1024;

/**
 * The gzip body of `parts`: gunzips to the parts' bytes in order.
 *
 * @example
 * const body = await assembleGzip([{ raw: head }, { segment }, { raw: close }]);
 */
export async function assembleGzip(parts: readonly BodyPart[]): Promise<Buffer> {
  const pieces: (Buffer | Promise<Buffer>)[] = [GZIP_HEADER];
  let crc = 0;
  let size = 0;
  let run: Buffer[] = [];
  let runBytes = 0;
  const endRun = (final: boolean) => {
    if (runBytes > 0 || final) pieces.push(deflateRun(run, runBytes, final));
    run = [];
    runBytes = 0;
  };
  for (const part of parts) {
    if ('raw' in part) {
      if (part.raw.length === 0) continue;
      run.push(part.raw);
      runBytes += part.raw.length;
      crc = crc32(part.raw, crc);
      size += part.raw.length;
    } else {
      endRun(false);
      pieces.push(part.segment.deflate);
      crc = crc32Combine(crc, part.segment.crc32, part.segment.rawLength);
      size += part.segment.rawLength;
    }
  }
  if (runBytes > 0) endRun(true);
  else pieces.push(EMPTY_FINAL_BLOCK);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  // ISIZE is the length modulo 2^32 (RFC 1952).
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  pieces.push(trailer);
  // The runs compress concurrently on the thread pool.
  const out = await Promise.all(pieces);
  return Buffer.concat(out);
}

/** A run of raw bytes as deflate blocks: sync-flushed, or ending the stream when `final`. */
function deflateRun(run: readonly Buffer[], bytes: number, final: boolean): Buffer | Promise<Buffer> {
  if (bytes < STORE_BELOW_BYTES) return storedBlock(run, bytes, final);
  const z = createDeflateRaw({
    level: 6,
    chunkSize: OUT_CHUNK_BYTES,
    // Ending the stream with a sync flush leaves it byte-aligned and open for what follows.
    finishFlush: final ? constants.Z_FINISH : constants.Z_SYNC_FLUSH,
  });
  return throughZlib(z, run);
}

/** One stored (uncompressed) block holding `bytes` (< 65,536) bytes (RFC 1951 §3.2.4). */
function storedBlock(run: readonly Buffer[], bytes: number, final: boolean): Buffer {
  const block = Buffer.allocUnsafe(5 + bytes);
  // BFINAL, BTYPE 00, then padding to the byte boundary: all in the first byte.
  block[0] = final ? 1 : 0;
  block.writeUInt16LE(bytes, 1);
  block.writeUInt16LE(~bytes & 0xffff, 3);
  let at = 5;
  for (const b of run) at += b.copy(block, at);
  return block;
}
