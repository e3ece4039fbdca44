/**
 * Where each record of one snapshot sits, and its hash, in a compact table:
 * what a detail or a 304 needs before any item byte. Read once per snapshot
 * from the store's records (`Store.readRecordPage`) by the read path, which
 * keeps it in its chunk cache (CHUNK_CACHE_MB) and drops it like a chunk.
 *
 * About 50 bytes a record (an id of ~8 characters, its position, a 16-byte
 * hash, up to three slots of the hash table), against ~250 for an entry of a
 * Map of RecordRefs: 100,000 customers take 4.8 MiB. The ids are one string, looked up
 * through an open-addressing table of FNV-1a hashes of their UTF-16 code
 * units, so a lookup allocates nothing.
 *
 * @example
 * const index = RecordIndex.build(rows);
 * const k = index.find('C0000042');
 * if (k >= 0) serve(index.position(k), index.hash(k));
 */

import { fnv1a } from '../domain/text-hash.js';

/** A record as the index needs it. */
export interface RecordRow {
  idErp: string;
  pos: number;
  hash: Buffer;
}

export class RecordIndex {
  private constructor(
    /** Every id, back to back; record k's is ids[idStarts[k], idStarts[k + 1]). */
    private readonly ids: string,
    private readonly idStarts: Uint32Array,
    private readonly positions: Uint32Array,
    /** Record k's hash is hashes[k × hashLength, (k + 1) × hashLength). */
    private readonly hashes: Buffer,
    private readonly hashLength: number,
    /** k + 1 of the record whose id hashes here (probing linearly), 0 where empty. */
    private readonly slots: Int32Array,
  ) {}

  /** An index of these records (any order; every hash of the same length). */
  static build(rows: readonly RecordRow[]): RecordIndex {
    const builder = new RecordIndexBuilder(rows.length);
    builder.add(rows);
    return builder.finish();
  }

  /** @internal RecordIndexBuilder's. */
  static of(ids: string, idStarts: Uint32Array, positions: Uint32Array, hashes: Buffer, hashLength: number): RecordIndex {
    const n = positions.length;
    // A power of two with at least a third of the slots free: short probes.
    let size = 8;
    while (size < n * 1.5) size *= 2;
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let k = 0; k < n; k++) {
      let s = fnv1a(ids, idStarts[k]!, idStarts[k + 1]!) & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = k + 1;
    }
    return new RecordIndex(ids, idStarts, positions, hashes, hashLength, slots);
  }

  /** How many records. */
  get count(): number {
    return this.positions.length;
  }

  /** Bytes held (the id string counted at two bytes a character, its worst case). */
  get byteLength(): number {
    return this.ids.length * 2 + this.idStarts.byteLength + this.positions.byteLength + this.hashes.length + this.slots.byteLength;
  }

  /** The record with this id, as an index for `position` and `hash`; -1 when the snapshot has none. */
  find(idErp: string): number {
    const mask = this.slots.length - 1;
    const length = idErp.length;
    for (let s = fnv1a(idErp) & mask; ; s = (s + 1) & mask) {
      const k = this.slots[s]! - 1;
      if (k < 0) return -1;
      const start = this.idStarts[k]!;
      if (this.idStarts[k + 1]! - start === length && this.ids.startsWith(idErp, start)) return k;
    }
  }

  position(k: number): number {
    return this.positions[k]!;
  }

  /** A view of record k's hash (no copy). */
  hash(k: number): Buffer {
    return this.hashes.subarray(k * this.hashLength, (k + 1) * this.hashLength);
  }
}

/**
 * Builds a RecordIndex from rows given a page at a time (Store.readRecordPage's),
 * keeping of each page only its ids, joined, and its positions and hashes in
 * the index's own arrays. The read path loads an index over several turns of
 * the event loop: holding every row object until the end (100,000 of them,
 * each with a Buffer of its own) got them promoted to V8's old generation, to
 * die there when the next import replaced the snapshot.
 */
export class RecordIndexBuilder {
  private readonly idStarts: Uint32Array;
  private readonly positions: Uint32Array;
  private hashes: Buffer | null = null;
  private hashLength = 0;
  private readonly parts: string[] = [];
  private n = 0;
  private at = 0;

  /** `capacity`: how many records the index will have at most. */
  constructor(readonly capacity: number) {
    this.idStarts = new Uint32Array(capacity + 1);
    this.positions = new Uint32Array(capacity);
  }

  /** Records added so far. */
  get size(): number {
    return this.n;
  }

  /** Adds `rows`; false, adding none, when they would pass the capacity. */
  add(rows: readonly RecordRow[]): boolean {
    if (this.n + rows.length > this.capacity) return false;
    if (rows.length === 0) return true;
    if (!this.hashes) {
      this.hashLength = rows[0]!.hash.length;
      // Memory of its own: kept in a cache, a slice of Node's shared pool would keep the whole slab alive.
      this.hashes = Buffer.allocUnsafeSlow(this.capacity * this.hashLength);
    }
    const ids = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (r.hash.length !== this.hashLength) throw new Error('record hashes of different lengths in one snapshot');
      const k = this.n + i;
      this.idStarts[k] = this.at;
      this.at += r.idErp.length;
      ids[i] = r.idErp;
      this.positions[k] = r.pos;
      r.hash.copy(this.hashes, k * this.hashLength);
    }
    this.parts.push(ids.join(''));
    this.n += rows.length;
    return true;
  }

  finish(): RecordIndex {
    const n = this.n;
    this.idStarts[n] = this.at;
    const hashes = this.hashes ? this.hashes.subarray(0, n * this.hashLength) : Buffer.alloc(0);
    return RecordIndex.of(this.parts.join(''), this.idStarts.subarray(0, n + 1), this.positions.subarray(0, n), hashes, this.hashLength);
  }
}
