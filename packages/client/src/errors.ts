/**
 * Errors the client throws: one base class, a subclass per kind of failure.
 * Branch on the class (or on `code`, the API's stable error code).
 */

/**
 * What every error carries.
 *
 * @example
 * ```ts
 * const fields: MiradorErrorFields = { code: 'not_found', status: 404, requestId: '0f6f4d3e-…' };
 * ```
 */
export interface MiradorErrorFields {
  /** The API's error code (`invalid_parameter`, `unauthorized`, …), or `connection_error` / `invalid_response`. */
  code: string;
  /** The HTTP status, or null when no response came back. */
  status: number | null;
  /** The server's id for the request (`X-Request-Id`): quote it when asking for support. */
  requestId: string | null;
  cause?: unknown;
}

/**
 * The base of every error this client throws.
 *
 * @example
 * ```ts
 * try {
 *   await client.clientes.get('C000001');
 * } catch (err) {
 *   if (err instanceof MiradorError) console.error(err.status, err.code, err.requestId, err.message);
 *   else throw err;
 * }
 * ```
 */
export class MiradorError extends Error {
  readonly code: string;
  readonly status: number | null;
  readonly requestId: string | null;

  constructor(message: string, fields: MiradorErrorFields) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.code = fields.code;
    this.status = fields.status;
    this.requestId = fields.requestId;
  }
}

/**
 * 400 and other 4xx: the request is wrong (a bad parameter, a method or URL
 * the API refuses). Asking again will not help.
 *
 * @example
 * ```ts
 * await client.clientes.list({ limit: 5000 }).catch((err) => {
 *   if (err instanceof InvalidRequestError) console.error(err.message); // names "limit" and its range
 * });
 * ```
 */
export class InvalidRequestError extends MiradorError {}

/**
 * 401: no key, or a key that is unknown, malformed or revoked. If it persists,
 * check whether the key was revoked.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof AuthenticationError) alert('Check your Mirador API key'); }
 * ```
 */
export class AuthenticationError extends MiradorError {}

/**
 * 404: no record with that `id_erp` (or a path the API does not have).
 *
 * @example
 * ```ts
 * const c = await client.clientes.get(id).catch((err) => (err instanceof NotFoundError ? null : Promise.reject(err)));
 * ```
 */
export class NotFoundError extends MiradorError {}

/**
 * 429, once the retries are spent: over the request rate.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof RateLimitError) setTimeout(retry, (err.retryAfterSeconds ?? 60) * 1000); }
 * ```
 */
export class RateLimitError extends MiradorError {
  /** What the last `Retry-After` asked for, in seconds; null when absent. */
  readonly retryAfterSeconds: number | null;

  constructor(message: string, fields: MiradorErrorFields & { retryAfterSeconds: number | null }) {
    super(message, fields);
    this.retryAfterSeconds = fields.retryAfterSeconds;
  }
}

/**
 * 5xx, once the retries are spent: the service failed or was unavailable.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof ServerError) console.error(`Mirador failed (${err.status}), request ${err.requestId}`); }
 * ```
 */
export class ServerError extends MiradorError {}

/**
 * No usable answer at all, once the retries are spent: the connection failed
 * or timed out. `status` is null.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof ConnectionError) console.error('Is the base URL right?', err.cause); }
 * ```
 */
export class ConnectionError extends MiradorError {}

/**
 * 410 `snapshot_expired`: a pinned snapshot is no longer kept (a walk took
 * longer than the server keeps superseded data). Start the walk over.
 *
 * @example
 * ```ts
 * try { for await (const c of client.clientes.all()) save(c); }
 * catch (err) { if (err instanceof SnapshotExpiredError) restartSync(); else throw err; }
 * ```
 */
export class SnapshotExpiredError extends MiradorError {}

type ErrorClass = new (message: string, fields: MiradorErrorFields) => MiradorError;

/** The class for a status; statuses not listed fall back by range. */
const BY_STATUS: Record<number, ErrorClass> = {
  401: AuthenticationError,
  404: NotFoundError,
  410: SnapshotExpiredError,
};

/**
 * The error for an HTTP answer that is not a success.
 *
 * @example
 * ```ts
 * const err = errorForStatus(404, { ok: false, error: 'not_found', message: 'No such record.', request_id: 'r1' }, null);
 * err instanceof NotFoundError; // true
 * ```
 */
export function errorForStatus(status: number, body: unknown, headerRequestId: string | null, retryAfterSeconds: number | null = null): MiradorError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const code = typeof b.error === 'string' ? b.error : `http_${status}`;
  const message = typeof b.message === 'string' ? b.message : `Mirador answered HTTP ${status}.`;
  const requestId = typeof b.request_id === 'string' ? b.request_id : headerRequestId;
  if (status === 429) return new RateLimitError(message, { code, status, requestId, retryAfterSeconds });
  const Class = BY_STATUS[status] ?? (status >= 500 ? ServerError : InvalidRequestError);
  return new Class(message, { code, status, requestId });
}
