/**
 * Lays out finished items, in list order, into chunks of consecutive
 * positions (see `Chunk` in store.ts). Shared by both adapters: they only
 * decide where the chunks are kept. Items are written as bytes into the
 * chunk as they come (body, timestamp, tail, comma): no per-item string.
 */
import { isoTime, ITEM_TAIL_BYTES } from '../domain/item-renderer.js';
import type { Kind } from '../domain/kinds.js';
import { IndexBuilder, type IndexSpill } from './index-builder.js';
import type { IndexBlob, IndexPart } from './snapshot-index.js';
import type { Chunk, ThinChunk } from './store.js';

/** A chunk closes once it holds this many bytes… */
export const CHUNK_TARGET_BYTES = 64 * 1024;
/** …or this many items, whichever comes first. */
export const CHUNK_MAX_ITEMS = 256;

const COMMA = 0x2c;

/** In `views` mode, the buffer chunks are laid out in (it grows only for a chunk larger than half of it). */
const SLAB_BYTES = 4 * 1024 * 1024;

export class ChunkBuilder {
  private buf: Buffer;
  private len = 0;
  /** Where the open chunk starts in `buf` (always 0 unless `views`). */
  private start = 0;
  /** Each open item's offset, from the open chunk's start. */
  private offsets: number[] = [];
  private nextChunkNo = 0;
  private nextPos = 0;
  private readonly starts: number[] = [];
  private readonly timeline: { at: number; firstPos: number }[] = [];
  private readonly views: boolean;
  private readonly index: IndexBuilder | null;

  /**
   * With `views`, a chunk's bytes are a view of the builder's own buffer,
   * valid only until the caller's next `recycle()`: for a writer that is done
   * with every chunk it was given once it calls it (its COPY or INSERT has
   * completed). It spares a copy and an allocation of every chunk; the
   * allocations alone (378 MB for 100,000 customers) made V8 run a full
   * garbage collection every few tens of MB, for the external memory. Without
   * it, each chunk owns its bytes.
   *
   * With `spill`, the filter indexes of a large snapshot are made in sorted
   * runs in a temporary file there (index-runs.ts), in bounded memory: for
   * an import's writer, which must then read `indexParts()` or `close()`.
   */
  constructor(options: { views?: boolean; kind?: Kind; spill?: IndexSpill } = {}) {
    this.views = options.views ?? false;
    // With its kind, the builder also makes the snapshot's thin items and filter indexes.
    this.index = options.kind ? new IndexBuilder(options.kind, options.spill ?? null) : null;
    this.buf = Buffer.allocUnsafeSlow(this.views ? SLAB_BYTES : CHUNK_TARGET_BYTES * 2);
  }

  /** While true, `add` never closes the open chunk: the caller closes it with `flush` (see chunk-reuse.ts). */
  hold = false;

  /**
   * Adds the next item in list order — its body (see ItemRenderer) and its
   * time — and returns a chunk when one is complete.
   */
  add(body: Uint8Array | string, actualizadoAt: number): Chunk | null {
    const last = this.timeline[this.timeline.length - 1];
    if (!last || last.at !== actualizadoAt) this.timeline.push({ at: actualizadoAt, firstPos: this.nextPos });
    this.nextPos++;
    const iso = isoTime(actualizadoAt);
    const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
    this.ensure(bodyBytes + iso.length + ITEM_TAIL_BYTES.length + 1);
    const itemStart = this.len;
    this.offsets.push(this.len - this.start);
    if (typeof body === 'string') this.len += this.buf.write(body, this.len, 'utf8');
    else {
      this.buf.set(body, this.len);
      this.len += body.length;
    }
    const bodyEnd = this.len;
    this.len += this.buf.write(iso, this.len, 'latin1');
    this.buf.set(ITEM_TAIL_BYTES, this.len);
    this.len += ITEM_TAIL_BYTES.length;
    this.index?.add(this.buf, itemStart, bodyEnd, this.len, this.nextPos - 1);
    this.buf[this.len++] = COMMA;
    if (!this.hold && (this.len - this.start >= CHUNK_TARGET_BYTES || this.offsets.length >= CHUNK_MAX_ITEMS)) return this.flush();
    return null;
  }

  /** Items in the open chunk. */
  get openItems(): number {
    return this.offsets.length;
  }

  /** Bytes in the open chunk. */
  get openBytes(): number {
    return this.len - this.start;
  }

  /**
   * Takes a chunk laid out before, unchanged, as the next chunk (the open one
   * must be empty): its items' times, in order, and its thin chunk, which the
   * filter indexes are made from. Nothing is written: the caller maps the
   * chunk number returned to the stored chunk.
   */
  reuse(times: ArrayLike<number>, thin: ThinChunk): { chunkNo: number; firstPos: number } {
    if (this.offsets.length > 0) throw new Error('reuse: the open chunk is not empty');
    const firstPos = this.nextPos;
    for (let k = 0; k < times.length; k++) {
      const at = times[k]!;
      const last = this.timeline[this.timeline.length - 1];
      if (!last || last.at !== at) this.timeline.push({ at, firstPos: this.nextPos });
      this.nextPos++;
    }
    this.index?.addThinChunk(thin, firstPos);
    this.starts.push(firstPos);
    return { chunkNo: this.nextChunkNo++, firstPos };
  }

  /** Closes the last, partial chunk; null when there is none. */
  flush(): Chunk | null {
    const count = this.offsets.length;
    if (count === 0) return null;
    const offsets = new Uint32Array(count + 1);
    for (let i = 0; i < count; i++) offsets[i] = this.offsets[i]!;
    // Items are joined by commas: the last one's comma is not part of the chunk.
    offsets[count] = this.len - this.start;
    const bytes = this.buf.subarray(this.start, this.len - 1);
    const chunk: Chunk = {
      chunkNo: this.nextChunkNo++,
      firstPos: this.nextPos - count,
      offsets,
      bytes: this.views ? bytes : Buffer.from(bytes),
    };
    if (this.index) chunk.thin = this.index.takeThin(chunk.chunkNo, chunk.firstPos);
    this.starts.push(chunk.firstPos);
    this.offsets = [];
    if (this.views) this.start = this.len;
    else this.len = 0;
    return chunk;
  }

  /**
   * In `views` mode: the caller is done with every chunk returned so far, so
   * their bytes may be written over. The open chunk's bytes move to the start.
   */
  recycle(): void {
    if (!this.views || this.start === 0) return;
    this.buf.copyWithin(0, this.start, this.len);
    this.len -= this.start;
    this.start = 0;
  }

  get count(): number {
    return this.nextPos;
  }

  /** First position of each chunk emitted so far. */
  chunkStarts(): Uint32Array {
    return Uint32Array.from(this.starts);
  }

  /**
   * The snapshot's filter indexes (see snapshot-index.ts), once every item
   * was added, made one at a time as they are read; none without a kind.
   */
  indexes(): Iterable<IndexBlob> {
    return this.index?.finish() ?? [];
  }

  /** The same in parts, as the writers store them (snapshot-index.ts): a large index is never whole in memory. */
  indexParts(partBytes?: number): Iterable<IndexPart> {
    return this.index?.parts(partBytes) ?? [];
  }

  /** Sorted runs the filter indexes were built from so far (0: gathered whole in memory). */
  get indexRuns(): number {
    return this.index?.runsWritten ?? 0;
  }

  /** Lets go of what a spilled index build holds on disk, for a builder dropped before its indexes are read. */
  close(): void {
    this.index?.close();
  }

  timelineEntries(): { at: number; firstPos: number }[] {
    return this.timeline.slice();
  }

  private ensure(n: number) {
    if (this.len + n <= this.buf.length) return;
    // A new buffer, holding the open chunk: chunks already returned keep viewing the old one.
    const open = this.len - this.start;
    const next = Buffer.allocUnsafeSlow(Math.max(this.views ? SLAB_BYTES : 0, (open + n) * 2, this.buf.length * (this.views ? 1 : 2)));
    this.buf.copy(next, 0, this.start, this.len);
    this.buf = next;
    this.start = 0;
    this.len = open;
  }
}

/**
 * The bodies of a chunk's items as `ChunkBuilder.add` was given them: each
 * item without the time (`at`, the same for all of them) and the tail it
 * appended. Views of `bytes`, no copies.
 */
export function itemBodies(offsets: Uint32Array, bytes: Buffer, at: number): Buffer[] {
  const appended = appendedBytes(at);
  const out: Buffer[] = new Array(offsets.length - 1);
  for (let k = 0; k < out.length; k++) out[k] = bytes.subarray(offsets[k]!, offsets[k + 1]! - appended);
  return out;
}

/** The body of a chunk's item `k`, whose time is `at` (a view of `bytes`). */
export function itemBody(offsets: Uint32Array, bytes: Buffer, k: number, at: number): Buffer {
  if (k < 0 || k + 1 >= offsets.length) throw new Error(`item ${k} is not in a chunk of ${offsets.length - 1}`);
  return bytes.subarray(offsets[k]!, offsets[k + 1]! - appendedBytes(at));
}

/** What `add` appended to a body: the time, the tail, and the comma before the next item. */
function appendedBytes(at: number): number {
  return isoTime(at).length + ITEM_TAIL_BYTES.length + 1;
}

export function encodeUint32s(values: Uint32Array): Buffer {
  const out = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeUInt32LE(values[i]!, i * 4);
  return out;
}

export function decodeUint32s(bytes: Buffer | Uint8Array): Uint32Array {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Uint32Array(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readUInt32LE(i * 4);
  return out;
}
