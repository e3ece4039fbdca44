/**
 * Slows password guessing: after `maxFailures` failed sign-ins for one email
 * within `windowMs`, that email is refused (429 with Retry-After) for
 * `lockMs`, whatever the password — so guessing stays slow even when a guess
 * would be right. Unknown emails are counted too, so the answer never tells
 * whether an account exists.
 *
 * The counts live in this process's memory: with one instance that is the
 * whole story; with several, each instance counts on its own, so an attacker
 * gets `maxFailures` tries per instance per lock period. A restart forgets
 * them. (A shared store — Redis, which the API's rate limit can use — would
 * be the next step.)
 */

interface Entry {
  failures: number;
  firstAt: number;
  lockedUntil: number;
}

export interface ThrottleOptions {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
  /** Emails tracked at most; the oldest entries go first, so random emails cannot grow memory. */
  maxEntries: number;
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  maxFailures: 5,
  windowMs: 15 * 60_000,
  lockMs: 15 * 60_000,
  maxEntries: 10_000,
};

export class SignInThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly options: ThrottleOptions = DEFAULT_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until `email` may try again, or 0 when it may try now. */
  retryAfter(email: string): number {
    const entry = this.entries.get(email);
    if (!entry) return 0;
    const wait = entry.lockedUntil - this.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  /** Records a failure; returns the seconds of the lock it started, or 0. */
  failed(email: string): number {
    const now = this.now();
    let entry = this.entries.get(email);
    if (!entry || now - entry.firstAt > this.options.windowMs) {
      entry = { failures: 0, firstAt: now, lockedUntil: 0 };
    }
    // Re-inserting keeps the map in order of last activity, for eviction.
    this.entries.delete(email);
    this.entries.set(email, entry);
    entry.failures++;
    if (entry.failures >= this.options.maxFailures) {
      entry.lockedUntil = now + this.options.lockMs;
      // The next window starts after the lock: one more failure then locks again.
      entry.failures = this.options.maxFailures - 1;
      entry.firstAt = entry.lockedUntil;
    }
    while (this.entries.size > this.options.maxEntries) {
      this.entries.delete(this.entries.keys().next().value!);
    }
    return this.retryAfter(email);
  }

  succeeded(email: string) {
    this.entries.delete(email);
  }
}
