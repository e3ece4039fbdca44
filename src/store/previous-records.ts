/**
 * A re-import stages the bodies of its changed and new records only (issue
 * 23). A nightly re-export changes a few hundred of 100,000 records; staging
 * every body wrote the whole file again (360 MB for 100,000 customers) to
 * read back the few that are laid out anew. So each record is compared with
 * the previous snapshot as it arrives (`PreviousRecords`), and one that comes
 * back with the same hash is staged without its body (`UNSTAGED`): when the
 * layout needs it (its chunk lost other records), it is read from the
 * previous snapshot's chunk (`PreviousItems`), where it is the same bytes.
 *
 * The SQLite adapter uses it, reading synchronously. PostgreSQL stages every
 * body: there the comparison's reads cost more than the writes they save
 * (postgres-snapshot-writer.ts).
 */
import { utf8Before } from '../domain/item-renderer.js';
import { itemBody } from './chunk-builder.js';
import type { MapEntry, OrderedRow } from './chunk-reuse.js';

/** `off` of a staged record whose body was not staged: it is the previous snapshot's item at `prevPos`. */
export const UNSTAGED = -1;

/** A record of the previous snapshot: its id and hash (the stage finds its position and time in SQL). */
export interface PreviousRecord {
  idErp: string;
  hash: Buffer;
}

/** How an adapter reads the previous snapshot's records. */
export interface PreviousRecordReader {
  /** Up to `limit` records whose ids come after `after` (from the first when null), in id byte order. */
  after(after: string | null, limit: number): PreviousRecord[];
  /** The records with these ids, in any order; ids it does not hold are left out. */
  byIds(ids: readonly string[]): PreviousRecord[];
}

/** Records read per page of the merge. */
const PAGE = 2000;

/**
 * Finds, for each arriving record, the previous snapshot's record with the
 * same id and hash. ERP exports usually come in id order: then the previous
 * records are read once, in pages, merged with the arrivals. An id that
 * breaks the order is looked up by id, with the others of its batch.
 */
export class PreviousRecords {
  private page: PreviousRecord[] = [];
  private at = 0;
  private exhausted = false;
  private lastArrived: string | null = null;

  constructor(private readonly reader: PreviousRecordReader) {}

  /** For each record of `batch`, its previous record when it is unchanged; else undefined. */
  unchanged(batch: readonly { idErp: string; hash: Buffer }[]): (PreviousRecord | undefined)[] {
    const out: (PreviousRecord | undefined)[] = new Array(batch.length);
    const stray: number[] = [];
    for (let k = 0; k < batch.length; k++) {
      const id = batch[k]!.idErp;
      if (this.lastArrived !== null && !utf8Before(this.lastArrived, id)) {
        stray.push(k);
        continue;
      }
      this.lastArrived = id;
      let found: PreviousRecord | undefined;
      for (;;) {
        const page = this.page;
        while (this.at < page.length && utf8Before(page[this.at]!.idErp, id)) this.at++;
        if (this.at < page.length || this.exhausted) {
          found = page[this.at]?.idErp === id ? page[this.at] : undefined;
          break;
        }
        this.page = this.reader.after(page.length > 0 ? page[page.length - 1]!.idErp : null, PAGE);
        this.at = 0;
        this.exhausted = this.page.length < PAGE;
      }
      if (found && found.hash.equals(batch[k]!.hash)) out[k] = found;
    }
    if (stray.length > 0) {
      const byId = new Map(this.reader.byIds(stray.map((k) => batch[k]!.idErp)).map((r) => [r.idErp, r]));
      for (const k of stray) {
        const found = byId.get(batch[k]!.idErp);
        if (found && found.hash.equals(batch[k]!.hash)) out[k] = found;
      }
    }
    return out;
  }
}

/** A stored chunk's items, as both adapters keep them. */
export interface StoredChunk {
  offsets: Uint32Array;
  bytes: Buffer;
}

/** A stored chunk: the snapshot that wrote it and its number there. */
export interface ChunkRef {
  snapshot: number;
  chunk: number;
}

/**
 * Where the previous snapshot's items are: the chunk holding each position
 * (its chunk starts), and the stored chunk behind each (its map, which may
 * name a chunk an older snapshot wrote).
 */
export class PreviousItems {
  constructor(
    private readonly starts: Uint32Array,
    private readonly map: readonly MapEntry[],
  ) {}

  /** Whether the map covers every chunk (it always should): only then can bodies be left unstaged. */
  get complete(): boolean {
    return this.map.length === this.starts.length;
  }

  /**
   * The bodies of `rows`: staged ones from the stage (`staged`), the others
   * from the previous snapshot's chunks (`read`, each chunk once).
   */
  bodies(
    rows: readonly OrderedRow[],
    staged: (rows: readonly OrderedRow[]) => Buffer[],
    read: (refs: readonly ChunkRef[]) => Map<string, StoredChunk>,
  ): Buffer[] {
    const inStage = rows.filter((r) => r.off !== UNSTAGED);
    const fromStage = inStage.length > 0 ? staged(inStage) : [];
    if (inStage.length === rows.length) return fromStage;
    const where = rows.map((r) => (r.off === UNSTAGED ? this.chunkOf(r) : -1));
    const refs = new Map<string, ChunkRef>();
    for (const k of where) if (k >= 0) refs.set(refKey(this.source(k)), this.source(k));
    const chunks = read([...refs.values()]);
    const out: Buffer[] = new Array(rows.length);
    let s = 0;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (row.off !== UNSTAGED) {
        out[i] = fromStage[s++]!;
        continue;
      }
      const chunk = chunks.get(refKey(this.source(where[i]!)));
      if (!chunk) throw new Error(`previous chunk ${where[i]} of ${row.idErp} is missing`);
      out[i] = itemBody(chunk.offsets, chunk.bytes, row.prevPos! - this.map[where[i]!]!.firstPos, row.ts);
    }
    return out;
  }

  private source(k: number): ChunkRef {
    const e = this.map[k]!;
    return { snapshot: e.srcSnapshot, chunk: e.srcChunk };
  }

  /** The previous chunk holding an unstaged row's item. */
  private chunkOf(row: OrderedRow): number {
    const pos = row.prevPos;
    if (pos === null) throw new Error(`record ${row.idErp} was staged without its body but is not unchanged`);
    const starts = this.starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

export function refKey(ref: ChunkRef): string {
  return `${ref.snapshot}:${ref.chunk}`;
}
