/**
 * Slows password guessing (see domain/sign-in-policy.ts): after 5 failed
 * sign-ins for one email within 15 minutes, that email is refused (429 with
 * Retry-After) for 15 minutes, whatever the password — so guessing stays slow
 * even when a guess would be right. Unknown emails are counted too, so the
 * answer never tells whether an account exists.
 *
 * The counts are shared by every instance: in Redis when REDIS_URL is set,
 * else in the store's `sign_in_failures` table (PostgreSQL for several
 * machines, the SQLite file for `serve --workers N`). N instances therefore
 * allow the same number of attempts as one, and a restart forgets nothing.
 */
import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { DEFAULT_THROTTLE, type ThrottlePolicy } from '../../domain/sign-in-policy.js';
import type { Store } from '../../store/store.js';

/** Where the failures of each email are counted; every method is atomic across instances. */
export interface ThrottleBackend {
  /** Counts a failure at `now`; returns until when the email is locked (0: not locked). */
  failed(email: string, now: number, policy: ThrottlePolicy): Promise<number>;
  lockedUntil(email: string): Promise<number>;
  succeeded(email: string): Promise<void>;
  close(): Promise<void>;
}

export class StoreThrottleBackend implements ThrottleBackend {
  constructor(private readonly store: Store) {}
  failed(email: string, now: number, policy: ThrottlePolicy) {
    return this.store.signInFailed(email, now, policy);
  }
  lockedUntil(email: string) {
    return this.store.signInLockedUntil(email);
  }
  succeeded(email: string) {
    return this.store.signInSucceeded(email);
  }
  async close() {}
}

/** domain/sign-in-policy.ts's `afterFailure`, in one atomic step on the Redis server. */
const FAILED = `
local now, max, win, lock = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local s = redis.call('HMGET', KEYS[1], 'failures', 'first_at', 'locked_until')
local failures, first, locked = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
if not failures or now - first > win then failures, first, locked = 0, now, 0 end
failures = failures + 1
if failures >= max then locked = now + lock; failures = max - 1; first = locked end
redis.call('HSET', KEYS[1], 'failures', failures, 'first_at', first, 'locked_until', locked)
redis.call('PEXPIREAT', KEYS[1], math.max(locked, first + win))
return locked`;

/**
 * Like the API's rate limit, a Redis that cannot be reached slows nobody
 * down rather than locking every administrator out: the password is still
 * checked, and a warning is logged.
 */
export class RedisThrottleBackend implements ThrottleBackend {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly logger: FastifyBaseLogger,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 1000 });
    this.redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  }

  private async orNothing<T>(fallback: T, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'sign-in throttle: Redis unavailable, not counting');
      return fallback;
    }
  }

  private key(email: string) {
    return `mirador:signin:${email}`;
  }

  failed(email: string, now: number, policy: ThrottlePolicy) {
    const args = [now, policy.maxFailures, policy.windowMs, policy.lockMs].map(String);
    return this.orNothing(0, async () => Number(await this.redis.eval(FAILED, 1, this.key(email), ...args)));
  }

  lockedUntil(email: string) {
    return this.orNothing(0, async () => Number((await this.redis.hget(this.key(email), 'locked_until')) ?? 0));
  }

  succeeded(email: string) {
    return this.orNothing(undefined, async () => void (await this.redis.del(this.key(email))));
  }

  async close() {
    this.redis.disconnect();
  }
}

export function createThrottleBackend(redisUrl: string | null, store: Store, logger: FastifyBaseLogger): ThrottleBackend {
  return redisUrl ? new RedisThrottleBackend(redisUrl, logger) : new StoreThrottleBackend(store);
}

export class SignInThrottle {
  constructor(
    private readonly backend: ThrottleBackend,
    private readonly policy: ThrottlePolicy = DEFAULT_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until `email` may try again, or 0 when it may try now. */
  async retryAfter(email: string): Promise<number> {
    return this.seconds(await this.backend.lockedUntil(email));
  }

  /** Records a failure; returns the seconds of the lock it started, or 0. */
  async failed(email: string): Promise<number> {
    return this.seconds(await this.backend.failed(email, this.now(), this.policy));
  }

  async succeeded(email: string): Promise<void> {
    await this.backend.succeeded(email);
  }

  close(): Promise<void> {
    return this.backend.close();
  }

  private seconds(lockedUntil: number): number {
    const wait = lockedUntil - this.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }
}
