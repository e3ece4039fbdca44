/**
 * Request-rate limits: per API key on real data, per client address on the
 * sandbox. A fixed one-minute window per subject, counted in memory or, with
 * REDIS_URL, in Redis so that every instance shares one count.
 *
 * Not @fastify/rate-limit: a 304 must not count (polling with If-None-Match is
 * what we want clients to do), and whether a request ends in a 304 is only
 * known after its ETag is computed, deep in the handler.
 */
import { Redis } from 'ioredis';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { ApiError } from './errors.js';

const WINDOW_MS = 60_000;
const currentWindow = () => Math.floor(Date.now() / WINDOW_MS);

export interface Quota {
  limit: number;
  used: number;
  /** Epoch ms at which the window ends. */
  resetAt: number;
}

export interface RateCounter {
  /** Counts one request for `subject` in the current window; returns the count after it. */
  increment(subject: string, window: number): Promise<number>;
  /** The count so far, without counting. */
  peek(subject: string, window: number): Promise<number>;
  /** `peek`, when the count is in this process (no promise); absent for shared counters. */
  peekNow?(subject: string, window: number): number;
  /** `increment`, when the count is in this process. */
  incrementNow?(subject: string, window: number): number;
  close(): Promise<void>;
}

export class MemoryCounter implements RateCounter {
  private window = -1;
  private counts = new Map<string, number>();

  private roll(window: number) {
    // Only the current window matters: dropping older ones keeps memory bounded.
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
  }

  async increment(subject: string, window: number): Promise<number> {
    return this.incrementNow(subject, window);
  }

  async peek(subject: string, window: number): Promise<number> {
    return this.peekNow(subject, window);
  }

  incrementNow(subject: string, window: number): number {
    this.roll(window);
    const n = (this.counts.get(subject) ?? 0) + 1;
    this.counts.set(subject, n);
    return n;
  }

  peekNow(subject: string, window: number): number {
    this.roll(window);
    return this.counts.get(subject) ?? 0;
  }

  async close() {}
}

// INCR and set the expiry in one step, so a crash between them cannot leave a key that never expires.
const INCREMENT = `local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n`;

export class RedisCounter implements RateCounter {
  private readonly redis: Redis;

  constructor(url: string, private readonly logger: FastifyBaseLogger) {
    // Commands wait for the connection (so the first requests are counted too),
    // but never long: a slow Redis must not slow every request.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 500 });
    this.redis.on('error', (err) => this.logger.warn({ err: err.message }, 'redis error'));
  }

  async increment(subject: string, window: number): Promise<number> {
    return Number(await this.redis.eval(INCREMENT, 1, `mirador:rl:${window}:${subject}`, String(WINDOW_MS * 2)));
  }

  async peek(subject: string, window: number): Promise<number> {
    return Number((await this.redis.get(`mirador:rl:${window}:${subject}`)) ?? 0);
  }

  async close() {
    this.redis.disconnect();
  }
}

export class RateLimiter {
  constructor(
    private readonly counter: RateCounter,
    private readonly limit: number,
    private readonly logger: FastifyBaseLogger,
  ) {}

  /** Counts a request; sets the RateLimit headers; throws 429 once over the limit. */
  async charge(reply: FastifyReply, subject: string): Promise<void> {
    const quota = await this.read(subject, true);
    this.annotate(reply, quota);
    if (quota.used > quota.limit) {
      const retryAfter = String(Math.max(1, Math.ceil((quota.resetAt - Date.now()) / 1000)));
      throw new ApiError(
        'rate_limited',
        `Over ${quota.limit} requests per minute. Retry after ${retryAfter} seconds.`,
        { 'Retry-After': retryAfter },
      );
    }
  }

  /** Sets the RateLimit headers without counting (for 304s). */
  async observe(reply: FastifyReply, subject: string): Promise<void> {
    this.annotate(reply, await this.read(subject, false));
  }

  /**
   * `charge` without a promise, when the count is kept in this process and
   * the request is within the limit: true once counted and annotated. False
   * (nothing counted, nothing set) when it cannot be told now or the request
   * would be refused: the caller then takes `charge`, which throws the 429.
   */
  chargeNow(reply: FastifyReply, subject: string): boolean {
    const counter = this.counter;
    if (!counter.incrementNow) return false;
    const window = currentWindow();
    if (counter.peekNow!(subject, window) >= this.limit) return false;
    this.annotate(reply, this.quota(counter.incrementNow(subject, window), window));
    return true;
  }

  /** `observe` without a promise; false (nothing set) when the count is not in this process. */
  observeNow(reply: FastifyReply, subject: string): boolean {
    const counter = this.counter;
    if (!counter.peekNow) return false;
    const window = currentWindow();
    this.annotate(reply, this.quota(counter.peekNow(subject, window), window));
    return true;
  }

  close() {
    return this.counter.close();
  }

  private async read(subject: string, count: boolean): Promise<Quota> {
    const window = currentWindow();
    let used: number;
    try {
      used = count ? await this.counter.increment(subject, window) : await this.counter.peek(subject, window);
    } catch (err) {
      // Without the shared counter we serve rather than refuse: a limit is protection, not a feature to fail on.
      this.logger.warn({ err: (err as Error).message }, 'rate limit counter unavailable; request not limited');
      used = 0;
    }
    return this.quota(used, window);
  }

  private quota(used: number, window: number): Quota {
    return { limit: this.limit, used, resetAt: (window + 1) * WINDOW_MS };
  }

  private annotate(reply: FastifyReply, quota: Quota) {
    // Lowercase names, as Fastify sends them: no new string a request (send-body.ts, cacheHeaders).
    reply.header('ratelimit-limit', String(quota.limit));
    reply.header('ratelimit-remaining', String(Math.max(0, quota.limit - quota.used)));
    reply.header('ratelimit-reset', String(Math.max(0, Math.ceil((quota.resetAt - Date.now()) / 1000))));
  }
}

export function createRateCounter(redisUrl: string | null, logger: FastifyBaseLogger): RateCounter {
  return redisUrl ? new RedisCounter(redisUrl, logger) : new MemoryCounter();
}
