/**
 * Why an import failed. Every failure of reading or mapping a CSV file is an
 * `ImportError` with a stable `code` (for scripts and the report), a message
 * that is a plain English sentence naming the problem, and the 1-based
 * physical line of the file where it was found, when there is one.
 */

/** Every code an `ImportError` can carry, with what it means (for the README). */
export const IMPORT_ERROR_CODES = {
  empty_file: 'The file holds no header line.',
  undecodable: 'Bytes that cannot be read as text in the detected encoding (or NUL bytes).',
  mixed_encodings: 'UTF-8 text and bytes that are not UTF-8 in one file; the message names the first line that is not UTF-8.',
  undefined_byte: 'A byte that Windows-1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90 or 0x9D) in a file that is not UTF-8.',
  bad_header: 'An empty or duplicate column name, or no line break after an overlong first line.',
  bad_quote: 'A quoted cell that is not closed, or has text after its closing quote.',
  ragged_row: 'A row with more or fewer cells than the header (or a blank line followed by rows).',
  cell_too_large: 'A cell longer than the configured limit (1 MiB by default).',
  too_many_columns: 'More columns than the configured limit (10,000 by default).',
  no_id_column: 'No column can serve as id_erp.',
  empty_id: 'A row whose id_erp cell is empty.',
  wrong_kind: 'No column maps to any highlighted field besides id_erp: probably the export of another kind.',
  bad_mapping: 'The company\'s mapping names a column that is not in the file, or a field the kind does not have.',
} as const;

export type ImportErrorCode = keyof typeof IMPORT_ERROR_CODES;

export class ImportError extends Error {
  override readonly name = 'ImportError';

  constructor(
    readonly code: ImportErrorCode,
    message: string,
    /** 1-based physical line of the file, when the problem has one. */
    readonly line?: number,
  ) {
    super(message);
  }
}

/** Quotes a name for a message: `"01_NOMBRE"`. */
export function quoteName(name: string): string {
  return JSON.stringify(name);
}

/** `a, b and c` (at most `max` items, then `and N more`). */
export function listNames(names: readonly string[], max = 20): string {
  const shown = names.slice(0, max).map(quoteName);
  const more = names.length - shown.length;
  if (more > 0) return `${shown.join(', ')} and ${more} more`;
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}
