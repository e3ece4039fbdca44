/**
 * The one way records enter Mirador: render each row once, hash it, and hand
 * the rendered rows to the store's snapshot writer. The CSV importer renders
 * its rows with `BatchRenderer` (in its parsing thread, see
 * imports/upload-rows.ts) and hashes them with `stageBatch`, unless that
 * thread had time to (`hashBatch`, see imports/upload-thread.ts); tests that need
 * data without a CSV file call `writeRecords`.
 */
import { HASH_BYTES, hashBody, ItemRenderer, type FieldValue, type HashAlgorithm } from '../domain/item-renderer.js';
import type { Kind } from '../domain/kinds.js';
import type { SnapshotSpec, StagedRecord, StagedSnapshot, Store } from '../store/store.js';

export interface RecordInput {
  /** One value per highlighted field of the kind, `id_erp` first. */
  fields: readonly FieldValue[];
  /** One cell per column, exactly as in the file. */
  cells: readonly string[];
  /** Source line, for error messages. */
  line: number;
}

export interface WriteTarget {
  companyId: number;
  kind: Kind;
  columns: readonly string[];
  /** The import's time; defaults to now. */
  at?: number;
  importId?: number | null;
}

/**
 * A batch of rendered rows: the bodies back to back in `bytes` (body k is
 * `bytes[ends[k-1] .. ends[k])`), with their ids and source lines. Plain data:
 * it crosses threads as is (`bytes.buffer` transferred).
 */
export interface RenderedBatch {
  bytes: Uint8Array;
  ends: Uint32Array;
  ids: string[];
  lines: Uint32Array;
  /** Each body's hash, 16 bytes after 16 bytes, when whoever rendered the batch also hashed it (see hashBatch). */
  hashes?: Uint8Array;
}

/**
 * Renders rows into one batch, a few at a time: a caller that parses rows
 * can render each handful as soon as it is parsed, so that their cells die
 * young (the bodies go to the renderer's own memory, not the JS heap), and
 * hand on batches of many rows.
 */
export class BatchRenderer {
  private ends: number[] = [];
  private lines: number[] = [];
  private ids: string[] = [];

  constructor(private readonly renderer: ItemRenderer) {}

  /** Rows rendered since the last `take`. */
  get count(): number {
    return this.ids.length;
  }

  add(rows: readonly RecordInput[]): void {
    for (const r of rows) {
      this.renderer.write(r.fields, r.cells);
      this.rendered(r.fields, r.line);
    }
  }

  /** Renders one row whose cells are bytes of the file (see ItemRenderer.writeRaw). */
  addRaw(fields: readonly FieldValue[], line: number, src: Uint8Array, bounds: Int32Array, first: number, high: Uint8Array | null): void {
    this.renderer.writeRaw(fields, src, bounds, first, high);
    this.rendered(fields, line);
  }

  /** Notes the row the renderer has just written: where its body ends, its line and its id. */
  private rendered(fields: readonly FieldValue[], line: number): void {
    this.ends.push(this.renderer.length);
    this.lines.push(line);
    this.ids.push(String(fields[0]));
  }

  /** The rows rendered since the last `take`, as one batch. */
  take(): RenderedBatch {
    const batch = { bytes: this.renderer.take(), ends: Uint32Array.from(this.ends), ids: this.ids, lines: Uint32Array.from(this.lines) };
    this.ends = [];
    this.lines = [];
    this.ids = [];
    return batch;
  }
}

/** Renders rows into one batch. */
export function renderBatch(renderer: ItemRenderer, rows: readonly RecordInput[]): RenderedBatch {
  const batch = new BatchRenderer(renderer);
  batch.add(rows);
  return batch.take();
}

/**
 * The hash of each body of a batch, back to back. Either thread of an
 * import may do it (upload-thread.ts): the result is the same.
 */
export function hashBatch(batch: RenderedBatch, algorithm: HashAlgorithm): Uint8Array {
  const n = batch.ids.length;
  const out = new Uint8Array(HASH_BYTES * n);
  const all = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength);
  let from = 0;
  for (let k = 0; k < n; k++) {
    const to = batch.ends[k]!;
    out.set(hashBody(all.subarray(from, to), algorithm), HASH_BYTES * k);
    from = to;
  }
  return out;
}

/**
 * The records of a rendered batch, hashed with `algorithm` unless they were
 * (with the same one), as the store's snapshot writer takes them.
 */
export function stageBatch(batch: RenderedBatch, algorithm: HashAlgorithm): StagedRecord[] {
  const all = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength);
  const given = batch.hashes ?? hashBatch(batch, algorithm);
  const hashes = Buffer.from(given.buffer, given.byteOffset, given.byteLength);
  const out: StagedRecord[] = new Array(batch.ids.length);
  let from = 0;
  for (let k = 0; k < batch.ids.length; k++) {
    const to = batch.ends[k]!;
    out[k] = { idErp: batch.ids[k]!, hash: hashes.subarray(HASH_BYTES * k, HASH_BYTES * (k + 1)), body: all.subarray(from, to), line: batch.lines[k]! };
    from = to;
  }
  return out;
}

type Batches = AsyncIterable<readonly RecordInput[]> | Iterable<readonly RecordInput[]>;

/** Renders and stages rows as a new, unpublished snapshot. */
export async function writeRecords(store: Store, target: WriteTarget, batches: Batches): Promise<StagedSnapshot> {
  const renderer = new ItemRenderer(target.kind, target.columns);
  const hashAlgorithm = await store.nextHashAlgorithm(target.companyId, target.kind);
  async function* staged(): AsyncGenerator<StagedRecord[]> {
    for await (const batch of batches) yield stageBatch(renderBatch(renderer, batch), hashAlgorithm);
  }
  return store.writeSnapshot(snapshotSpec(target, hashAlgorithm), staged());
}

export function snapshotSpec(target: WriteTarget, hashAlgorithm: HashAlgorithm): SnapshotSpec {
  return {
    companyId: target.companyId,
    kind: target.kind,
    importId: target.importId ?? null,
    at: Math.floor(target.at ?? Date.now()),
    columns: target.columns,
    hashAlgorithm,
  };
}

/** Writes rows and makes them live at once: what tests use to load data. */
export async function replaceRecords(store: Store, target: WriteTarget, rows: readonly RecordInput[]): Promise<StagedSnapshot> {
  const staged = await writeRecords(store, target, [rows]);
  await store.publishSnapshot(staged.snapshotId);
  return staged;
}
