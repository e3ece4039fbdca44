/**
 * Lowers the scheduling priority of the calling thread (Linux), so that the
 * import's threads give way to the thread answering HTTP in the same process:
 * on a machine with as many busy threads as cores, reads keep their latency
 * while an import runs. Linux applies `setpriority` to a single thread when
 * given its thread id, which /proc/thread-self names. Elsewhere, a no-op.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Nice value of import threads (0 is normal, 19 the lowest). */
const IMPORT_NICE = 10;

export function lowerThreadPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, IMPORT_NICE);
  } catch {
    // Not permitted or not available: the import runs at normal priority.
  }
}
