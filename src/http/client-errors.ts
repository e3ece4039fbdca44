/**
 * Requests that Node's HTTP parser rejects never reach Fastify's routes; they
 * still get the contract's error body (and never a stack or parser detail).
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { CORS_HEADER_LINES } from './cors.js';
import { ERROR_CATALOG, errorBody, type ErrorCode } from './errors.js';

/** Longest URL accepted; Node's header limit (16 KiB) would otherwise decide, with a 431. */
export const MAX_URL_LENGTH = 8192;

export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const code: ErrorCode =
    err.code === 'HPE_HEADER_OVERFLOW' ? 'header_too_large' : err.code === 'HPE_URI_TOO_LONG' ? 'uri_too_long' : 'bad_request';
  const status = ERROR_CATALOG[code].status;
  const requestId = randomUUID();
  const body = errorBody(code, requestId);
  // A HEAD answer has no body, even for a request the parser refused (a client would read the body
  // as the next response). The chunk that failed starts with the method when the head came in one.
  const raw = (err as { rawPacket?: unknown }).rawPacket;
  const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Cache-Control: no-store\r\n' +
      `X-Request-Id: ${requestId}\r\n` +
      // The request was not parsed, so whether it was the panel's is unknown: the API's rule applies.
      CORS_HEADER_LINES +
      'Connection: close\r\n\r\n' +
      (head ? '' : body),
  );
}
