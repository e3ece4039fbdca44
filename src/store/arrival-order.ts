/**
 * What both adapters need to write a first import as it streams: ids must
 * keep arriving in increasing byte order (then arrival order is list order),
 * and the source line of every record written that way is kept, should the
 * order break and the records have to be staged after all.
 */
import { utf8Before } from '../domain/item-renderer.js';

export class IncreasingIds {
  private last: string | null = null;

  /** Whether `batch` continues the increasing order; its ids count as seen only when it does. */
  continues(batch: readonly { idErp: string }[]): boolean {
    let last = this.last;
    for (const r of batch) {
      if (last !== null && !utf8Before(last, r.idErp)) return false;
      last = r.idErp;
    }
    this.last = last;
    return true;
  }
}

/** A growing list of line numbers, 4 bytes each (a JS array of numbers takes 8 and more). */
export class LineNumbers {
  private values = new Uint32Array(4096);
  private length = 0;

  push(line: number) {
    if (this.length === this.values.length) {
      const next = new Uint32Array(this.values.length * 2);
      next.set(this.values);
      this.values = next;
    }
    this.values[this.length++] = line;
  }

  at(i: number): number {
    return this.values[i]!;
  }
}
