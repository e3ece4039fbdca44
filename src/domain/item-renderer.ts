/**
 * Renders items exactly as the API returns them. An item is rendered once, at
 * import time, in two parts: the body (every key up to the value of
 * `actualizado_at`) and the timestamp, which is only known once the row has
 * been compared with the previous snapshot. The read path never parses or
 * stringifies an item again.
 */
import { hash } from 'node:crypto';
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
    // One flat join rather than 300 concatenations: no rope to flatten later.
    const parts = this.parts;
    let n = 0;
    for (let i = 0; i < this.fieldKeys.length; i++) {
      const v = fields[i] ?? null;
      parts[n++] = this.fieldKeys[i]!;
      parts[n++] = typeof v === 'string' ? quote(v) : JSON.stringify(v);
    }
    parts[n++] = ',"data":{';
    for (let i = 0; i < this.columnKeys.length; i++) {
      parts[n++] = this.columnKeys[i]!;
      parts[n++] = quote(cells[i] ?? '');
    }
    parts[n++] = '},"actualizado_at":"';
    return parts.join('');
  }

  private readonly parts: string[] = [];
}

/** Characters JSON needs escaped, and lone surrogates (JSON.stringify escapes those too). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON string literal; most ERP cells need no escaping, so skip the builtin's work for them. */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** Completes a body from `ItemRenderer.body` with its timestamp. */
export function finishItem(body: string, actualizadoAt: number): string {
  // A snapshot holds only a handful of distinct times: format each once.
  if (actualizadoAt !== lastTime) {
    lastTime = actualizadoAt;
    lastIso = new Date(actualizadoAt).toISOString();
  }
  return body + lastIso + ITEM_TAIL;
}

let lastTime = NaN;
let lastIso = '';

/** Content hash of a rendered body: equal hashes mean an unchanged record. */
export function hashBody(body: string): Buffer {
  return hash('md5', body, 'buffer');
}

/** Byte order of UTF-8 strings: the list order of `id_erp` on every store. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
