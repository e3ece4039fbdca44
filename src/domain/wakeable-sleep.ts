/**
 * The pause between two rounds of a polling loop (the import worker, the
 * webhook deliveries), cut short by `wake()`. A wake-up that arrives while the
 * loop is busy, not sleeping, is kept: the next `sleep` returns at once, so
 * work announced during a round is never left for a whole poll interval.
 */
export class WakeableSleep {
  private cut: (() => void) | null = null;
  private pending = false;

  wake(): void {
    this.pending = true;
    this.cut?.();
  }

  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        this.cut = null;
        this.pending = false;
        resolve();
      };
      timer = setTimeout(done, ms);
      this.cut = done;
    });
  }
}
