/**
 * The connection pool, and the one place PostgreSQL errors are translated:
 * losing the server becomes StoreUnavailableError (answered 503 with
 * Retry-After), and no query on the request path waits more than a few
 * seconds. Only long background work (writing a snapshot, the sweep) opts out
 * of the statement timeout.
 */
import pg from 'pg';
import type { CustomTypesConfig, PoolClient, QueryConfig, QueryResult } from 'pg';
import { StoreUnavailableError } from '../store.js';

/** Waiting longer than this for a connection answers 503 instead. */
const CONNECT_TIMEOUT_MS = 2000;
/** Server-side cap on one statement (request-path queries take milliseconds). */
const STATEMENT_TIMEOUT_MS = 15_000;
/** Client-side cap, for a server that stops answering without closing the socket. */
export const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 5000;
/** Connections per process: HTTP reads plus one or two for the import worker. */
const POOL_MAX = 10;
/** Idle connections are closed after this long. */
const IDLE_TIMEOUT_MS = 30_000;
/** TCP keepalive probes start after this much silence (the OS default is two hours). */
const KEEPALIVE_DELAY_MS = 10_000;

const INT8_OID = 20;
const BYTEA_OID = 17;
const textBytea = pg.types.getTypeParser(BYTEA_OID, 'text') as (text: string) => Buffer;

/**
 * A BYTEA value in memory of its own. pg-types decodes one with
 * `Buffer.from(hex, 'hex')`, which cuts values under 4 KiB out of Node's
 * shared 8 KiB pool: a 16-byte record hash kept in a cache (the live
 * record cache, a credential's secret hash) then kept its whole 8 KiB slab
 * alive, and the soak's servers grew by that, slab by slab (10 MB of pinned
 * slabs in 6 minutes on one instance, counted nowhere).
 */
export function byteaOwnMemory(text: string): Buffer {
  if (text.startsWith('\\x')) {
    const out = Buffer.allocUnsafeSlow((text.length - 2) >>> 1);
    if (out.write(text.substring(2), 0, out.length, 'hex') === out.length) return out;
  }
  // The escape format (bytea_output = escape), or hex the line above could not read: pg-types' own reading, copied out.
  const read = textBytea(text);
  const out = Buffer.allocUnsafeSlow(read.length);
  read.copy(out);
  return out;
}

/** BIGINT columns hold epoch milliseconds and ids, all below 2^53: numbers, not strings. BYTEA values own their memory. */
const PARSERS: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format !== 'binary' && oid === INT8_OID) return Number;
    if (format !== 'binary' && oid === BYTEA_OID) return byteaOwnMemory;
    return pg.types.getTypeParser(oid, format);
  }) as CustomTypesConfig['getTypeParser'],
};

/** Socket errors that mean the server cannot be reached. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
]);
/**
 * SQLSTATEs that mean "not now": admin/crash shutdown, starting up, too many
 * connections, and a statement cancelled by the timeout above. Class 08
 * (connection exceptions) is matched by prefix.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);
/** The driver's own messages for a lost or never-made connection (they carry no code). */
const DRIVER_MESSAGES = /timeout exceeded when trying to connect|Connection terminated|Query read timeout|not queryable/i;

export function isUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08'))) return true;
  // Connecting to a name with several addresses fails with one error per address.
  if (err instanceof AggregateError) return err.errors.some(isUnavailable);
  return DRIVER_MESSAGES.test(err.message);
}

/** The error to throw for `err`: StoreUnavailableError when the server is out of reach, else `err` itself. */
export function toStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !isUnavailable(err)) return err;
  return new StoreUnavailableError(`PostgreSQL is unavailable: ${(err as Error).message}`, { cause: err });
}

type Values = readonly unknown[];

/** Query helpers shared by the pool and by a transaction's connection. */
abstract class Queries {
  protected abstract exec(config: QueryConfig & { query_timeout?: number }): Promise<QueryResult>;
  protected abstract readonly timeoutMs: number | undefined;

  /** `name` prepares the statement once per connection (for hot-path queries). */
  async rows<R>(text: string, values?: Values, name?: string): Promise<R[]> {
    return (await this.query(text, values, name)).rows as R[];
  }

  async one<R>(text: string, values?: Values, name?: string): Promise<R | undefined> {
    return (await this.query(text, values, name)).rows[0] as R | undefined;
  }

  /** Runs a statement; returns the number of rows it affected. */
  async run(text: string, values?: Values): Promise<number> {
    return (await this.query(text, values)).rowCount ?? 0;
  }

  private async query(text: string, values: Values | undefined, name?: string): Promise<QueryResult> {
    const config: QueryConfig & { query_timeout?: number } = { text };
    // Without values, the simple protocol runs (several statements are allowed: migrations).
    if (values && values.length > 0) config.values = values as unknown[];
    if (name) config.name = name;
    if (this.timeoutMs) config.query_timeout = this.timeoutMs;
    try {
      return await this.exec(config);
    } catch (err) {
      throw toStoreError(err);
    }
  }
}

/** One connection inside a transaction (see `Db.tx`); `client` is there for COPY. */
export class Conn extends Queries {
  constructor(
    readonly client: PoolClient,
    protected readonly timeoutMs: number | undefined,
  ) {
    super();
  }

  protected exec(config: QueryConfig): Promise<QueryResult> {
    return this.client.query(config);
  }
}

export class Db extends Queries {
  private readonly pool: pg.Pool;
  private closed = false;
  protected readonly timeoutMs = QUERY_TIMEOUT_MS;

  constructor(url: string) {
    super();
    this.pool = new pg.Pool({
      connectionString: url,
      max: POOL_MAX,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: IDLE_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      application_name: 'mirador',
      types: PARSERS,
    });
    // An idle connection closed by the server (restart, failover) must not crash
    // the process: the pool drops it and the next query opens a new one.
    this.pool.on('error', () => {});
  }

  protected exec(config: QueryConfig): Promise<QueryResult> {
    return this.pool.query(config);
  }

  /**
   * Runs a query object of node-pg's own (postgres-copy.ts's COPY reader) on
   * a connection of the pool's, which is destroyed if it fails.
   */
  async submit<T>(query: { submit(connection: unknown): void; callback?: (err: Error | null, result?: T) => void }): Promise<T> {
    try {
      return (await this.pool.query(query as unknown as QueryConfig)) as unknown as T;
    } catch (err) {
      throw toStoreError(err);
    }
  }

  /**
   * Runs `fn` in a transaction on one connection: committed when it resolves,
   * rolled back when it throws. `unbounded` lifts the statement timeout, for
   * background work whose statements may legitimately take minutes.
   */
  tx<T>(fn: (c: Conn) => Promise<T>, options: { unbounded?: boolean } = {}): Promise<T> {
    return this.withClient(
      async (client) => {
        const conn = new Conn(client, options.unbounded ? undefined : QUERY_TIMEOUT_MS);
        await conn.run('BEGIN');
        if (options.unbounded) await conn.run('SET LOCAL statement_timeout = 0');
        const result = await fn(conn);
        await conn.run('COMMIT');
        return result;
      },
      // A lost connection is broken; otherwise it is usable once rolled back.
      async (err, client) =>
        isUnavailable(err)
          ? (err as Error)
          : new Conn(client, QUERY_TIMEOUT_MS).run('ROLLBACK').then(() => undefined, (e: Error) => e),
    );
  }

  /**
   * Runs `fn` on one connection of its own, outside a transaction: for a
   * `COPY … TO STDOUT`, which a pooled `query` cannot run. A connection that
   * saw an error is destroyed, since a COPY cut short leaves it mid-stream.
   */
  session<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
    return this.withClient((client) => fn(new Conn(client, QUERY_TIMEOUT_MS)), async (err) => err as Error);
  }

  /**
   * Runs `use` on a connection of the pool's. While it holds it, it listens
   * for the connection's 'error': a checked-out client has no listener of the
   * pool's, and an unhandled 'error' (the server going away mid-transaction)
   * would end the process. When `use` throws, `brokenBy` says what left the
   * connection in an unknown state, if anything: it is then destroyed rather
   * than reused.
   */
  private async withClient<T>(
    use: (client: PoolClient) => Promise<T>,
    brokenBy: (err: unknown, client: PoolClient) => Promise<Error | undefined>,
  ): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw toStoreError(err);
    }
    const ignore = () => {};
    client.on('error', ignore);
    let broken: Error | undefined;
    try {
      return await use(client);
    } catch (err) {
      broken = await brokenBy(err, client);
      throw toStoreError(err);
    } finally {
      client.off('error', ignore);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
