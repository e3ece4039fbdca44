/** The report of one import, as the CLI prints it, the panel shows it and the store keeps it. */
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
  /** Some of the removed records' id_erp (up to 5). */
  deleted_examples: string[];
  /** Set when the mass-deletion guard held the import. */
  guard: { would_remove: number; of: number; min_records: number; max_fraction: number } | null;
  warnings: { count: number; items: ImportWarning[] };
  bytes: number;
  duration_ms: number;
  error: { code: string; message: string; line: number | null } | null;
}
