/**
 * A Map whose entries leave by CLOCK (second chance) over its insertion
 * order: the process's caches that keep what is asked for most (the chunk
 * cache, snapshot metas, compressed bodies, a store's record positions).
 *
 * Why not strict LRU over a Map, moving an entry to the end on every hit (a
 * delete and a set): a cache lives long, so its Map's hash table is in V8's
 * old generation, and V8 allocates the table a rehash makes in the generation
 * of the one it replaces. A delete and a set leave a hole that a rehash
 * clears every few hits, so each hit left old-generation garbage that only a
 * full collection frees. Measured on warm details (the metas' cache did it
 * per request): 270 of the 380 bytes promoted a request, and a full
 * collection every few seconds (docs/performance.md, "Garbage in the old
 * generation"). Here a hit only sets a flag.
 *
 * @example
 * const cache = new ClockMap<string, Buffer>();
 * cache.set('a', bytes);
 * cache.get('a'); // marked as used: the next pass gives it a second chance
 * while (tooLarge()) cache.evict();
 */
interface Slot<V> {
  value: V;
  used: boolean;
}

export class ClockMap<K, V> {
  private readonly slots = new Map<K, Slot<V>>();

  get size(): number {
    return this.slots.size;
  }

  /** The value under `key`, marked as used. */
  get(key: K): V | undefined {
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    slot.used = true;
    return slot.value;
  }

  /** The value under `key`, not counted as a use. */
  peek(key: K): V | undefined {
    return this.slots.get(key)?.value;
  }

  has(key: K): boolean {
    return this.slots.has(key);
  }

  /** Puts `value` under `key`: a new key goes last, not yet used; a key held keeps its place and mark. */
  set(key: K, value: V): void {
    const slot = this.slots.get(key);
    if (slot) slot.value = value;
    else this.slots.set(key, { value, used: false });
  }

  delete(key: K): boolean {
    return this.slots.delete(key);
  }

  /**
   * Takes out the entry CLOCK evicts next and returns it: the first in order
   * not used since a pass last went over it. A used one passed over goes last,
   * unmarked, so a pass ends. Undefined when empty.
   */
  evict(): [K, V] | undefined {
    for (;;) {
      const first = this.slots.entries().next();
      if (first.done) return undefined;
      const [key, slot] = first.value;
      this.slots.delete(key);
      if (!slot.used) return [key, slot.value];
      slot.used = false;
      this.slots.set(key, slot);
    }
  }

  /** The keys, in the order a pass goes over them. */
  keys(): IterableIterator<K> {
    return this.slots.keys();
  }
}
