/**
 * The temporary file behind an index build in runs (index-runs.ts): runs
 * appended through a buffer and read back in order through small buffers,
 * and the sections of a merged blob, each written at its own place and read
 * back as the blob's parts. Unlinked at once, so that a crash leaves nothing
 * behind; closed when the build ends.
 */
import { closeSync, readSync } from 'node:fs';
import { openScratchFile, writeAll } from './scratch-file.js';

const WRITE_BUFFER_BYTES = 1024 * 1024;
const READ_BUFFER_BYTES = 64 * 1024;

/** Where one index's run is in the file, and its sizes (their sums bound the merged blob). */
export interface RunRef {
  from: number;
  to: number;
  /** Groups (posting runs) or values (range runs). */
  count: number;
  postings: number;
  dictBytes: number;
}

/** The runs' file. */
export class RunFile {
  private readonly fd: number;
  /** Runs are appended here, from the file's start. */
  readonly runs: SectionWriter;
  private closed = false;

  constructor(dir: string) {
    this.fd = openScratchFile(dir, 'index-runs');
    this.runs = new SectionWriter(this.fd, 0, WRITE_BUFFER_BYTES);
  }

  reader(ref: RunRef): RunReader {
    this.runs.flush();
    return new RunReader(this.fd, ref.from, ref.to);
  }

  /**
   * Sections of a merged blob, each with room for `sizes[i]` bytes, past
   * every run: the same place for every merge, so a merge's parts must all
   * be read before the next one starts.
   */
  sections(sizes: readonly number[]): SectionWriter[] {
    this.runs.flush();
    let at = this.runs.length;
    return sizes.map((size) => {
      const w = new SectionWriter(this.fd, at, READ_BUFFER_BYTES);
      at += size;
      return w;
    });
  }

  /** See `blobParts`. */
  parts(header: Buffer, sections: readonly SectionWriter[], partBytes: number): Generator<Buffer> {
    return blobParts(this.fd, header, sections, partBytes);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

/** Reads one run in order, through a small buffer. */
export class RunReader {
  buf = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  at = 0;
  end = 0;

  constructor(
    private readonly fd: number,
    private pos: number,
    private readonly limit: number,
  ) {}

  get done(): boolean {
    return this.at === this.end && this.pos === this.limit;
  }

  /** Makes `n` bytes readable at `at`. */
  private need(n: number) {
    if (this.end - this.at >= n) return;
    if (n > this.buf.length) {
      const next = Buffer.allocUnsafe(n);
      this.buf.copy(next, 0, this.at, this.end);
      this.buf = next;
    } else this.buf.copy(this.buf, 0, this.at, this.end);
    this.end -= this.at;
    this.at = 0;
    while (this.end < n) {
      const want = Math.min(this.buf.length - this.end, this.limit - this.pos);
      const got = want > 0 ? readSync(this.fd, this.buf, this.end, want, this.pos) : 0;
      if (got === 0) throw new Error('an index run is shorter than written');
      this.end += got;
      this.pos += got;
    }
  }

  u32(): number {
    this.need(4);
    const x = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return x;
  }

  f64(): number {
    this.need(8);
    const x = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return x;
  }

  /** Passes the next `n` bytes, and says where they start in `buf` (valid until this reader is read again). */
  skip(n: number): number {
    this.need(n);
    this.at += n;
    return this.at - n;
  }

  /** Moves the next `n` bytes to `out`, however many they are. */
  pipeTo(out: SectionWriter, n: number): void {
    for (let left = n; left > 0; ) {
      const step = Math.min(left, this.buf.length);
      this.need(step);
      out.bytes(this.buf, this.at, this.at + step);
      this.at += step;
      left -= step;
    }
  }
}

/** Bytes copied by a loop rather than by `set` (see `SectionWriter.bytes`). */
const SHORT_COPY_BYTES = 32;

/**
 * Bytes written from `base` on, through a buffer: the runs, and each section
 * of a merged blob (its hashes, key starts, postings…) at its own place in
 * the file, sections growing side by side during a merge, each within room
 * for the most it can hold.
 */
export class SectionWriter {
  private readonly out: Buffer;
  private outLen = 0;
  /** Bytes written, buffered or not. */
  length = 0;

  constructor(
    private readonly fd: number,
    readonly base: number,
    bufferBytes: number,
  ) {
    this.out = Buffer.allocUnsafe(bufferBytes);
  }

  private room(n: number) {
    if (this.outLen + n > this.out.length) this.flush();
  }

  u32(x: number): void {
    this.room(4);
    this.out.writeUInt32LE(x, this.outLen);
    this.outLen += 4;
    this.length += 4;
  }

  f64(x: number): void {
    this.room(8);
    this.out.writeDoubleLE(x, this.outLen);
    this.outLen += 8;
    this.length += 8;
  }

  bytes(src: Uint8Array, from: number, to: number): void {
    const n = to - from;
    if (n > this.out.length) {
      this.flush();
      writeAll(this.fd, src.subarray(from, to), this.base + this.length);
    } else {
      this.room(n);
      // Most are keys and postings of a few bytes: a loop, where a view and a native copy cost more.
      if (n <= SHORT_COPY_BYTES) for (let i = 0; i < n; i++) this.out[this.outLen + i] = src[from + i]!;
      else this.out.set(src.subarray(from, to), this.outLen);
      this.outLen += n;
    }
    this.length += n;
  }

  flush(): void {
    if (this.outLen === 0) return;
    writeAll(this.fd, this.out.subarray(0, this.outLen), this.base + this.length - this.outLen);
    this.outLen = 0;
  }
}

/**
 * A merged blob's parts: its header, then its sections' bytes, read back in
 * pieces of `partBytes` (the last one shorter).
 */
function* blobParts(fd: number, header: Buffer, sections: readonly SectionWriter[], partBytes: number): Generator<Buffer> {
  for (const s of sections) s.flush();
  let part = Buffer.allocUnsafe(partBytes);
  let len = header.copy(part, 0);
  for (const s of sections) {
    for (let done = 0; done < s.length; ) {
      if (len === partBytes) {
        yield part;
        part = Buffer.allocUnsafe(partBytes);
        len = 0;
      }
      const want = Math.min(partBytes - len, s.length - done);
      const got = readSync(fd, part, len, want, s.base + done);
      if (got === 0) throw new Error('a merged index is shorter than written');
      len += got;
      done += got;
    }
  }
  yield part.subarray(0, len);
}
