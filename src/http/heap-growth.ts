/**
 * How far V8 lets a serving process's old generation grow before a full
 * collection, tied to the read caches' budget (CHUNK_CACHE_MB).
 *
 * A serving process is held to its fixed cost plus CHUNK_CACHE_MB plus
 * ~200 MB (issue 23, point 5). With a small budget the cache is always full,
 * and what fills the rest is garbage awaiting a full collection: objects of
 * requests that outlived two young collections, and the chunk Buffers they
 * hold (a read that is not kept still lives until its wrapper is collected).
 * V8 lets the old generation grow to up to four times its live size first.
 * A small budget says memory is scarcer than CPU, so there it may only
 * double. Measured (tenants bench at quick scale, CHUNK_CACHE_MB=32, SQLite,
 * the unit's environment, three alternating pairs): max RSS 197–200 MB
 * against 250–251, for ~10% more CPU a request; at full scale (1,000
 * companies) 35–46 MB less, for ~20% fewer requests a second. At the default
 * budget the same setting cost as much CPU and left one company's RSS where it was.
 */
import { setFlagsFromString } from 'node:v8';
import { v8FlagGiven } from '../v8-flags.js';

/** Budgets below this many MiB make V8 collect its old generation sooner. */
export const SMALL_BUDGET_MB = 256;

/** The old generation's growth allowed above its live size with a small budget: it may double. */
export const SMALL_BUDGET_GROWTH_PERCENT = 100;

/** V8's flag for the old generation's growth above its live size, in percent (0: V8's own rule). */
export const GROWTH_FLAG = '--heap-growing-percent';

/**
 * The heap growth for a process whose read caches get `chunkCacheBytes`, or
 * null to leave V8's own. Also null when the node command line already sets
 * it (`execArgv`): an operator's explicit choice wins.
 */
export function heapGrowthPercent(chunkCacheBytes: number, execArgv: readonly string[] = process.execArgv): number | null {
  if (v8FlagGiven(execArgv, GROWTH_FLAG)) return null;
  return chunkCacheBytes < SMALL_BUDGET_MB * 1024 * 1024 ? SMALL_BUDGET_GROWTH_PERCENT : null;
}

/** Applies `heapGrowthPercent` to this process's V8 (all its isolates); returns what it set, or null. */
export function applyHeapGrowth(chunkCacheBytes: number): number | null {
  const percent = heapGrowthPercent(chunkCacheBytes);
  if (percent !== null) setFlagsFromString(`${GROWTH_FLAG}=${percent}`);
  return percent;
}
