/**
 * The one way records enter Mirador: render each row once, hash it, and hand
 * the rendered rows to the store's snapshot writer. The CSV importer calls
 * this; so do tests that need data without a CSV file.
 */
import { hashBody, ItemRenderer, type FieldValue } from '../domain/item-renderer.js';
import type { Kind } from '../domain/kinds.js';
import type { StagedRecord, StagedSnapshot, Store } from '../store/store.js';

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

type Batches = AsyncIterable<readonly RecordInput[]> | Iterable<readonly RecordInput[]>;

/** Renders and stages rows as a new, unpublished snapshot. */
export async function writeRecords(store: Store, target: WriteTarget, batches: Batches): Promise<StagedSnapshot> {
  const renderer = new ItemRenderer(target.kind, target.columns);
  async function* staged(): AsyncGenerator<StagedRecord[]> {
    for await (const batch of batches) {
      yield batch.map((r) => {
        const body = renderer.body(r.fields, r.cells);
        return { idErp: String(r.fields[0]), hash: hashBody(body), body, line: r.line };
      });
    }
  }
  return store.writeSnapshot(
    {
      companyId: target.companyId,
      kind: target.kind,
      importId: target.importId ?? null,
      at: Math.floor(target.at ?? Date.now()),
      columns: target.columns,
    },
    staged(),
  );
}

/** Writes rows and makes them live at once: what tests use to load data. */
export async function replaceRecords(store: Store, target: WriteTarget, rows: readonly RecordInput[]): Promise<StagedSnapshot> {
  const staged = await writeRecords(store, target, [rows]);
  await store.publishSnapshot(staged.snapshotId);
  return staged;
}
