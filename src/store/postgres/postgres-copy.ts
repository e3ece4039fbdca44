/**
 * Bulk loads through `COPY … FROM STDIN (FORMAT binary)` (pg-copy-streams).
 * The binary format needs no escaping — any text and any bytes go through
 * unchanged — and is cheaper for the server to parse than CSV or text. The
 * way out is postgres-copy-out.ts.
 * Layout: https://www.postgresql.org/docs/current/sql-copy.html (Binary Format).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import copyStreams from 'pg-copy-streams';
import { toStoreError, type Conn } from './postgres-connection.js';

export const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** Encodes rows in the binary COPY format into a growing buffer, taken in pieces. */
export class CopyEncoder {
  private buf: Buffer;
  private len = 0;

  constructor(initialBytes = 256 * 1024) {
    this.buf = Buffer.allocUnsafe(initialBytes);
    this.ensure(SIGNATURE.length + 8);
    SIGNATURE.copy(this.buf, 0);
    this.len = SIGNATURE.length;
    this.buf.writeInt32BE(0, this.len); // flags
    this.buf.writeInt32BE(0, this.len + 4); // header extension length
    this.len += 8;
  }

  /** Starts a row of `fields` values; each value follows with one call below. */
  row(fields: number): this {
    this.ensure(2);
    this.len = this.buf.writeInt16BE(fields, this.len);
    return this;
  }

  int4(n: number): this {
    this.ensure(8);
    this.len = this.buf.writeInt32BE(4, this.len);
    this.len = this.buf.writeInt32BE(n, this.len);
    return this;
  }

  int8(n: number): this {
    this.ensure(12);
    this.len = this.buf.writeInt32BE(8, this.len);
    this.len = this.buf.writeBigInt64BE(BigInt(n), this.len);
    return this;
  }

  bytes(b: Uint8Array): this {
    this.ensure(4 + b.length);
    this.len = this.buf.writeInt32BE(b.length, this.len);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** The length of a bytes value whose `n` bytes the caller sends next, as a piece of its own. */
  bytesFollow(n: number): this {
    this.ensure(4);
    this.len = this.buf.writeInt32BE(n, this.len);
    return this;
  }

  /** UTF-8 text (PostgreSQL refuses NUL in text; the CSV reader refuses it first). */
  text(s: string): this {
    const n = Buffer.byteLength(s, 'utf8');
    this.ensure(4 + n);
    this.len = this.buf.writeInt32BE(n, this.len);
    this.len += this.buf.write(s, this.len, 'utf8');
    return this;
  }

  get size(): number {
    return this.len;
  }

  /** The bytes encoded since the last take; `end` appends the trailer. */
  take(end = false): Buffer {
    if (end) {
      this.ensure(2);
      this.len = this.buf.writeInt16BE(-1, this.len);
    }
    const out = Buffer.from(this.buf.subarray(0, this.len));
    this.len = 0;
    return out;
  }

  private ensure(extra: number) {
    if (this.len + extra <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + extra));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }
}

/**
 * Streams `data` (binary COPY bytes, header first, trailer last) into `COPY
 * table (columns) FROM STDIN` on `conn`, with backpressure. When `data`
 * throws, the COPY is aborted and the error rethrown as is.
 */
export async function copyIn(
  conn: Conn,
  table: string,
  columns: readonly string[],
  data: AsyncIterable<Buffer> | Iterable<Buffer>,
): Promise<number> {
  const stream = conn.client.query(copyStreams.from(`COPY ${table} (${columns.join(', ')}) FROM STDIN (FORMAT binary)`));
  try {
    await pipeline(Readable.from(data, { objectMode: false }), stream);
  } catch (err) {
    throw toStoreError(err);
  }
  return stream.rowCount;
}
