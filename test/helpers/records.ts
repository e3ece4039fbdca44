/** Small record sets for tests, loaded through the store's snapshot writer. */
import type { RecordInput } from '../../src/snapshots/write-records.js';

export const CUSTOMER_COLUMNS = ['CODIGO', '01_NOMBRE_COMERCIAL', '06_CIF', 'EMAIL', 'TELEFONO', '07_DOMICILIO', 'OBSERVACIONES'];

/** A customer row: highlighted fields follow the cells, as the default mapping would take them. */
export function customer(id: string, name = `Cliente ${id}`, line = 2, extra: Partial<{ obs: string; email: string }> = {}): RecordInput {
  const cells = [id, ` ${name} `, 'B12345678', extra.email ?? `${id.toLowerCase()}@example.com`, '600000000', 'C/ Mayor 1', extra.obs ?? ''];
  return {
    fields: [id, name, 'B12345678', extra.email ?? `${id.toLowerCase()}@example.com`, '600000000', 'C/ Mayor 1'],
    cells,
    line,
  };
}

export function customers(ids: string[]): RecordInput[] {
  return ids.map((id, i) => customer(id, `Cliente ${id}`, i + 2));
}

export const range = (n: number, prefix = 'C') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i + 1).padStart(6, '0')}`);
