/**
 * The event feed (contract §7): GET /v1/eventos, a company's events oldest
 * first with the list envelope and `limit`, `offset` and `updated_since` (on
 * `created_at`); GET /v1/sandbox/eventos, fixed events. The feed changes at
 * every import's end, so it is revalidated each time (like /v1/estado) rather
 * than cached for five minutes; its ETag is a hash of the body.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Store } from '../../store/store.js';
import { sandboxEvents } from '../../sandbox/sandbox-events.js';
import type { CredentialsCache } from '../credentials-cache.js';
import type { RateLimiter } from '../rate-limit.js';
import { ApiError, sendError } from '../errors.js';
import { authenticate } from './api-auth.js';
import { DOC_ONLY } from './api-docs.js';
import { parseListQuery } from './list-query.js';
import { sendCacheable, type CompressedBodyCache, type Meter } from './send-body.js';

export interface EventRouteDeps {
  store: Store;
  credentials: CredentialsCache;
  compressed: CompressedBodyCache;
  keyLimiter: RateLimiter;
  sandboxLimiter: RateLimiter;
}

const ALLOWED = 'GET, HEAD, OPTIONS';
/** Left out of the OpenAPI document unless a schema is given for it. */
const HIDDEN = { hide: true };

function meterOf(limiter: RateLimiter, reply: FastifyReply, subject: string): Meter {
  return {
    charge: () => limiter.charge(reply, subject),
    observe: () => limiter.observe(reply, subject),
    chargeNow: () => limiter.chargeNow(reply, subject),
    observeNow: () => limiter.observeNow(reply, subject),
  };
}

/** Only the feed's parameters are read; any other is ignored, as on every list. */
function feedQuery(raw: Record<string, string | string[] | undefined>) {
  const { limit, offset, updated_since } = raw;
  return parseListQuery({ limit, offset, updated_since });
}

function envelope(sandbox: boolean, total: number, limit: number, offset: number, bodies: readonly string[]): Buffer {
  const next = offset + bodies.length;
  return Buffer.from(
    `{"ok":true,${sandbox ? '"sandbox":true,' : ''}"total":${total},"limit":${limit},"offset":${offset},` +
      `"has_more":${next < total},"next_offset":${next},"items":[${bodies.join(',')}]}`,
  );
}

/** The OpenAPI operations of the feed's routes (api-docs.ts), by sandbox or not. */
export interface EventDocs {
  eventos(sandbox: boolean): Record<string, unknown>;
}

export function registerEventRoutes(app: FastifyInstance, deps: EventRouteDeps, docs?: EventDocs) {
  const feed = sandboxEvents();
  const otherMethods = app.supportedMethods.filter((m) => !['GET', 'HEAD', 'OPTIONS'].includes(m));

  for (const sandbox of [false, true]) {
    const url = sandbox ? '/v1/sandbox/eventos' : '/v1/eventos';
    app.get(url, docs ? { ...DOC_ONLY, schema: docs.eventos(sandbox) } : { schema: HIDDEN }, async (request, reply) => {
      let meter: Meter;
      let body: Buffer;
      if (sandbox) {
        meter = meterOf(deps.sandboxLimiter, reply, `ip:${request.ip}`);
        const q = await charged(meter, () => feedQuery(request.query as Record<string, string>));
        const first = q.updatedSince === null ? 0 : lowerBound(feed.times, q.updatedSince);
        const matching = feed.bodies.slice(first);
        body = envelope(true, matching.length, q.limit, q.offset, matching.slice(q.offset, q.offset + q.limit));
      } else {
        const credential = await authenticate(request, deps.credentials, 'read');
        meter = meterOf(deps.keyLimiter, reply, `key:${credential.prefix}`);
        const q = await charged(meter, () => feedQuery(request.query as Record<string, string>));
        const page = await deps.store.listEvents(credential.companyId, q.updatedSince, q.offset, q.limit);
        body = envelope(false, page.total, q.limit, q.offset, page.bodies);
      }
      return sendCacheable(request, reply, deps.compressed, {
        tag: `v${createHash('sha1').update(body).digest('hex').slice(0, 24)}${sandbox ? '.s' : ''}`,
        cacheControl: sandbox ? 'public, max-age=3600' : 'private, max-age=0, must-revalidate',
        vary: sandbox ? 'Accept-Encoding' : 'Authorization, X-API-Key, Accept-Encoding',
        meter,
        pieces: () => [body],
      });
    });
    app.options(url, { schema: HIDDEN }, async (_request, reply) => {
      reply.header('Access-Control-Allow-Methods', ALLOWED);
      reply.header('Access-Control-Allow-Headers', 'Authorization, X-API-Key, If-None-Match, X-Request-Id');
      reply.header('Access-Control-Max-Age', '86400');
      reply.header('Allow', ALLOWED);
      return reply.code(204).send();
    });
    app.route({
      method: otherMethods,
      url,
      schema: HIDDEN,
      onRequest: async (_request, reply) => {
        reply.header('Allow', ALLOWED);
        return sendError(reply, new ApiError('method_not_allowed', `Only ${ALLOWED} are allowed on this path.`));
      },
      handler: async () => undefined,
    });
  }
}

async function charged<T>(meter: Meter, fn: () => T): Promise<T> {
  try {
    return fn();
  } catch (err) {
    await meter.charge();
    throw err;
  }
}

/** The first index whose time is >= `t`. */
function lowerBound(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
