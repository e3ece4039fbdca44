/**
 * Bulk loads through `COPY … FROM STDIN (FORMAT binary)`, and bulk reads of
 * bytes through `COPY (query) TO STDOUT (FORMAT binary)` (pg-copy-streams).
 * The binary format needs no escaping — any text and any bytes go through
 * unchanged — and is cheaper for the server to parse than CSV or text. On
 * the way out it spares BYTEA the hex text that a plain query's rows carry
 * (node-pg reads results as text only): the server's encoding, twice the
 * bytes on the wire and the client's decoding.
 * Layout: https://www.postgresql.org/docs/current/sql-copy.html (Binary Format).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import copyStreams from 'pg-copy-streams';
import { toStoreError, type Conn, type Db } from './postgres-connection.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

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

/**
 * Runs `COPY (query) TO STDOUT (FORMAT binary)` on `conn` and returns its
 * rows, each field's raw bytes (or null). The whole result is held in memory:
 * for queries of a bounded size (one upload blob), not for whole tables.
 */
export async function copyOutRows(conn: Conn, query: string): Promise<(Buffer | null)[][]> {
  const stream = conn.client.query(copyStreams.to(`COPY (${query}) TO STDOUT (FORMAT binary)`));
  const parts: Buffer[] = [];
  try {
    for await (const part of stream) parts.push(part as Buffer);
  } catch (err) {
    throw toStoreError(err);
  }
  return decodeCopyRows(Buffer.concat(parts));
}

/**
 * Rows of a read-path query by binary COPY, on a connection of the pool's:
 * node-pg reads a BYTEA as hex text and then decodes it, which for a 64 KiB
 * chunk cost ~0.9 ms of the client's CPU and 1.6 ms in all; by COPY, 0.1 and
 * 0.15 ms (measured on one machine, 2,000 reads of a 64 KiB value). COPY takes
 * no parameters: callers write numbers with `sqlInt` and names they checked.
 */
export function copyOut(db: Db, query: string): Promise<CopyRow[]> {
  return db.session((c) => copyOutRows(c, query));
}

export type CopyRow = (Buffer | null)[];

/** `n` as SQL, refusing anything but a safe integer (COPY's query is text, not parameters). */
export function sqlInt(n: number): string {
  if (!Number.isSafeInteger(n)) throw new TypeError(`not an integer: ${n}`);
  return String(n);
}

/** An int4 field of a binary COPY row. */
export const int4 = (field: Buffer | null): number => field!.readInt32BE(0);
/** An int8 field (below 2^53) of a binary COPY row. */
export const int8 = (field: Buffer | null): number => Number(field!.readBigInt64BE(0));

/**
 * A field's bytes in memory of their own: a field is a view of the whole
 * result, and a cached chunk must not keep its neighbours' bytes alive.
 */
export function ownBytes(field: Buffer | null): Buffer {
  const out = Buffer.allocUnsafeSlow(field!.length);
  field!.copy(out);
  return out;
}

/** The rows of a complete binary COPY stream (header, tuples, trailer). */
export function decodeCopyRows(data: Buffer): (Buffer | null)[][] {
  if (data.length < SIGNATURE.length + 8 || !data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) {
    throw new Error('COPY TO: not a binary COPY stream');
  }
  let at = SIGNATURE.length + 4; // and the flags
  at += 4 + data.readUInt32BE(at); // the header extension, skipped
  const rows: (Buffer | null)[][] = [];
  for (;;) {
    const fields = data.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    const row: (Buffer | null)[] = new Array(fields);
    for (let i = 0; i < fields; i++) {
      const n = data.readInt32BE(at);
      at += 4;
      if (n === -1) row[i] = null;
      else {
        if (at + n > data.length) throw new Error('COPY TO: a field runs past the end of the stream');
        row[i] = data.subarray(at, at + n);
        at += n;
      }
    }
    rows.push(row);
  }
  return rows;
}
