/**
 * Highlighted field values from a row's cells (contract §1.2, §2): strings
 * trimmed, empty → null; `precio` a number, `fecha` `YYYY-MM-DD`. A cell that
 * cannot be read leaves the field null and adds a warning; its text stays in
 * `data` untouched.
 */
import type { FieldValue } from '../domain/item-renderer.js';
import type { FieldSpec, KindSpec } from '../domain/kinds.js';
import type { ColumnMapping } from './column-mapping.js';

export interface ImportWarning {
  line: number;
  field: string;
  column: string;
  value: string;
  message: string;
}

/** Keeps the first `cap` warnings and counts them all. */
export class Warnings {
  readonly items: ImportWarning[] = [];
  total = 0;

  constructor(readonly cap = 100) {}

  add(warning: ImportWarning): void {
    this.total++;
    if (this.items.length < this.cap) this.items.push(warning);
  }
}

// Sign, then digits: plain (1234.5, 1234,5), or grouped by thousands with the
// other separator (1.234,56 / 1,234.56; several groups also without decimals).
const PLAIN = /^[+-]?(?:\d+(?:[.,]\d+)?|[.,]\d+)$/;
const GROUPED_DOT = /^[+-]?\d{1,3}(?:\.\d{3})+(?:,\d+)?$/; // 1.234,56 · 1.234.567
const GROUPED_COMMA = /^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/; // 1,234.56 · 1,234,567

/**
 * Reads a price. A single separator is the decimal one (`1234,5`, `1234.5`,
 * and so `1.234` is 1.234); with both, the last is decimal and the other must
 * group thousands. Returns null for an empty cell, undefined when unreadable.
 */
export function parsePrecio(text: string): number | null | undefined {
  const s = text.trim();
  if (s === '') return null;
  let normalised: string;
  if (PLAIN.test(s)) normalised = s.replace(',', '.');
  else if (GROUPED_DOT.test(s)) normalised = s.replace(/\./g, '').replace(',', '.');
  else if (GROUPED_COMMA.test(s)) normalised = s.replace(/,/g, '');
  else return undefined;
  const value = Number(normalised);
  if (!Number.isFinite(value)) return undefined;
  return value === 0 ? 0 : value; // no -0
}

const TIME = '(?:[T ]+(\\d{1,2}):(\\d{2})(?::(\\d{2})(?:[.,]\\d{1,9})?)?(?:Z|[+-]\\d{2}(?::?\\d{2})?)?)?';
const ISO_DATE = new RegExp(`^(\\d{4})-(\\d{1,2})-(\\d{1,2})${TIME}$`);
const DAY_FIRST = new RegExp(`^(\\d{1,2})([/.-])(\\d{1,2})\\2(\\d{4})${TIME}$`);

/**
 * Reads a date: `YYYY-MM-DD`, `DD/MM/YYYY`, `DD-MM-YYYY` or `DD.MM.YYYY`,
 * optionally followed by a time (`03/04/2024 16:15:55`, `2024-04-03T16:15:55Z`),
 * which is checked and dropped: the date is kept as written. Returns
 * `YYYY-MM-DD`, null for an empty cell, undefined when unreadable (31/02/2024
 * included).
 */
export function parseFecha(text: string): string | null | undefined {
  const s = text.trim();
  if (s === '') return null;
  let year: string, month: string, day: string, time: (string | undefined)[];
  const iso = ISO_DATE.exec(s);
  if (iso !== null) {
    [, year = '', month = '', day = '', ...time] = iso;
  } else {
    const dmy = DAY_FIRST.exec(s);
    if (dmy === null) return undefined;
    [, day = '', , month = '', year = '', ...time] = dmy;
  }
  const [hours, minutes, seconds] = time;
  if (hours !== undefined && (Number(hours) > 23 || Number(minutes) > 59 || Number(seconds ?? 0) > 59)) return undefined;
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return undefined;
  return `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * The highlighted field values of one row, in kind order.
 *
 * @example
 * const warnings = new Warnings();
 * extractFields(KIND_SPECS.articulos, mapping, row.cells, row.line, warnings);
 * // ['ART1', 'ART1', 'Taco nylon', 'M', 16.36]
 */
export function extractFields(
  spec: KindSpec,
  mapping: Pick<ColumnMapping, 'columnIndexByField' | 'sources'>,
  cells: readonly string[],
  line: number,
  warnings: Warnings,
): FieldValue[] {
  const values: FieldValue[] = [];
  const { fields } = spec;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as FieldSpec;
    const at = mapping.columnIndexByField[i] ?? -1;
    const cell = at === -1 ? undefined : cells[at];
    if (cell === undefined) {
      values.push(null);
      continue;
    }
    if (field.type === 'string') {
      const trimmed = cell.trim();
      values.push(trimmed === '' ? null : trimmed);
      continue;
    }
    const value = field.type === 'number' ? parsePrecio(cell) : parseFecha(cell);
    if (value === undefined) {
      const column = mapping.sources[field.name] ?? '';
      const expected = field.type === 'number' ? 'a number (such as 1234,56)' : 'a date (such as 31/12/2024 or 2024-12-31)';
      warnings.add({
        line,
        field: field.name,
        column,
        value: cell,
        message: `Line ${line}: ${JSON.stringify(cell)} in column ${JSON.stringify(column)} is not ${expected}; ${field.name} is left empty.`,
      });
    }
    values.push(value ?? null);
  }
  return values;
}
