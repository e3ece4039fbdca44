/** Rate-limit windows are whole minutes: start a counting test well inside one (20 s of room, for a busy machine). */
export async function awayFromMinuteBoundary(marginMs = 20_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 200));
}

/**
 * How long a poll for a condition may wait before the test calls it hung. Far above what any
 * condition takes, even with the machine loaded by other suites: a slow run waits longer
 * instead of failing (issue 18, point 10).
 */
export const HANG_GUARD_MS = 15 * 60_000;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` until it holds. The bound only turns a hang into a failure with
 * a message: it is far above how long the condition takes on a busy machine, so
 * a slow run waits longer instead of failing.
 */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = HANG_GUARD_MS, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
