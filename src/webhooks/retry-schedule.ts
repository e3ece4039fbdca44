/**
 * When a failed delivery is tried again (contract §7: growing delays for 3
 * days). With the defaults (WEBHOOK_RETRY_SCHEDULE=1m,5m,30m,2h,5h,10h and
 * WEBHOOK_RETRY_HOURS=72) the attempts fall at about 0, 1 min, 6 min, 36 min,
 * 2.6 h, 7.6 h, 17.6 h, 27.6 h, … 67.6 h after the first: 12 attempts. An
 * attempt that would fall after the period is not made: the delivery failed.
 */
import type { WebhookConfig } from '../config.js';

/** The time of the next attempt after `attemptsMade` failed ones, or null when the period is over. */
export function nextAttemptAt(
  attemptsMade: number,
  windowStartedAt: number,
  now: number,
  config: Pick<WebhookConfig, 'retryDelaysMs' | 'retryWindowMs'>,
): number | null {
  const delays = config.retryDelaysMs;
  if (delays.length === 0) return null;
  const delay = delays[Math.min(attemptsMade, delays.length) - 1] ?? delays[0]!;
  const at = now + delay;
  return at <= windowStartedAt + config.retryWindowMs ? at : null;
}
