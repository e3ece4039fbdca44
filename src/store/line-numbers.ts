/**
 * Source line numbers of the records a first import wrote in order, should
 * they have to be staged after all (both adapters): 4 bytes each, where a JS
 * array of numbers takes 8 and more.
 */
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
