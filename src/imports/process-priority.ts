/**
 * Lowers the scheduling priority of the import process (Linux), so that it
 * gives way to the process answering HTTP: on a machine with as many busy
 * threads as cores, reads keep their latency while an import runs. Linux
 * keeps a nice value per thread (`setpriority` given a thread id applies to
 * that thread alone) and a new thread inherits its creator's. Elsewhere, a
 * no-op.
 */
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Nice value of import threads (0 is normal, 19 the lowest). */
const IMPORT_NICE = 10;

/**
 * Every thread of this process, and so the threads they start later: Node
 * starts its own (V8's, libuv's) before any of our code runs, so lowering the
 * main thread alone would miss them.
 */
export function lowerProcessPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), IMPORT_NICE);
  } catch {
    // Not permitted, or no /proc: the import runs at normal priority.
  }
}
