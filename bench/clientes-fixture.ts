/**
 * Large exports for benchmarks, shaped like the sample files in
 * test/fixtures/csv/samples/: their columns, Windows-1252, `;`, CRLF. Each row
 * takes each column's cell from a sample row chosen at random (so empty
 * columns, padded cells, decimal commas, dates and quoted cells keep the
 * sample's mix), gets a unique code, and about 1 row in 30 gets a remark
 * holding `;`, `""` and line breaks. References to other kinds point at codes
 * that exist in files of the same scale. Deterministic: the same arguments
 * give the same bytes.
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';
import type { Kind } from '../src/domain/kinds.js';
import { openCsv } from '../src/imports/read-csv.js';

const REMARKS = [
  'Llamar antes de ir; el portero "automático" no funciona.\r\nHorario: 8:00–15:00',
  'Cliente "preferente"; pedidos > 1.500 € con portes pagados',
  'Entregar en el almacén\r\nNo aceptan entregas en agosto; avisar con 48 h',
];

/** Rows of each kind per customer: the proportions of the sample files (200, 300, 80, 400 rows). */
export const ROWS_PER_CUSTOMER: Readonly<Record<Kind, number>> = {
  clientes: 1,
  articulos: 1.5,
  obras: 0.4,
  'avisos-correctivo': 2,
};

interface KindShape {
  /** First character of generated codes: `C0000001`, `A0000001`… */
  idPrefix: string;
  remarkColumn: string;
  /** Columns that reference another kind's code, with that kind's prefix and row count per customer. */
  refs: { column: string; prefix: string; perCustomer: number }[];
}

const SHAPES: Record<Kind, KindShape> = {
  clientes: { idPrefix: 'C', remarkColumn: 'OBSERVACIONES', refs: [] },
  articulos: { idPrefix: 'A', remarkColumn: 'DESCRIPCION_LARGA', refs: [] },
  obras: { idPrefix: 'O', remarkColumn: 'DESCRIPCION', refs: [{ column: 'CLIENTE', prefix: 'C', perCustomer: 1 }] },
  'avisos-correctivo': {
    idPrefix: 'V',
    remarkColumn: 'DESCRIPCION',
    refs: [
      { column: 'CLIENTE', prefix: 'C', perCustomer: 1 },
      { column: 'OBRA', prefix: 'O', perCustomer: 0.4 },
    ],
  },
};

export interface SampleCsvOptions {
  kind: Kind;
  rows: number;
  dir?: string;
  /** Rows from this index on get their last cell changed: a re-export where those records changed. */
  changedFrom?: number;
  /** With `changedFrom`: rows from `changedTo` on are left unchanged again (a re-export where a range changed). */
  changedTo?: number;
  /** With `changedFrom`: only every this many rows of the range change (changes spread over the file). */
  changedEvery?: number;
}

export const DEFAULT_FIXTURE_DIR = join(tmpdir(), 'mirador-bench');

/** Path of a customers file with `rows` rows, written on first use. */
export function ensureClientesCsv(rows: number, dir = DEFAULT_FIXTURE_DIR): Promise<string> {
  return ensureSampleCsv({ kind: 'clientes', rows, dir });
}

/** Path of an export of `kind` with `rows` rows, written on first use. */
export async function ensureSampleCsv(options: SampleCsvOptions): Promise<string> {
  const { kind, rows, dir = DEFAULT_FIXTURE_DIR, changedFrom, changedTo = Infinity, changedEvery = 1 } = options;
  const suffix =
    changedFrom === undefined
      ? ''
      : `-changed-from-${changedFrom}${changedTo === Infinity ? '' : `-to-${changedTo}`}${changedEvery === 1 ? '' : `-every-${changedEvery}`}`;
  const path = join(dir, `${kind}-${rows}${suffix}.csv`);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  const sampleFile = fileURLToPath(new URL(`../../test/fixtures/csv/samples/${kind}.csv`, import.meta.url));
  const sample = await openCsv(createReadStream(sampleFile));
  const templates: string[][] = [];
  for await (const batch of sample.batches()) for (const row of batch) templates.push(row.cells);
  const columns = sample.columns;
  const shape = SHAPES[kind];
  const remarkAt = columns.indexOf(shape.remarkColumn);
  const customers = rows / ROWS_PER_CUSTOMER[kind];
  const refs = shape.refs
    .map((r) => ({ at: columns.indexOf(r.column), prefix: r.prefix, count: Math.max(1, Math.round(customers * r.perCustomer)) }))
    .filter((r) => r.at !== -1);
  const random = mulberry32(20261121);

  const partial = `${path}.partial`;
  const out = createWriteStream(partial);
  let text = columns.map(quote).join(';') + '\r\n';
  for (let i = 0; i < rows; i++) {
    const cells = columns.map((_, c) => (templates[Math.floor(random() * templates.length)] as string[])[c] as string);
    cells[0] = code(shape.idPrefix, i);
    if (remarkAt !== -1 && random() < 1 / 30) cells[remarkAt] = REMARKS[Math.floor(random() * REMARKS.length)] as string;
    for (const r of refs) cells[r.at] = code(r.prefix, Math.floor(random() * r.count));
    // After every draw, so the rows before `changedFrom` are byte-identical to the unchanged file's.
    if (changedFrom !== undefined && i >= changedFrom && i < changedTo && (i - changedFrom) % changedEvery === 0) cells[cells.length - 1] += ' (cambiado)';
    text += cells.map(quote).join(';') + '\r\n';
    if (text.length > 1 << 20 || i === rows - 1) {
      if (!out.write(iconv.encode(text, 'windows-1252'))) await once(out, 'drain');
      text = '';
    }
  }
  out.end();
  await once(out, 'finish');
  renameSync(partial, path);
  return path;
}

/** The code of the `i`-th (0-based) generated record: ascending in byte order. */
export function code(prefix: string, i: number): string {
  return `${prefix}${String(i + 1).padStart(7, '0')}`;
}

function quote(cell: string): string {
  return /[;"\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/** A small seeded PRNG (mulberry32), for deterministic data. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
