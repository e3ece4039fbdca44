/**
 * An import's scratch files (staged bodies, index runs): created in `dir`,
 * where space was provisioned for them, and unlinked at once, so that the
 * file lives as long as its descriptor and a crash leaves nothing behind.
 */
import { openSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';

/** Where an import into the SQLite database at `dbPath` keeps its scratch files: beside it (the system's temporary directory for one in memory). */
export function scratchDirBeside(dbPath: string): string {
  return dbPath === ':memory:' || dbPath === '' ? tmpdir() : dirname(dbPath);
}

/** Opens a new scratch file for reading and writing; returns its descriptor. */
export function openScratchFile(dir: string, label: string): number {
  const path = `${dir}/.mirador-${label}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = openSync(path, 'w+', 0o600);
  unlinkSync(path);
  return fd;
}

/** Writes all of `bytes` at `position`. */
export function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}
