/**
 * A large customers export for benchmarks, shaped like the sample
 * clientes.csv: its 150 columns, Windows-1252, `;`, CRLF. Each row takes each
 * column's cell from a sample row chosen at random (so empty columns, padded
 * cells, decimal commas, dates and quoted cells keep the sample's mix), gets a
 * unique CODIGO, and about 1 row in 30 gets a remark holding `;`, `""` and
 * line breaks. Deterministic: the same rows give the same bytes.
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';
import { openCsv } from '../src/imports/read-csv.js';

const SAMPLE = fileURLToPath(new URL('../../test/fixtures/csv/samples/clientes.csv', import.meta.url));

const REMARKS = [
  'Llamar antes de ir; el portero "automático" no funciona.\r\nHorario: 8:00–15:00',
  'Cliente "preferente"; pedidos > 1.500 € con portes pagados',
  'Entregar en el almacén\r\nNo aceptan entregas en agosto; avisar con 48 h',
];

/** Path of a customers file with `rows` rows, written on first use. */
export async function ensureClientesCsv(rows: number, dir = join(tmpdir(), 'mirador-bench')): Promise<string> {
  const path = join(dir, `clientes-${rows}.csv`);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  const sample = await openCsv(createReadStream(SAMPLE));
  const templates: string[][] = [];
  for await (const batch of sample.batches()) for (const row of batch) templates.push(row.cells);
  const columns = sample.columns;
  const remarkAt = columns.indexOf('OBSERVACIONES');
  const random = mulberry32(20261121);

  const partial = `${path}.partial`;
  const out = createWriteStream(partial);
  let text = columns.map(quote).join(';') + '\r\n';
  for (let i = 0; i < rows; i++) {
    const cells = columns.map((_, c) => (templates[Math.floor(random() * templates.length)] as string[])[c] as string);
    cells[0] = `C${String(i + 1).padStart(7, '0')}`;
    if (remarkAt !== -1 && random() < 1 / 30) cells[remarkAt] = REMARKS[Math.floor(random() * REMARKS.length)] as string;
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
