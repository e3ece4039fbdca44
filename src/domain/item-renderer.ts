/**
 * Renders items exactly as the API returns them. An item is rendered once, at
 * import time, in two parts: the body (every key up to the value of
 * `actualizado_at`) and the timestamp, which is only known once the row has
 * been compared with the previous snapshot. The read path never parses or
 * stringifies an item again.
 */
import { createHash } from 'node:crypto';
import type { Kind } from './kinds.js';
import { KIND_SPECS } from './kinds.js';

export type FieldValue = string | number | null;

/** The part of a rendered item that follows the timestamp. */
const ITEM_TAIL = '"}';

export class ItemRenderer {
  private readonly fieldKeys: string[];
  private readonly columnKeys: string[];

  /** `columns` are the CSV header names, in file order. */
  constructor(readonly kind: Kind, readonly columns: readonly string[]) {
    this.fieldKeys = KIND_SPECS[kind].fields.map((f, i) => (i === 0 ? '{' : ',') + JSON.stringify(f.name) + ':');
    this.columnKeys = columns.map((c, i) => (i === 0 ? '' : ',') + JSON.stringify(c) + ':');
  }

  /**
   * The item up to and including the opening quote of `actualizado_at`'s
   * value. `fields` holds one value per highlighted field, in kind order;
   * `cells` one cell per column.
   */
  body(fields: readonly FieldValue[], cells: readonly string[]): string {
    let out = '';
    for (let i = 0; i < this.fieldKeys.length; i++) {
      out += this.fieldKeys[i] + JSON.stringify(fields[i] ?? null);
    }
    out += ',"data":{';
    for (let i = 0; i < this.columnKeys.length; i++) {
      out += this.columnKeys[i] + JSON.stringify(cells[i] ?? '');
    }
    return out + '},"actualizado_at":"';
  }
}

/** Completes a body from `ItemRenderer.body` with its timestamp. */
export function finishItem(body: string, actualizadoAt: number): string {
  return body + new Date(actualizadoAt).toISOString() + ITEM_TAIL;
}

/** Content hash of a rendered body: equal hashes mean an unchanged record. */
export function hashBody(body: string): Buffer {
  return createHash('md5').update(body, 'utf8').digest();
}

/** Byte order of UTF-8 strings: the list order of `id_erp` on every store. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
