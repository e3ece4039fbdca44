/** Rate-limit windows are whole minutes: start a counting test well inside one. */
export async function awayFromMinuteBoundary(marginMs = 8000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 200));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
