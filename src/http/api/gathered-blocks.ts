/**
 * Where CachedChunkSource keeps a filter's gathered blocks (gathered-page.ts):
 * in its chunk cache, within CHUNK_CACHE_MB, and which blocks were asked for
 * once (the second ask gathers one).
 */
import { fnv1a } from '../../domain/text-hash.js';
import type { GatheredBlocks } from '../../snapshots/chunk-source.js';
import type { Chunk, SnapshotMeta } from '../../store/store.js';
import { blockKey } from './cache-sizes.js';
import type { ClockCache } from './clock-cache.js';
import { RecentAsks } from './recent-asks.js';

/** Blocks remembered as asked for once (a number each). */
const MAX_ASKED_BLOCKS = 16_384;

export class CachedBlocks implements GatheredBlocks {
  /** Hashes of the keys, not the keys: a filter's text is the client's, of any length. Two alike only gather one block an ask early. */
  private readonly asked = new RecentAsks<number>(MAX_ASKED_BLOCKS);

  constructor(private readonly cache: ClockCache) {}

  held(meta: SnapshotMeta, filterKey: string, block: number): Chunk | undefined {
    return this.cache.hit<Chunk>(blockKey(meta.id, filterKey, block));
  }

  askedBefore(meta: SnapshotMeta, filterKey: string, block: number): boolean {
    return this.asked.again(fnv1a(blockKey(meta.id, filterKey, block)));
  }

  keep(meta: SnapshotMeta, filterKey: string, block: number, chunk: Chunk): void {
    this.cache.remember(blockKey(meta.id, filterKey, block), chunk);
  }
}
