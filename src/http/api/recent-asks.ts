/**
 * Keys asked for recently, for caches that keep something only when it is
 * asked for a second time (clock-cache.ts: an entry read twice while the cache is
 * full; gathered-blocks.ts: a filter's block asked for twice). At most `max` are
 * remembered; when full, all are forgotten at once: a bound, not a tuning
 * (forgetting only delays what a second ask would keep).
 */
export class RecentAsks<K> {
  private readonly keys = new Set<K>();

  constructor(private readonly max: number) {}

  /** Whether `key` was asked for since it was last forgotten; remembers this ask. */
  again(key: K): boolean {
    if (this.keys.has(key)) return true;
    if (this.keys.size >= this.max) this.keys.clear();
    this.keys.add(key);
    return false;
  }

  /** Whether `key` was asked for since it was last forgotten (not an ask). */
  has(key: K): boolean {
    return this.keys.has(key);
  }

  /** Forgets `key`; whether it had been asked for. */
  forget(key: K): boolean {
    return this.keys.delete(key);
  }
}
