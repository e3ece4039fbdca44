/**
 * One memory budget for every cache of the read path that grows with the data
 * (CHUNK_CACHE_MB), split between them, so that a process's memory is its own
 * fixed cost plus at most that budget (issue 23, point 5: RSS ≤ CHUNK_CACHE_MB
 * + 200 MB). Each cache is bounded by its share alone: a share one cache does
 * not use is not lent to another, which keeps each bound simple to test.
 *
 * The split, in sixteenths (docs/configuration.md says the same):
 * - chunks, 12/16: item chunks, their gzip segments, thin chunks, filter
 *   indexes, record indexes, items kept alone, filters' gathered blocks and
 *   snapshot metas (CachedChunkSource). Most of
 *   what is served is read from here, so it gets most of the budget;
 * - compressed bodies, 1/16: br and gzip bodies of list pages and events
 *   (CompressedBodyCache); gzip list pages are mostly assembled from the
 *   chunks' segments, so this holds what cannot be;
 * - filter matches, 1/16: the positions recent filters matched (MatchCache),
 *   4 bytes a position: 32 MiB at the default budget is 8 million positions;
 * - tombstones, 1/16: removed records rendered for `include_deleted` lists,
 *   per snapshot (TombstoneCache);
 * - thin projections, 1/16: thin chunks trimmed to the fields a `fields=`
 *   page asks for, per chunk and field set (ProjectionCache).
 */

/** The bytes each cache of the read path may hold; they add up to `total`. */
export interface ReadCacheBudget {
  total: number;
  chunks: number;
  compressedBodies: number;
  filterMatches: number;
  tombstones: number;
  thinProjections: number;
}

/** Splits CHUNK_CACHE_MB's bytes between the read path's caches (see above); whole bytes, summing to `totalBytes`. */
export function splitReadCacheBudget(totalBytes: number): ReadCacheBudget {
  if (!Number.isSafeInteger(totalBytes) || totalBytes < 0) {
    throw new RangeError(`the read caches' budget must be a whole number of bytes, 0 or more; got ${totalBytes}`);
  }
  const sixteenth = Math.floor(totalBytes / 16);
  return {
    total: totalBytes,
    // The chunks take the remainder, so the shares add up to the total exactly.
    chunks: totalBytes - 4 * sixteenth,
    compressedBodies: sixteenth,
    filterMatches: sixteenth,
    tombstones: sixteenth,
    thinProjections: sixteenth,
  };
}

/** What one cache holds now against its share, for GET /metrics and the tests that hold each cache to its share. */
export interface CacheUse {
  cache: 'chunks' | 'compressed_bodies' | 'filter_matches' | 'tombstones' | 'thin_projections';
  bytes: number;
  budgetBytes: number;
}
