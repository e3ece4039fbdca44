/**
 * Whole-item pages of a filter (contract §6) as views of bytes that exist,
 * as a plain page is. A filter's matches are scattered over the snapshot's
 * chunks; copying them into every page was what made a filtered page half
 * as fast as a plain one of the same size. Instead, the matches are gathered
 * once, in blocks of GATHER_ITEMS consecutive matches laid out as a chunk's
 * items are, and kept in the chunk cache: any page of the filter, at any
 * offset and size, is then slices of a few blocks.
 *
 * A block is made the second time a page needs it, from the chunks in memory
 * and the items read alone (page-chunks.ts's loadItems); the first time, the
 * page is written as before, copying its matches (subset-page.ts). So a
 * filter asked for once (a walk of its pages, a one-off question) costs what
 * it did and fills no memory with blocks nobody asks for again, and a filter
 * asked for again and again (a dashboard, an app polling its open notices)
 * is served as views from its second ask on. Snapshots never change, so a
 * block never goes stale; it ages out with the snapshot's other entries.
 */
import type { Chunk, SnapshotMeta } from '../../store/store.js';
import { addRun, ChunkWalk, loadItems } from './page-chunks.js';
import type { GatheredBlocks } from '../../snapshots/chunk-source.js';
import { sliceItems, type ChunkSource } from './snapshot-reader.js';
import { renderEntries } from './subset-page.js';

/**
 * Matches per block: 64 notices (~1.7 KB) are ~110 KB, 64 customers of 150
 * columns ~230 KB. A page of 100 spans 2-3 blocks; a page that gathers its
 * blocks gathers at most 2 × 63 matches it does not send.
 */
export const GATHER_ITEMS = 64;

/**
 * The items of matches `a..b - 1` (indexes into `matched`, the filter's
 * positions in list order) joined by commas: views of the filter's blocks
 * when the source holds them, or has been asked for them before; otherwise
 * copied as any scattered page is. `filterKey` names the filter among the
 * snapshot's (Filters.key); `blocksOf` is where the source keeps blocks.
 */
export async function gatheredItems(
  source: ChunkSource,
  blocksOf: GatheredBlocks,
  meta: SnapshotMeta,
  filterKey: string,
  matched: Uint32Array,
  a: number,
  b: number,
): Promise<Buffer[]> {
  b = Math.min(b, matched.length);
  if (a >= b) return [];
  const first = Math.floor(a / GATHER_ITEMS);
  const last = Math.floor((b - 1) / GATHER_ITEMS);
  const blocks = new Array<Chunk>(last - first + 1);
  let missing: number[] | null = null;
  let askedBefore = true;
  for (let g = first; g <= last; g++) {
    const held = blocksOf.held(meta, filterKey, g);
    if (held) blocks[g - first] = held;
    else {
      (missing ??= []).push(g);
      // Every missing block is asked about, so that each is remembered as asked for.
      askedBefore = blocksOf.askedBefore(meta, filterKey, g) && askedBefore;
    }
  }
  if (missing && !askedBefore) return renderEntries(source, meta, matched.subarray(a, b), null);
  if (missing) {
    const made = await Promise.all(missing.map((g) => gatherBlock(source, meta, matched, g)));
    for (let i = 0; i < missing.length; i++) {
      blocks[missing[i]! - first] = made[i]!;
      blocksOf.keep(meta, filterKey, missing[i]!, made[i]!);
    }
  }
  return sliceItems(blocks, a, b);
}

/** Block `g` of `matched`: its items copied into one buffer, with a chunk's offsets (item k is `bytes[offsets[k], offsets[k + 1] - 1)`). */
async function gatherBlock(source: ChunkSource, meta: SnapshotMeta, matched: Uint32Array, g: number): Promise<Chunk> {
  const positions = matched.subarray(g * GATHER_ITEMS, Math.min((g + 1) * GATHER_ITEMS, matched.length));
  const runs: number[] = [];
  const walk = new ChunkWalk(meta);
  for (let i = 0; i < positions.length; i++) addRun(runs, walk.of(positions[i]!));
  const { chunks, items } = await loadItems(source, meta, runs, positions, () => true);
  const parts = new Array<Buffer>(positions.length);
  const offsets = new Uint32Array(positions.length + 1);
  let size = 0;
  for (let i = 0; i < positions.length; i++) {
    const pos = positions[i]!;
    const chunk = chunks.get(walk.of(pos));
    let part: Buffer;
    if (chunk) {
      const k = pos - chunk.firstPos;
      part = chunk.bytes.subarray(chunk.offsets[k]!, chunk.offsets[k + 1]! - 1);
    } else part = items!.get(pos)!;
    parts[i] = part;
    offsets[i] = size;
    size += part.length + 1;
  }
  offsets[positions.length] = size;
  const bytes = Buffer.allocUnsafeSlow(size - 1);
  for (let i = 0; i < parts.length; i++) {
    parts[i]!.copy(bytes, offsets[i]!);
    if (i + 1 < parts.length) bytes[offsets[i + 1]! - 1] = 0x2c;
  }
  return { chunkNo: g, firstPos: g * GATHER_ITEMS, offsets, bytes };
}
