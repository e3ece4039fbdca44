/** The report of one import, as the CLI prints it, the panel shows it and the store keeps it. */
import type { ImportWarning } from './normalise.js';

export interface ImportReport {
  import_id: number;
  kind: string;
  filename: string;
  status: 'succeeded' | 'failed' | 'awaiting_confirmation';
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
  warnings: { count: number; items: ImportWarning[] };
  bytes: number;
  duration_ms: number;
  error: { code: string; message: string; line: number | null } | null;
}
