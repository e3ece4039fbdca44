/**
 * Lays out finished items, in list order, into chunks of consecutive
 * positions (see `Chunk` in store.ts). Shared by both adapters: they only
 * decide where the chunks are kept.
 */
import type { Chunk } from './store.js';

/** A chunk closes once it holds this many bytes… */
const CHUNK_TARGET_BYTES = 64 * 1024;
/** …or this many items, whichever comes first. */
const CHUNK_MAX_ITEMS = 256;

export class ChunkBuilder {
  private items: string[] = [];
  private bytes = 0;
  private nextChunkNo = 0;
  private nextPos = 0;
  private readonly starts: number[] = [];
  private readonly timeline: { at: number; firstPos: number }[] = [];

  /** Adds the next item in list order; returns a chunk when one is complete. */
  add(item: string, actualizadoAt: number): Chunk | null {
    const last = this.timeline[this.timeline.length - 1];
    if (!last || last.at !== actualizadoAt) this.timeline.push({ at: actualizadoAt, firstPos: this.nextPos });
    this.nextPos++;
    this.items.push(item);
    this.bytes += item.length;
    if (this.bytes >= CHUNK_TARGET_BYTES || this.items.length >= CHUNK_MAX_ITEMS) return this.flush();
    return null;
  }

  /** Closes the last, partial chunk; null when there is none. */
  flush(): Chunk | null {
    if (this.items.length === 0) return null;
    const items = this.items;
    const offsets = new Uint32Array(items.length + 1);
    let at = 0;
    for (let i = 0; i < items.length; i++) {
      offsets[i] = at;
      at += Buffer.byteLength(items[i]!, 'utf8') + 1;
    }
    offsets[items.length] = at;
    const chunk: Chunk = {
      chunkNo: this.nextChunkNo++,
      firstPos: this.nextPos - items.length,
      offsets,
      bytes: Buffer.from(items.join(','), 'utf8'),
    };
    this.starts.push(chunk.firstPos);
    this.items = [];
    this.bytes = 0;
    return chunk;
  }

  get count(): number {
    return this.nextPos;
  }

  /** First position of each chunk emitted so far. */
  chunkStarts(): Uint32Array {
    return Uint32Array.from(this.starts);
  }

  timelineEntries(): { at: number; firstPos: number }[] {
    return this.timeline.slice();
  }
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
