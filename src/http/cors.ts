/**
 * CORS (contract §1.1: any origin may read). Every response outside the panel
 * says so, errors included, wherever they come from: a route, Fastify before
 * routing (a malformed URL, an unknown path), or Node's HTTP parser (414, 431,
 * 400): a browser script must be able to read why its request failed. The
 * panel is same-origin and signed in by cookie: it announces nothing.
 */
import type { FastifyReply } from 'fastify';

/** Headers a browser script may read on a cross-origin response (besides the CORS-safelisted ones). */
export const EXPOSED_HEADERS = 'ETag, X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset';

const PANEL = /^\/panel(?:[/?]|$)/;

/** The CORS response headers, as raw header lines, for answers written to the socket. */
export const CORS_HEADER_LINES = `Access-Control-Allow-Origin: *\r\nAccess-Control-Expose-Headers: ${EXPOSED_HEADERS}\r\n`;

/** Adds the CORS headers unless `url` is the panel's. */
export function allowAnyOrigin(reply: FastifyReply, url: string): void {
  if (PANEL.test(url)) return;
  // Lowercase names, as Fastify sends them: no new string a request (send-body.ts, cacheHeaders).
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', EXPOSED_HEADERS);
}
