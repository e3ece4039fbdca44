/**
 * The records Mirador serves, one interface per kind. Every item has its
 * kind's highlighted fields (in this order), then `data`, then `actualizado_at`.
 */

/**
 * The kinds, as they appear in paths (`/v1/avisos-correctivo`).
 *
 * @example
 * ```ts
 * const kind: KindName = 'avisos-correctivo';
 * const page = await client.forKind(kind).list();
 * ```
 */
export type KindName = 'clientes' | 'articulos' | 'obras' | 'avisos-correctivo';

/**
 * Every kind, in the API's order.
 *
 * @example
 * ```ts
 * for (const kind of KIND_NAMES) console.log(kind, (await client.forKind(kind).list({ limit: 1 })).total);
 * ```
 */
export const KIND_NAMES: readonly KindName[] = ['clientes', 'articulos', 'obras', 'avisos-correctivo'];

/**
 * What every item has besides its highlighted fields.
 *
 * @example
 * ```ts
 * const c = await client.clientes.get('C000002');
 * console.log(c.data['08_CIUDAD'], c.actualizado_at);
 * ```
 */
export interface ItemBase {
  /** The record's id in the ERP; never null. */
  id_erp: string;
  /** The full original CSV row: every column under its exact header, cell text untouched (`""` when empty). */
  data: Record<string, string>;
  /** UTC with milliseconds (`2026-11-21T10:15:30.123Z`): when an import created the record or last changed its row. */
  actualizado_at: string;
}

/**
 * A customer. Highlighted fields are trimmed text, or null when the cell is empty.
 *
 * @example
 * ```ts
 * const c: Cliente = await client.clientes.get('C000002');
 * console.log(`${c.nombre} (${c.cif ?? 'no CIF'})`);
 * ```
 */
export interface Cliente extends ItemBase {
  nombre: string | null;
  cif: string | null;
  email: string | null;
  telefono: string | null;
  direccion: string | null;
}

/**
 * A product or service (`articulos`).
 *
 * @example
 * ```ts
 * const a: Articulo = await client.articulos.get('ELE000001');
 * if (a.precio !== null) console.log(`${a.nombre}: ${a.precio.toFixed(2)} € / ${a.unidad}`);
 * ```
 */
export interface Articulo extends ItemBase {
  codigo: string | null;
  nombre: string | null;
  unidad: string | null;
  /** A number (the ERP's `1.234,56` already read), or null when empty or unreadable. */
  precio: number | null;
}

/**
 * A project (a job or site, `obras`), for a customer.
 *
 * @example
 * ```ts
 * const o: Obra = await client.obras.get('OB000001');
 * const owner = o.cliente_id_erp ? await client.clientes.get(o.cliente_id_erp) : null;
 * ```
 */
export interface Obra extends ItemBase {
  codigo: string | null;
  nombre: string | null;
  descripcion: string | null;
  /** The `id_erp` of the customer (`clientes`). */
  cliente_id_erp: string | null;
  estado: string | null;
}

/**
 * A corrective-maintenance notice.
 *
 * @example
 * ```ts
 * for await (const a of client.avisosCorrectivo.all({ updatedSince: '2026-10-01' })) {
 *   console.log(a.fecha, a.prioridad, a.descripcion);
 * }
 * ```
 */
export interface AvisoCorrectivo extends ItemBase {
  codigo: string | null;
  /** `YYYY-MM-DD`, or null. */
  fecha: string | null;
  cliente_id_erp: string | null;
  /** The `id_erp` of the project (`obras`), or null. */
  obra_id_erp: string | null;
  descripcion: string | null;
  estado: string | null;
  prioridad: string | null;
}

/**
 * The item type of each kind.
 *
 * @example
 * ```ts
 * type Notice = ItemsByKind['avisos-correctivo']; // AvisoCorrectivo
 * ```
 */
export interface ItemsByKind {
  clientes: Cliente;
  articulos: Articulo;
  obras: Obra;
  'avisos-correctivo': AvisoCorrectivo;
}

/**
 * Any item.
 *
 * @example
 * ```ts
 * const byId = new Map<string, Item>();
 * for await (const item of client.forKind(kind).all()) byId.set(item.id_erp, item);
 * ```
 */
export type Item = ItemsByKind[KindName];

/**
 * The highlighted fields of each kind, in item order (what comes before
 * `data`). Handy for tables and CSV columns.
 *
 * @example
 * ```ts
 * const header = [...ITEM_FIELDS.articulos, 'actualizado_at']; // id_erp, codigo, nombre, unidad, precio, …
 * ```
 */
export const ITEM_FIELDS = {
  clientes: ['id_erp', 'nombre', 'cif', 'email', 'telefono', 'direccion'],
  articulos: ['id_erp', 'codigo', 'nombre', 'unidad', 'precio'],
  obras: ['id_erp', 'codigo', 'nombre', 'descripcion', 'cliente_id_erp', 'estado'],
  'avisos-correctivo': ['id_erp', 'codigo', 'fecha', 'cliente_id_erp', 'obra_id_erp', 'descripcion', 'estado', 'prioridad'],
} as const satisfies { [K in KindName]: readonly Exclude<keyof ItemsByKind[K], 'data' | 'actualizado_at'>[] };

/**
 * One page of a list, exactly as the API sends it.
 *
 * @example
 * ```ts
 * const page: ListPage<Cliente> = await client.clientes.list({ limit: 50 });
 * if (page.has_more) await client.clientes.list({ limit: 50, offset: page.next_offset });
 * ```
 */
export interface ListPage<T> {
  ok: true;
  /** Present (and true) on sandbox pages only. */
  sandbox?: true;
  /** Records matching the filters, not the page length. */
  total: number;
  limit: number;
  offset: number;
  /** `offset + items.length < total`. */
  has_more: boolean;
  /** Always `offset + items.length`: follow it while `has_more` is true. */
  next_offset: number;
  /** The data version this page came from (null when the kind was never imported); pass it back to pin it. */
  snapshot: string | null;
  /** Ordered by `actualizado_at`, then `id_erp`. */
  items: T[];
}

/**
 * A record that an import removed, listed with `includeDeleted: true`.
 *
 * @example
 * ```ts
 * for await (const c of client.clientes.all({ updatedSince: lastSync, includeDeleted: true })) {
 *   if (isTombstone(c)) db.delete(c.id_erp); else db.upsert(c);
 * }
 * ```
 */
export interface Tombstone {
  id_erp: string;
  eliminado: true;
  /** The time of the import that removed it. */
  actualizado_at: string;
}

/**
 * Tells a tombstone from a record.
 *
 * @example
 * ```ts
 * const page = await client.obras.list({ includeDeleted: true });
 * const removed = page.items.filter(isTombstone).map((t) => t.id_erp);
 * ```
 */
export function isTombstone(item: { id_erp: string }): item is Tombstone {
  return (item as Partial<Tombstone>).eliminado === true;
}
