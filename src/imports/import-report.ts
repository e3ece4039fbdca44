/** The report of one import, as the CLI prints it, the panel shows it and the store keeps it. */
import type { ColumnDrift, OtherKind } from './column-guard.js';
import type { ImportWarning } from './normalise.js';

export interface ImportReport {
  import_id: number;
  kind: string;
  filename: string;
  status: 'succeeded' | 'failed' | 'awaiting_confirmation' | 'rejected';
  encoding: string | null;
  delimiter: string | null;
  columns: number;
  /** Field → column that fed it (null when none did). */
  mapping: Record<string, string | null>;
  rows_read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  /** The first removed records' id_erp, in byte order (up to 10: store's DELETED_EXAMPLES). */
  deleted_examples: string[];
  /** Set when the mass-deletion guard held the import. */
  guard: { would_remove: number; of: number; min_records: number; max_fraction: number } | null;
  /**
   * Set when the column-drift guard held the import: the kind had data and the
   * header shares fewer than half of its names with the live one.
   * (Absent from reports written before the guard existed.)
   */
  column_drift?: ColumnDrift | null;
  /** Set when the column-drift guard held the first data of a kind: the header fits another kind clearly better. */
  other_kind?: OtherKind | null;
  /**
   * True when the import succeeded without changing anything (no record
   * inserted, updated or deleted, the same columns): the live snapshot was
   * kept as it was, nothing rewritten, and its ETags stay valid.
   * (Absent from reports written before this existed.)
   */
  unchanged_snapshot?: boolean;
  /**
   * How the new snapshot's items were stored: chunks written, and chunks
   * shared with the snapshot before it because none of their records changed
   * (null when no snapshot was written). (Absent from reports written before this existed.)
   */
  chunks?: { written: number; shared: number } | null;
  warnings: { count: number; items: ImportWarning[] };
  bytes: number;
  duration_ms: number;
  error: { code: string; message: string; line: number | null } | null;
}
