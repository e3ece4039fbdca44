/**
 * A body given as pieces, written one by one into a zlib stream (which runs on
 * the thread pool): a list page of several MB is never joined into one Buffer
 * first; that copy, and the garbage collections its external memory
 * triggered, made a first gzip download ~15% slower.
 */
import type { Transform } from 'node:stream';

/**
 * Everything `z` puts out for `pieces`, in one Buffer.
 *
 * @example
 * const gz = await throughZlib(createGzip({ level: 6 }), [head, ...items, tail]);
 */
export function throughZlib(z: Transform, pieces: readonly Buffer[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    let outLength = 0;
    z.on('data', (b: Buffer) => {
      out.push(b);
      outLength += b.length;
    });
    z.once('error', reject);
    // Always copied out: the pieces are views of zlib's output buffers, and a cached 1 KB
    // body must not keep a whole buffer alive.
    z.once('end', () => resolve(Buffer.concat(out, outLength)));
    for (const p of pieces) if (p.length > 0) z.write(p);
    z.end();
  });
}
