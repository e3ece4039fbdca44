/**
 * Lays out a re-import's snapshot sharing the previous snapshot's unchanged
 * chunks (issues 22 and 23). A nightly re-export changes a few hundred of
 * 100,000 records: rewriting every chunk made the re-import cost more than a
 * first import and kept a full copy of the items per snapshot in the database.
 *
 * An unchanged record keeps its time, and list order is (time, id), so the
 * unchanged records keep their order, and a previous chunk whose items all
 * come back unchanged, one after the other, is the same bytes in the new
 * snapshot: its map row names the stored chunk instead of a copy (chunk_map,
 * see the migrations). Everything else — changed and new records, and what is
 * left of a chunk that lost some — is laid out anew by the ChunkBuilder.
 *
 * Both adapters use it the same way: the planner turns records in list order
 * into steps (`fresh` rows, or `reuse` of a previous chunk); the layout runs
 * them, given the bodies of fresh rows and the thin chunks of reused ones
 * (the filter indexes are made from those), and returns the chunks to store
 * and the map rows to write.
 */
import { CHUNK_MAX_ITEMS, CHUNK_TARGET_BYTES, type ChunkBuilder } from './chunk-builder.js';
import type { Chunk, StagedSnapshot, ThinChunk } from './store.js';

/** A record in the new snapshot's list order, as a writer's stage gives it. */
export interface OrderedRow {
  idErp: string;
  hash: Buffer;
  ts: number;
  /** Where its body is in the stage's body file; UNSTAGED (previous-records.ts) when it was not staged. */
  off: number;
  len: number;
  /** Its position in the previous snapshot when it is unchanged; null when it is new or changed. */
  prevPos: number | null;
}

/** A snapshot's chunk: which stored chunk holds its items, and which stored segment is its gzip form. */
export interface MapEntry {
  chunkNo: number;
  firstPos: number;
  srcSnapshot: number;
  srcChunk: number;
  segSnapshot: number;
  segChunk: number;
}

export type Step = { kind: 'fresh'; rows: OrderedRow[] } | { kind: 'reuse'; prevChunk: number; rows: OrderedRow[] };

/**
 * Finds the previous chunks that come back whole: a run of rows whose
 * previous positions are exactly a chunk's, in order. Rows are pushed in
 * list order, a page at a time; a run may span pages.
 */
export class ReusePlanner {
  private run: { prevChunk: number; next: number; end: number; rows: OrderedRow[] } | null = null;

  /** `prevStarts`: the previous snapshot's chunk starts; `prevCount`: its number of records. */
  constructor(
    private readonly prevStarts: Uint32Array,
    private readonly prevCount: number,
  ) {}

  push(rows: readonly OrderedRow[]): Step[] {
    const steps: Step[] = [];
    const fresh = (r: OrderedRow[]) => {
      const last = steps[steps.length - 1];
      if (last?.kind === 'fresh') last.rows.push(...r);
      else steps.push({ kind: 'fresh', rows: r });
    };
    for (const row of rows) {
      const run = this.run;
      if (run) {
        if (row.prevPos === run.next) {
          run.rows.push(row);
          if (++run.next === run.end) {
            steps.push({ kind: 'reuse', prevChunk: run.prevChunk, rows: run.rows });
            this.run = null;
          }
          continue;
        }
        fresh(run.rows);
        this.run = null;
      }
      const k = row.prevPos === null ? -1 : this.chunkStartingAt(row.prevPos);
      if (k < 0) {
        fresh([row]);
        continue;
      }
      const end = k + 1 < this.prevStarts.length ? this.prevStarts[k + 1]! : this.prevCount;
      if (row.prevPos! + 1 === end) steps.push({ kind: 'reuse', prevChunk: k, rows: [row] });
      else this.run = { prevChunk: k, next: row.prevPos! + 1, end, rows: [row] };
    }
    return steps;
  }

  /** The rows of a run cut short by the end of the records. */
  end(): Step[] {
    const run = this.run;
    this.run = null;
    return run ? [{ kind: 'fresh', rows: run.rows }] : [];
  }

  /** The previous chunk that starts at `pos`; -1 when none does. */
  private chunkStartingAt(pos: number): number {
    const starts = this.prevStarts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = starts[mid]!;
      if (v === pos) return mid;
      if (v < pos) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/** The previous chunks that `steps` may reuse, whose thin chunks the layout needs. */
export function reusedChunks(steps: readonly Step[]): number[] {
  const out: number[] = [];
  for (const s of steps) if (s.kind === 'reuse') out.push(s.prevChunk);
  return out;
}

/** What a run of steps produced: chunks to store (with their thin chunks), and map rows to write. */
export interface LayoutOutput {
  chunks: Chunk[];
  map: MapEntry[];
}

/** What a layout wrote and shared, and how its indexes were built (StagedSnapshot's `layout`). */
export type LayoutStats = NonNullable<StagedSnapshot['layout']>;

/** A layout's stats: its chunk counts, and the runs `builder`'s indexes were built from so far. */
export function layoutStats(builder: ChunkBuilder, chunksWritten: number, chunksShared: number): LayoutStats {
  return { chunksWritten, chunksShared, indexRuns: builder.indexRuns };
}

/**
 * Runs steps against a ChunkBuilder. A chunk left open when a reused chunk
 * comes is closed first — unless it is under a quarter of a chunk: then the
 * reused chunk's items are laid out again after it, in one chunk. A small
 * previous chunk (under a quarter of the average) is laid out again too, with
 * what follows it. Both keep chunks from shrinking night after night: the
 * records a nightly import changes land at the end, a handful each night.
 */
export class ReusingLayout {
  private readonly counts = { chunksWritten: 0, chunksShared: 0 };
  private last: MapEntry | null = null;

  /**
   * `prev`: the previous snapshot's map, by chunk number, and its number of
   * records (null: none); `bodies`: the
   * bodies of fresh rows, from the stage; `onRecord`: each record's position
   * in the new snapshot, for a writer that stores them as it lays out.
   */
  private readonly smallChunkItems: number;

  private readonly prevMap: readonly MapEntry[];

  constructor(
    private readonly builder: ChunkBuilder,
    private readonly snapshotId: number,
    prev: { map: readonly MapEntry[]; count: number } | null,
    private readonly bodies: (rows: readonly OrderedRow[]) => Buffer[],
    private readonly onRecord?: (row: OrderedRow, pos: number) => void,
  ) {
    this.prevMap = prev?.map ?? [];
    this.smallChunkItems = prev && prev.map.length > 0 ? prev.count / prev.map.length / 4 : 0;
  }

  get stats(): LayoutStats {
    return layoutStats(this.builder, this.counts.chunksWritten, this.counts.chunksShared);
  }

  /** Runs `steps`; `thin` holds the thin chunk of every previous chunk they reuse. */
  run(steps: readonly Step[], thin: ReadonlyMap<number, ThinChunk>): LayoutOutput {
    const out: LayoutOutput = { chunks: [], map: [] };
    for (const step of steps) {
      if (step.kind === 'fresh') {
        this.addFresh(step.rows, out);
        continue;
      }
      const b = this.builder;
      if (step.rows.length < this.smallChunkItems) {
        this.addFresh(step.rows, out);
        continue;
      }
      if (b.openItems > 0) {
        if (b.openBytes < CHUNK_TARGET_BYTES / 4 && b.openItems + step.rows.length <= CHUNK_MAX_ITEMS) {
          b.hold = true;
          this.addFresh(step.rows, out);
          b.hold = false;
          this.close(b.flush(), out);
          continue;
        }
        this.close(b.flush(), out);
      }
      const prev = this.prevMap[step.prevChunk]!;
      const t = thin.get(step.prevChunk);
      if (!t) throw new Error(`reuse: no thin chunk for previous chunk ${step.prevChunk}`);
      const { chunkNo, firstPos } = b.reuse(
        step.rows.map((r) => r.ts),
        t,
      );
      if (this.onRecord) for (let k = 0; k < step.rows.length; k++) this.onRecord(step.rows[k]!, firstPos + k);
      // The previous segment was compressed against the chunk before it there (none for the
      // first chunk): it holds here only when that is the chunk before it here too.
      const before = step.prevChunk > 0 ? this.prevMap[step.prevChunk - 1]! : null;
      const segmentHolds =
        before === null || (this.last !== null && this.last.srcSnapshot === before.srcSnapshot && this.last.srcChunk === before.srcChunk);
      const entry: MapEntry = {
        chunkNo,
        firstPos,
        srcSnapshot: prev.srcSnapshot,
        srcChunk: prev.srcChunk,
        segSnapshot: segmentHolds ? prev.segSnapshot : this.snapshotId,
        segChunk: segmentHolds ? prev.segChunk : chunkNo,
      };
      out.map.push(entry);
      this.last = entry;
      this.counts.chunksShared++;
    }
    return out;
  }

  /** Closes the last, partial chunk. */
  finish(): LayoutOutput {
    const out: LayoutOutput = { chunks: [], map: [] };
    this.close(this.builder.flush(), out);
    return out;
  }

  private addFresh(rows: readonly OrderedRow[], out: LayoutOutput) {
    const bodies = this.bodies(rows);
    for (let k = 0; k < rows.length; k++) {
      const row = rows[k]!;
      this.onRecord?.(row, this.builder.count);
      this.close(this.builder.add(bodies[k]!, row.ts), out);
    }
  }

  private close(chunk: Chunk | null, out: LayoutOutput) {
    if (!chunk) return;
    out.chunks.push(chunk);
    const entry = ownEntry(this.snapshotId, chunk);
    out.map.push(entry);
    this.last = entry;
    this.counts.chunksWritten++;
  }
}

/** The map row of a chunk a snapshot stores itself. */
export function ownEntry(snapshotId: number, chunk: Chunk): MapEntry {
  return {
    chunkNo: chunk.chunkNo,
    firstPos: chunk.firstPos,
    srcSnapshot: snapshotId,
    srcChunk: chunk.chunkNo,
    segSnapshot: snapshotId,
    segChunk: chunk.chunkNo,
  };
}
