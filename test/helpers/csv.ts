/** Builds CSV files for tests, encoded as an ERP would write them. */
import iconv from 'iconv-lite';

export const CSV_CUSTOMER_HEADER = ['CODIGO', '01_NOMBRE_COMERCIAL', '06_CIF', 'EMAIL', 'TELEFONO', '07_DOMICILIO', 'OBSERVACIONES'];

export function csvCell(value: string, delimiter = ';'): string {
  return /["\r\n]/.test(value) || value.includes(delimiter) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function csv(rows: string[][], options: { delimiter?: string; eol?: string; encoding?: 'windows-1252' | 'utf-8' } = {}): Buffer {
  const d = options.delimiter ?? ';';
  const eol = options.eol ?? '\r\n';
  const text = rows.map((r) => r.map((c) => csvCell(c, d)).join(d)).join(eol) + eol;
  return options.encoding === 'utf-8' ? Buffer.from(text, 'utf8') : iconv.encode(text, 'windows-1252');
}

/** `n` customers; `name(i)` decides each row's name so tests can tell versions apart. */
export function customersCsv(n: number, name: (i: number) => string = (i) => `Cliente ${i}`, ids?: string[]): Buffer {
  const rows = [CSV_CUSTOMER_HEADER];
  for (let i = 0; i < n; i++) {
    const id = ids?.[i] ?? `C${String(i + 1).padStart(6, '0')}`;
    rows.push([id, name(i), 'B12345678', `c${i}@example.com`, '600000000', `Calle ${i}`, i % 50 === 0 ? 'Nota; con "comillas"\r\ny salto' : '']);
  }
  return csv(rows);
}

/** `n` customers with `columns` columns of ~30 characters each: big items, as a real export has. */
export function wideCustomersCsv(n: number, columns = 150, name: (i: number) => string = (i) => `Cliente ${i}`): Buffer {
  const header = ['CODIGO', '01_NOMBRE_COMERCIAL', ...Array.from({ length: columns - 2 }, (_, c) => `CAMPO_${String(c).padStart(3, '0')}`)];
  const rows = [header];
  for (let i = 0; i < n; i++) {
    rows.push([`C${String(i + 1).padStart(7, '0')}`, name(i), ...Array.from({ length: columns - 2 }, (_, c) => `valor ${c} del cliente número ${i}`)]);
  }
  return csv(rows);
}
