/**
 * While a serving process's chunk cache fills, V8 may let the old generation
 * grow to four times its live size before a full collection, instead of the
 * ~1.1–1.5 times it picks for a server like ours.
 *
 * Why: V8 (node 20's) counts the bytes allocated outside its heap since the
 * last full collection as if they were old-generation bytes, so the chunks a
 * filling cache keeps use up the headroom the old generation has left
 * (`Heap::OldGenerationSpaceAvailable`). With a live heap of ~25 MB that
 * headroom is ~10 MB: a filling cache started a full collection for every
 * ~12 MB it kept, 28–36 of them in the first seconds of details over 100,000
 * customers, each marking the whole heap on the server's core while nothing
 * it kept was garbage. With `--heap-growing-percent=300` (the most V8's own
 * rule ever picks) the headroom is three times the live heap
 * (docs/performance.md, "Full collections while the cache fills").
 *
 * Why it cannot cost RSS: the larger growth holds only while the cache has
 * room for at least that headroom. Up to the next full collection the cache
 * keeps filling into its room, which uses the headroom up, so no more garbage
 * waits for a full collection than the budget had room for anyway. Once the
 * cache stops growing or its room gets short, V8's own rule comes back at
 * the next collection.
 *
 * Not with a small budget, whose own growth (heap-growth.ts) holds RSS down,
 * nor when node's command line sets the growth: an operator's choice wins.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { v8FlagGiven } from '../v8-flags.js';
import { GROWTH_FLAG, heapGrowthPercent } from './heap-growth.js';

/** The old generation's growth allowed while the chunk cache fills: V8's largest. */
export const FILL_GROWTH_PERCENT = 300;
/** How often the cache's bytes are looked at. */
export const FILL_TICK_MS = 250;
/** Growth between two looks that says the cache is filling: 2 MiB in a quarter of a second. */
export const FILL_STEP_BYTES = 2 * 1024 * 1024;

/** Sets V8's growth: a percent, or 0 for V8's own rule. */
export type GrowthSetter = (percent: number) => void;

const setV8Growth: GrowthSetter = (percent) => setFlagsFromString(`${GROWTH_FLAG}=${percent}`);

/** One look: the cache's bytes and budget, and V8's heap in use. */
export interface FillLook {
  bytes: number;
  budgetBytes: number;
  heapUsedBytes: number;
}

/**
 * The rule, one look at a time: `look()` every FILL_TICK_MS; it sets the
 * growth when filling starts or stops.
 */
export class CacheFillGrowth {
  private last: number | undefined;
  private filling = false;

  constructor(private readonly set: GrowthSetter = setV8Growth) {}

  /** Whether the cache was filling at the last look (the growth is FILL_GROWTH_PERCENT). */
  get active(): boolean {
    return this.filling;
  }

  look({ bytes, budgetBytes, heapUsedBytes }: FillLook): void {
    const grew = this.last === undefined ? 0 : bytes - this.last;
    this.last = bytes;
    const headroom = (heapUsedBytes * FILL_GROWTH_PERCENT) / 100;
    const filling = grew >= FILL_STEP_BYTES && budgetBytes - bytes >= headroom;
    if (filling === this.filling) return;
    this.filling = filling;
    this.set(filling ? FILL_GROWTH_PERCENT : 0);
  }

  /** Back to V8's own rule, if it was changed. */
  reset(): void {
    if (this.filling) this.set(0);
    this.filling = false;
    this.last = undefined;
  }
}

/**
 * Watches a serving process's chunk cache (`cache()`: its bytes and budget)
 * and applies CacheFillGrowth, unless the process's read budget
 * (CHUNK_CACHE_MB, `readBudgetBytes`) is small or node's command line sets
 * the growth (then null). `stop()` ends the watch and restores V8's rule.
 */
export function watchCacheFill(
  cache: () => { bytes: number; budgetBytes: number },
  readBudgetBytes: number,
  execArgv: readonly string[] = process.execArgv,
): { growth: CacheFillGrowth; stop(): void } | null {
  if (v8FlagGiven(execArgv, GROWTH_FLAG) || heapGrowthPercent(readBudgetBytes, execArgv) !== null) return null;
  const growth = new CacheFillGrowth();
  // Where the cache starts: a first look a tick after start already sees a cold start's fill.
  growth.look({ ...cache(), heapUsedBytes: getHeapStatistics().used_heap_size });
  const timer = setInterval(() => growth.look({ ...cache(), heapUsedBytes: getHeapStatistics().used_heap_size }), FILL_TICK_MS);
  timer.unref();
  return {
    growth,
    stop: () => {
      clearInterval(timer);
      growth.reset();
    },
  };
}
