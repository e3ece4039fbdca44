/**
 * Where both adapters keep the item bodies of a staged snapshot while its
 * records are compared and ordered: a temporary file, appended as records
 * arrive (the bulk of the bytes, written once and read once, and only read
 * when the snapshot is laid out). The database stages only a small index row
 * per record (id, hash, time, `off`, `len`). On PostgreSQL this keeps ~4 KB a
 * customer off the wire and out of a TEMP table, twice (in, and back in list
 * order). A re-import stages only the bodies of new and changed records
 * (previous-records.ts): one that changes nothing writes none.
 */
import { closeSync, readSync } from 'node:fs';
import { openScratchFile, writeAll } from './scratch-file.js';

/** Bodies are appended to the file through a buffer this large. */
const WRITE_BUFFER_BYTES = 4 * 1024 * 1024;

/** Where a body is in the file. */
export interface BodyRef {
  off: number;
  len: number;
}

export class BodyFile {
  private readonly fd: number;
  private readonly out = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private outLen = 0;
  /** Bytes of bodies written to the file so far (the file offset of the buffer's start). */
  private fileLen = 0;
  private appended = 0;

  /** Creates the file in `dir` (where space was provisioned for it). */
  constructor(dir: string, label: string) {
    this.fd = openScratchFile(dir, `stage-${label}`);
  }

  /** Appends a body; returns its offset. */
  append(body: Uint8Array): number {
    const off = this.fileLen + this.outLen;
    this.appended++;
    if (this.outLen + body.length > this.out.length) this.flush();
    if (body.length > this.out.length) {
      writeAll(this.fd, body, this.fileLen);
      this.fileLen += body.length;
      return off;
    }
    this.out.set(body, this.outLen);
    this.outLen += body.length;
    return off;
  }

  /** Bodies appended so far. */
  get count(): number {
    return this.appended;
  }

  /** Writes what is buffered: call before reading. */
  flush(): void {
    if (this.outLen === 0) return;
    writeAll(this.fd, this.out.subarray(0, this.outLen), this.fileLen);
    this.fileLen += this.outLen;
    this.outLen = 0;
  }

  /**
   * The bodies of `refs`, in their order: runs of adjacent bodies (a file
   * appended in list order) in one read each.
   */
  read(refs: readonly BodyRef[]): Buffer[] {
    this.flush();
    const out: Buffer[] = new Array(refs.length);
    for (let i = 0; i < refs.length; ) {
      let j = i + 1;
      while (j < refs.length && refs[j]!.off === refs[j - 1]!.off + refs[j - 1]!.len) j++;
      const start = refs[i]!.off;
      const last = refs[j - 1]!;
      const bytes = Buffer.allocUnsafe(last.off + last.len - start);
      for (let read = 0; read < bytes.length; ) {
        const n = readSync(this.fd, bytes, read, bytes.length - read, start + read);
        if (n === 0) throw new Error('staged bodies are shorter than their index');
        read += n;
      }
      for (let k = i; k < j; k++) out[k] = bytes.subarray(refs[k]!.off - start, refs[k]!.off - start + refs[k]!.len);
      i = j;
    }
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}
