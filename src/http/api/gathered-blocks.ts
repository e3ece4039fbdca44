/**
 * Where CachedChunkSource keeps a filter's gathered blocks (gathered-page.ts):
 * in its chunk cache, within CHUNK_CACHE_MB, and which blocks were asked for
 * once (the second ask gathers one).
 */
import type { GatheredBlocks } from '../../snapshots/chunk-source.js';
import type { Chunk, SnapshotMeta } from '../../store/store.js';
import { blockKey } from './cache-sizes.js';
import type { ClockCache } from './clock-cache.js';
import { RecentAsks } from './recent-asks.js';

/** Blocks remembered as asked for once (a number each). */
const MAX_ASKED_BLOCKS = 16_384;

/** FNV-1a over a string's UTF-16 code units, 32 bits. */
function hashText(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class CachedBlocks implements GatheredBlocks {
  /** Hashes of the keys, not the keys: a filter's text is the client's, of any length. Two alike only gather one block an ask early. */
  private readonly asked = new RecentAsks<number>(MAX_ASKED_BLOCKS);

  constructor(private readonly cache: ClockCache) {}

  held(meta: SnapshotMeta, filterKey: string, block: number): Chunk | undefined {
    return this.cache.hit<Chunk>(blockKey(meta.id, filterKey, block));
  }

  askedBefore(meta: SnapshotMeta, filterKey: string, block: number): boolean {
    return this.asked.again(hashText(blockKey(meta.id, filterKey, block)));
  }

  keep(meta: SnapshotMeta, filterKey: string, block: number, chunk: Chunk): void {
    this.cache.remember(blockKey(meta.id, filterKey, block), chunk);
  }
}
