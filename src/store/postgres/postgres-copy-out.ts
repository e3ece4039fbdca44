/**
 * Reads by `COPY (query) TO STDOUT (FORMAT binary)`: the read path's chunks,
 * thin chunks, segments, indexes and batched items, and stored upload blobs.
 * node-pg reads a plain query's BYTEA as hex text and then decodes it, which
 * for a 64 KiB chunk cost ~0.9 ms of the client's CPU and 1.6 ms in all; by
 * COPY, 0.1 and 0.15 ms (2,000 reads of a 64 KiB value, one machine), and a
 * 72 MB upload blob 0.15 s where it was 0.6 s.
 *
 * The COPY runs as a query object of node-pg's own (a "submittable"): the
 * driver parses the protocol's messages and hands this module the CopyData
 * ones, whose rows are decoded as they arrive, each field copied once into
 * memory of its own (a cached chunk keeps nothing else alive). pg-copy-streams'
 * reader, used before, parsed the socket's bytes a second time and allocated
 * a zero-filled buffer for every piece: 15% of a server's time when most of
 * its reads missed the cache.
 *
 * COPY takes no parameters: queries are written with `sqlInt` for numbers
 * and with names their callers checked.
 * Layout: https://www.postgresql.org/docs/current/sql-copy.html (Binary Format).
 */
import { QUERY_TIMEOUT_MS, toStoreError, type Conn, type Db } from './postgres-connection.js';
import { SIGNATURE } from './postgres-copy.js';

/** A row's fields, each its raw bytes in memory of its own, or null. */
export type CopyRow = (Buffer | null)[];

/** The rows of `query`, on a connection of the pool's. */
export async function copyOut(db: Db, query: string): Promise<CopyRow[]> {
  return db.submit<CopyRow[]>(new CopyOutQuery(query));
}

/** The rows of `query`, on `conn` (in a session or a transaction). */
export async function copyOutRows(conn: Conn, query: string): Promise<CopyRow[]> {
  const q = new CopyOutQuery(query);
  const rows = new Promise<CopyRow[]>((resolve, reject) => {
    q.callback = (err, result) => (err ? reject(toStoreError(err)) : resolve(result!));
  });
  conn.client.query(q as never);
  return rows;
}

/** `n` as SQL, refusing anything but a safe integer (COPY's query is text, not parameters). */
export function sqlInt(n: number): string {
  if (!Number.isSafeInteger(n)) throw new TypeError(`not an integer: ${n}`);
  return String(n);
}

/** An int4 field of a row. */
export const int4 = (field: Buffer | null): number => field!.readInt32BE(0);
/** An int8 field (below 2^53) of a row. */
export const int8 = (field: Buffer | null): number => Number(field!.readBigInt64BE(0));

/** The 11-byte signature, the flags and the header extension's length. */
const HEADER_BYTES = SIGNATURE.length + 8;

/**
 * Decodes a binary COPY stream given in pieces cut anywhere (node-pg's
 * CopyData messages): `push` each piece, then `end` for the rows. A stream
 * that is not binary COPY, or that ends inside a row, is refused.
 */
export class CopyRowReader {
  readonly rows: CopyRow[] = [];
  /** What the next fixed-size part is: the header, a header extension to skip, a row's field count, a field's length. */
  private state: 'header' | 'extension' | 'count' | 'length' | 'done' = 'header';
  private readonly scratch = Buffer.alloc(HEADER_BYTES);
  private need = HEADER_BYTES;
  private have = 0;
  private row: CopyRow = [];
  private fieldsLeft = 0;
  /** The field being copied, and how much of it has come. */
  private field: Buffer | null = null;
  private fieldAt = 0;

  push(data: Buffer): void {
    let at = 0;
    while (at < data.length) {
      if (this.state === 'done') throw new Error('COPY TO: bytes after the end of the stream');
      if (this.field) {
        const n = Math.min(this.field.length - this.fieldAt, data.length - at);
        data.copy(this.field, this.fieldAt, at, at + n);
        this.fieldAt += n;
        at += n;
        if (this.fieldAt === this.field.length) {
          const field = this.field;
          this.field = null;
          this.addField(field);
        }
        continue;
      }
      if (this.state === 'extension') {
        // Skipped, whatever its length (the server sends none).
        const n = Math.min(this.need - this.have, data.length - at);
        this.have += n;
        at += n;
        if (this.have === this.need) this.expect('count', 2);
        continue;
      }
      const n = Math.min(this.need - this.have, data.length - at);
      data.copy(this.scratch, this.have, at, at + n);
      this.have += n;
      at += n;
      if (this.have === this.need) this.fixedPart();
    }
  }

  /** The rows, once the whole stream has come. */
  end(): CopyRow[] {
    if (this.state !== 'done') throw new Error('COPY TO: the stream ended inside a row (or was empty)');
    return this.rows;
  }

  private fixedPart() {
    const s = this.scratch;
    if (this.state === 'header') {
      if (!s.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('COPY TO: not a binary COPY stream');
      const extension = s.readUInt32BE(SIGNATURE.length + 4);
      if (extension > 0) this.expect('extension', extension);
      else this.expect('count', 2);
    } else if (this.state === 'count') {
      const fields = s.readInt16BE(0);
      if (fields === -1) return void (this.state = 'done');
      if (fields < 0) throw new Error(`COPY TO: a row of ${fields} fields`);
      this.row = [];
      this.fieldsLeft = fields;
      if (fields === 0) this.endRow();
      else this.expect('length', 4);
    } else {
      const n = s.readInt32BE(0);
      if (n === -1) this.addField(null);
      else if (n < 0) throw new Error(`COPY TO: a field of ${n} bytes`);
      else if (n === 0) this.addField(Buffer.alloc(0));
      else {
        this.field = Buffer.allocUnsafeSlow(n);
        this.fieldAt = 0;
      }
    }
  }

  private addField(field: Buffer | null) {
    this.row.push(field);
    if (--this.fieldsLeft === 0) this.endRow();
    else this.expect('length', 4);
  }

  private endRow() {
    this.rows.push(this.row);
    this.expect('count', 2);
  }

  private expect(state: 'extension' | 'count' | 'length', bytes: number) {
    this.state = state;
    this.need = bytes;
    this.have = 0;
  }
}

/**
 * `COPY (query) TO STDOUT (FORMAT binary)` as node-pg runs its own queries:
 * it calls `submit`, then the handlers below as the server's messages come,
 * and `callback` is set by the pool (or by `copyOutRows`).
 */
class CopyOutQuery {
  callback?: (err: Error | null, rows?: CopyRow[]) => void;
  readonly text: string;
  private readonly reader = new CopyRowReader();
  private failure: Error | null = null;
  private ended = false;

  constructor(
    query: string,
    /** Read by node-pg, as for its own queries: a server that stops answering fails the query. */
    readonly query_timeout = QUERY_TIMEOUT_MS,
  ) {
    this.text = `COPY (${query}) TO STDOUT (FORMAT binary)`;
  }

  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    if (this.failure) return;
    // A view of the driver's read buffer, valid only now: the reader copies what it keeps.
    try {
      this.reader.push(msg.chunk);
    } catch (err) {
      // Reported once the server is done with the statement, so that the connection stays in step.
      this.failure = err as Error;
    }
  }

  handleError(err: Error): void {
    this.end(err);
  }

  handleReadyForQuery(): void {
    if (this.failure) return this.end(this.failure);
    let rows: CopyRow[];
    try {
      rows = this.reader.end();
    } catch (err) {
      return this.end(err as Error);
    }
    this.end(null, rows);
  }

  // Messages a COPY does not send, or that need nothing here.
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}

  private end(err: Error | null, rows?: CopyRow[]) {
    if (this.ended) return;
    this.ended = true;
    this.callback?.(err, rows);
  }
}
