/**
 * How failed sign-ins slow password guessing: after `maxFailures` failures for
 * one email within `windowMs`, that email is refused for `lockMs`, whatever
 * the password. The state of one email is a small record that the throttle
 * keeps where every instance sees it (Redis, or the store), so that N
 * instances do not allow N times the attempts.
 */
export interface ThrottlePolicy {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

export const DEFAULT_THROTTLE: ThrottlePolicy = {
  maxFailures: 5,
  windowMs: 15 * 60_000,
  lockMs: 15 * 60_000,
};

export interface ThrottleState {
  failures: number;
  /** When the current window began (epoch ms). */
  firstAt: number;
  /** Refused until then (epoch ms); 0 when not locked. */
  lockedUntil: number;
  /** After this, the record means nothing and may be deleted. */
  expiresAt: number;
}

/** The state after one more failure at `now`. */
export function afterFailure(prev: ThrottleState | null, now: number, policy: ThrottlePolicy): ThrottleState {
  let { failures, firstAt, lockedUntil } =
    prev && now - prev.firstAt <= policy.windowMs ? prev : { failures: 0, firstAt: now, lockedUntil: 0 };
  failures++;
  if (failures >= policy.maxFailures) {
    lockedUntil = now + policy.lockMs;
    // The next window starts after the lock: one more failure then locks again.
    failures = policy.maxFailures - 1;
    firstAt = lockedUntil;
  }
  return { failures, firstAt, lockedUntil, expiresAt: Math.max(lockedUntil, firstAt + policy.windowMs) };
}
