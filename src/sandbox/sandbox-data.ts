/**
 * The sandbox dataset: fixed, fictitious records of every kind, in exactly the
 * shape of imported ones (the rows of an ERP export, their highlighted fields,
 * the time of the import that wrote them). See contract §1.10.
 *
 * Everything is generated from constant seeds with a PRNG written here (no
 * `Math.random`, clock, locale or time zone), so the dataset is the same bytes
 * on every run; test/sandbox/sandbox-data.test.ts pins its hash.
 */
import type { FieldValue } from '../domain/item-renderer.js';
import type { FieldType, Kind } from '../domain/kinds.js';
import { KIND_SPECS } from '../domain/kinds.js';
import { ARTICULOS_COUNT, generateArticulos } from './sandbox-articulos.js';
import { AVISOS_COUNT, generateAvisos } from './sandbox-avisos.js';
import { CLIENTES_COUNT, generateClientes } from './sandbox-clientes.js';
import { ARTICULOS_COLUMNS, AVISOS_COLUMNS, CLIENTES_COLUMNS, OBRAS_COLUMNS } from './sandbox-columns.js';
import type { SandboxRecord } from './sandbox-common.js';
import { utc } from './sandbox-format.js';
import { OBRAS_COUNT, generateObras } from './sandbox-obras.js';
import { SandboxRandom } from './sandbox-random.js';

export interface SandboxRow {
  /** One cell per column, as the ERP wrote it (untrimmed, `""` when empty). */
  cells: string[];
  /** One value per highlighted field of the kind, in `KIND_SPECS[kind].fields` order. */
  fields: FieldValue[];
  /** The import that created or last changed the row: ms since the epoch, UTC. */
  actualizadoAt: number;
}

export interface SandboxKindData {
  /** The export's header row. */
  columns: string[];
  rows: SandboxRow[];
}

/**
 * The imports that wrote the sandbox, oldest first: a first full load, then
 * periodic uploads that each changed some rows, and one manual upload (hence
 * the milliseconds). Several rows share each instant, as after a real import.
 */
export const SANDBOX_IMPORTS: readonly number[] = Object.freeze([
  utc(2026, 1, 15, 8, 0, 0),
  utc(2026, 3, 2, 7, 30, 0),
  utc(2026, 6, 10, 9, 15, 0),
  utc(2026, 9, 21, 6, 45, 0),
  utc(2026, 10, 5, 13, 22, 47, 381),
]);

/** Share of rows last written by each import. */
const IMPORT_WEIGHTS = [0.4, 0.2, 0.15, 0.15, 0.1] as const;

/**
 * The column each highlighted field is read from, in field order. These are
 * the columns the default mapping of `kinds.ts` picks for these headers (the
 * test checks it), so importing the sandbox as CSV gives the same items.
 */
const FIELD_COLUMNS: Readonly<Record<Kind, readonly string[]>> = {
  clientes: ['CODIGO', '01_NOMBRE_COMERCIAL', '06_CIF', 'EMAIL', 'TELEFONO', '07_DOMICILIO'],
  articulos: ['CODIGO', 'CODIGO', 'DESCRIPCION', 'UNIDAD_MEDIDA', 'PRECIO_VENTA'],
  obras: ['CODIGO', 'CODIGO', 'NOMBRE', 'DESCRIPCION', 'CLIENTE', 'ESTADO'],
  'avisos-correctivo': ['CODIGO', 'CODIGO', 'FECHA', 'CLIENTE', 'OBRA', 'DESCRIPCION', 'ESTADO', 'PRIORIDAD'],
};

/**
 * Which import wrote each of `n` rows: each import gets its share (at least
 * two rows), in an order shuffled by `seed`.
 */
function importInstants(n: number, seed: number): number[] {
  const counts = IMPORT_WEIGHTS.map((w) => Math.max(2, Math.round(n * w)));
  counts[0] = n - counts.slice(1).reduce((a, b) => a + b, 0);
  const instants = counts.flatMap((count, k) => Array<number>(count).fill(SANDBOX_IMPORTS[k] ?? 0));
  return new SandboxRandom(seed).shuffle(instants);
}

/** `1234,56` (or `1234.56`) → 1234.56. The sandbox writes no thousands separators. */
function parseDecimal(text: string): number {
  const value = Number(text.replace(',', '.'));
  if (!/^-?\d+(?:[.,]\d+)?$/.test(text) || !Number.isFinite(value)) {
    throw new Error(`sandbox: not a decimal: ${JSON.stringify(text)}`);
  }
  return value;
}

/** `DD/MM/YYYY`, with or without a time part → `YYYY-MM-DD`. */
function parseDate(text: string): string {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})(?: \d{2}:\d{2}(?::\d{2})?)?$/.exec(text);
  if (!m) throw new Error(`sandbox: not a date: ${JSON.stringify(text)}`);
  return `${m[3]}-${m[2]}-${m[1]}`;
}

/** A highlighted field's value from its cell (contract §1.2). */
function fieldValue(type: FieldType, cell: string): FieldValue {
  const text = cell.trim();
  if (text === '') return null;
  if (type === 'number') return parseDecimal(text);
  if (type === 'date') return parseDate(text);
  return text;
}

function build<C extends string>(
  kind: Kind,
  columns: readonly C[],
  records: readonly SandboxRecord<C>[],
  at: readonly number[],
): SandboxKindData {
  const known = new Set<string>(columns);
  const specs = KIND_SPECS[kind].fields;
  const sources = FIELD_COLUMNS[kind].map((name) => {
    const index = columns.indexOf(name as C);
    if (index < 0) throw new Error(`sandbox: ${kind} has no column ${name}`);
    return index;
  });
  if (sources.length !== specs.length) throw new Error(`sandbox: ${kind} maps ${sources.length} of ${specs.length} fields`);

  const rows = records.map((rec, i): SandboxRow => {
    // Generators fill columns by name; a misspelt one must not vanish silently.
    for (const name of Object.keys(rec)) {
      if (!known.has(name)) throw new Error(`sandbox: ${kind} row ${i} has unknown column ${name}`);
    }
    const cells = columns.map((c) => rec[c] ?? '');
    const fields = sources.map((index, f) => fieldValue(specs[f]?.type ?? 'string', cells[index] ?? ''));
    return frozen({ cells: frozen(cells), fields: frozen(fields), actualizadoAt: at[i] ?? 0 });
  });
  return frozen({ columns: frozen<string[]>([...columns]), rows: frozen(rows) });
}

/** Freezes `value` and keeps its type: the dataset is shared, so nobody may change it. */
function frozen<T extends object>(value: T): T {
  Object.freeze(value);
  return value;
}

function generate(): Readonly<Record<Kind, SandboxKindData>> {
  const clientesAt = importInstants(CLIENTES_COUNT, 0x5a4d0001);
  const articulosAt = importInstants(ARTICULOS_COUNT, 0x5a4d0002);
  const obrasAt = importInstants(OBRAS_COUNT, 0x5a4d0003);
  const avisosAt = importInstants(AVISOS_COUNT, 0x5a4d0004);

  const clientes = generateClientes(clientesAt);
  const articulos = generateArticulos(articulosAt);
  const obras = generateObras(obrasAt, clientes.refs);
  const avisos = generateAvisos(avisosAt, clientes.refs, obras.refs, articulos.refs);

  return frozen({
    clientes: build('clientes', CLIENTES_COLUMNS, clientes.records, clientesAt),
    articulos: build('articulos', ARTICULOS_COLUMNS, articulos.records, articulosAt),
    obras: build('obras', OBRAS_COLUMNS, obras.records, obrasAt),
    'avisos-correctivo': build('avisos-correctivo', AVISOS_COLUMNS, avisos.records, avisosAt),
  });
}

let dataset: Readonly<Record<Kind, SandboxKindData>> | undefined;

/**
 * The sandbox dataset, computed on first use and shared afterwards (it is
 * deeply frozen). Rows come in the order their ids were numbered, which is
 * not byte order for articles; callers sort as they need.
 */
export function sandboxDataset(): Readonly<Record<Kind, SandboxKindData>> {
  dataset ??= generate();
  return dataset;
}
