/**
 * Every public error code, with its HTTP status and default message. The
 * README's error table and the OpenAPI document are checked against this
 * catalog by tests; add a code here first.
 */
import type { FastifyReply } from 'fastify';
import { allowAnyOrigin } from './cors.js';

export const ERROR_CATALOG = {
  bad_request: { status: 400, message: 'The request is malformed.' },
  invalid_parameter: { status: 400, message: 'A query parameter is malformed or out of range.' },
  auth_required: { status: 401, message: 'No API key was sent. Send it as "Authorization: Bearer <key>" or "X-API-Key: <key>".' },
  unauthorized: { status: 401, message: 'The API key is not valid: it is unknown, malformed or revoked.' },
  forbidden: { status: 403, message: 'The request was refused: a panel form without its valid CSRF token.' },
  not_found: { status: 404, message: 'There is nothing at this path.' },
  method_not_allowed: { status: 405, message: 'Only GET, HEAD and OPTIONS are allowed here.' },
  snapshot_expired: {
    status: 410,
    message: 'That snapshot is unknown or no longer kept. Start the download over, without the snapshot parameter.',
  },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  uri_too_long: { status: 414, message: 'The URL is longer than 8192 characters.' },
  header_too_large: { status: 431, message: 'The request headers are too large.' },
  rate_limited: { status: 429, message: 'Too many requests for this API key. Retry after the number of seconds in Retry-After.' },
  internal_error: { status: 500, message: 'An unexpected error occurred. Retry after a few seconds.' },
  unavailable: { status: 503, message: 'The service is temporarily unavailable. Retry after the number of seconds in Retry-After.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** An error answered with the contract's body; thrown from handlers and hooks. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string = ERROR_CATALOG[code].message, headers: Record<string, string> = {}) {
    // An ApiError is an answer, not a fault: its stack is never shown or logged, and
    // capturing one costs more than the rest of a 401 or a 404.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.headers = headers;
  }
}

/** The contract's error body as bytes, for places with no reply object. */
export function errorBody(code: ErrorCode, requestId: string, message: string = ERROR_CATALOG[code].message): string {
  return JSON.stringify({ ok: false, error: code, message, request_id: requestId });
}

/** Writes `{ ok: false, error, message, request_id }` with the right status. */
export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  reply.code(err.status);
  // Also set here: errors raised before the onRequest hook (a malformed URL) must carry it too.
  // Lowercase names, as Fastify sends them: no new string a request (send-body.ts, cacheHeaders).
  reply.header('x-request-id', reply.request.id);
  reply.header('content-type', 'application/json; charset=utf-8');
  reply.header('cache-control', 'no-store');
  // Also here: errors raised before onRequest, or instead of it, must be readable by any origin too.
  allowAnyOrigin(reply, reply.request.url);
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  if (err.status === 401) reply.header('WWW-Authenticate', 'Bearer');
  return reply.send(errorBody(err.code, reply.request.id, err.message));
}
