/**
 * The processes a process has started, read from /proc (Linux): each of its
 * threads lists the children it forked. Shared by tests and benchmarks that
 * look at a server's import process.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The pids of `pid`'s children; none if `pid` has exited. */
export function childPids(pid: number): number[] {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // gone
  }
  const pids: number[] = [];
  for (const tid of threads) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (child.trim()) pids.push(Number(child));
    } catch {
      // the thread ended meanwhile
    }
  }
  return pids;
}
