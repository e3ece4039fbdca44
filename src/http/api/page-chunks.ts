/**
 * What a page of positions reads (subset-page.ts renders it): the chunk
 * numbers its positions fall in, as runs, and the chunks, or for a chunk not
 * in memory of which it sends only a few items, those items alone.
 */
import type { Chunk, SnapshotMeta } from '../../store/store.js';
import { chunkIndexOf, type ChunkSource } from './snapshot-reader.js';
import type { RenderedTombstone } from '../../snapshots/tombstones.js';

/** A page's entry: a live position, or a removed record's tombstone (as subset-page.ts's PageEntry). */
type PageEntry = number | RenderedTombstone;

/**
 * The chunk numbers a page's positions fall in, as runs of consecutive
 * numbers (`[from, to]` pairs), and which chunk each position is in.
 * Positions come in list order, so the chunk is found by walking forward;
 * a position before the last one (never in a page, but not assumed) is
 * looked up afresh.
 */
export class ChunkWalk {
  private lo = 0;
  private hi = 0;
  private c = -1;

  constructor(private readonly meta: SnapshotMeta) {}

  of(pos: number): number {
    if (pos >= this.lo && pos < this.hi) return this.c;
    const starts = this.meta.chunkStarts;
    const c = this.c >= 0 && pos >= this.hi && this.c + 1 < starts.length && pos < (starts[this.c + 2] ?? this.meta.count) ? this.c + 1 : chunkIndexOf(starts, pos);
    this.c = c;
    this.lo = starts[c]!;
    this.hi = starts[c + 1] ?? this.meta.count;
    return c;
  }
}

/** Adds chunk `c` to `runs` (`[from, to]` pairs, ascending); false when `c` comes before the last run's end. */
export function addRun(runs: number[], c: number): boolean {
  const n = runs.length;
  if (n === 0 || c > runs[n - 1]! + 1) runs.push(c, c);
  else if (c === runs[n - 1]! + 1) runs[n - 1] = c;
  else if (c < runs[n - 1]!) return false;
  return true;
}

/** `runs` for chunk numbers in any order. */
export function runsOf(chunks: Set<number>): number[] {
  const runs: number[] = [];
  for (const c of [...chunks].sort((a, b) => a - b)) addRun(runs, c);
  return runs;
}


/** A page sends fewer than this share of a chunk's items: it reads them alone rather than the chunk (when not in memory). */
const ALONE_BELOW = 1 / 4;

/** The chunks of `runs` (`[from, to]` pairs), whole. */
export function loadChunks(source: ChunkSource, meta: SnapshotMeta, runs: number[]): Promise<Map<number, Chunk>> {
  return loadRuns(runs, (a, b) => source.cachedChunks(meta, a, b), (a, b) => source.chunks(meta, a, b));
}

/**
 * The whole items a page sends (`wants`), from the chunks of `runs`: chunks
 * in memory, and chunks of which it sends a large share, whole; of any other
 * chunk only the items it sends (ChunkSource.items), by position. A filter's
 * matches scattered over a large company (a tenth of its notices, one or two
 * in each chunk) would otherwise read, and push out of memory, a 64 KiB chunk
 * for each 1-2 KB item. `entries` are in list order.
 */
export async function loadItems(
  source: ChunkSource,
  meta: SnapshotMeta,
  runs: number[],
  entries: ArrayLike<PageEntry>,
  wants: (pos: number) => boolean,
): Promise<{ chunks: Map<number, Chunk>; items: Map<number, Buffer> | null }> {
  if (!source.items || !source.heldChunk || runs.length === 0) return { chunks: await loadChunks(source, meta, runs), items: null };
  // Chunks in memory are taken at once; of each other chunk, the positions wanted.
  const chunks = new Map<number, Chunk>();
  let wanted: Map<number, number[]> | null = null;
  const walk = new ChunkWalk(meta);
  let last = -1;
  let list: number[] | null = null;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (typeof e !== 'number' || !wants(e)) continue;
    const c = walk.of(e);
    // In list order, a chunk's positions come one after another: it is looked up once.
    if (c !== last) {
      last = c;
      const held = source.heldChunk(meta, c);
      if (held) chunks.set(c, held);
      list = held ? null : [];
      if (list) (wanted ??= new Map()).set(c, list);
    }
    list?.push(e);
  }
  if (wanted === null) return { chunks, items: null };
  const whole: number[] = [];
  const alone: number[] = [];
  const starts = meta.chunkStarts;
  for (const [c, positions] of wanted) {
    const size = (starts[c + 1] ?? meta.count) - starts[c]!;
    if (positions.length >= size * ALONE_BELOW) addRun(whole, c);
    else for (const pos of positions) alone.push(pos);
  }
  const [read, items] = await Promise.all([loadChunks(source, meta, whole), alone.length > 0 ? source.items(meta, alone) : []]);
  for (const [c, chunk] of read) chunks.set(c, chunk);
  if (alone.length === 0) return { chunks, items: null };
  const byPos = new Map<number, Buffer>();
  for (let i = 0; i < alone.length; i++) byPos.set(alone[i]!, items[i]!);
  return { chunks, items: byPos };
}


/**
 * Reads the chunks of `runs` (`[from, to]` pairs): from memory when they are
 * there (no promise per run: a filtered page touches many runs), else read.
 */
export async function loadRuns<T extends { chunkNo: number }>(
  runs: number[],
  cached: (from: number, to: number) => T[] | undefined,
  read: (from: number, to: number) => Promise<T[]>,
): Promise<Map<number, T>> {
  const out = new Map<number, T>();
  let reads: Promise<T[]>[] | null = null;
  for (let i = 0; i < runs.length; i += 2) {
    const hit = cached(runs[i]!, runs[i + 1]!);
    if (hit) for (const c of hit) out.set(c.chunkNo, c);
    else (reads ??= []).push(read(runs[i]!, runs[i + 1]!));
  }
  if (reads) for (const list of await Promise.all(reads)) for (const c of list) out.set(c.chunkNo, c);
  return out;
}
