/**
 * The soak's memory verdict. RSS swings by tens of MB from one sample to the
 * next (the V8 heap's committed size and malloc's free memory trade places),
 * so one sample against another passes or fails by where each falls. The
 * medians of the first and last thirds of the series (after the warm-up) only
 * move when the level does.
 */
export interface RssVerdict {
  /** Median RSS of the first third of the series, and of the last third (bytes). */
  first: number;
  last: number;
  /** (last − first) / first, in percent. */
  growthPct: number;
  samples: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Needs at least 3 samples (one per third). */
export function rssVerdict(series: readonly number[]): RssVerdict {
  if (series.length < 3) throw new Error(`the RSS series has ${series.length} samples; the verdict needs at least 3 (a longer run or shorter --sample-seconds)`);
  const third = Math.floor(series.length / 3);
  const first = median(series.slice(0, third));
  const last = median(series.slice(series.length - third));
  return { first, last, growthPct: ((last - first) / first) * 100, samples: series.length };
}
