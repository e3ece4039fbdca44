/**
 * One kind's endpoints: a page, one record, and every record by following
 * `next_offset`.
 */
import { MiradorError } from './errors.js';
import type { ListPage, Tombstone } from './items.js';
import type { QueryValue, Transport } from './transport.js';

/**
 * Parameters of one page.
 *
 * @example
 * ```ts
 * const params: ListParams = { limit: 500, offset: 1000, updatedSince: '2026-11-01' };
 * ```
 */
export interface ListParams {
  /** Page size, 1 to 1000 (the API's default: 100). */
  limit?: number;
  /** Records to skip; use the previous page's `next_offset`. */
  offset?: number;
  /** Only records changed at or after this instant: an ISO 8601 date or timestamp, or a Date. */
  updatedSince?: string | Date;
  /** Also list records that imports removed, as tombstones (`isTombstone`). */
  includeDeleted?: boolean;
  /** Read this data version (an earlier page's `snapshot`) rather than the live one. */
  snapshot?: string;
}

/** A highlighted text field of an item: what an equality filter names. */
export type FilterField<T> = {
  [K in keyof T]-?: K extends 'data' | 'actualizado_at' ? never : T[K] extends string | null ? K : never;
}[keyof T] &
  string;

/** A key `fields` may keep: a highlighted field, or `data` as a whole. */
export type FieldName<T> = Exclude<keyof T, 'actualizado_at'> & string;

/**
 * Which records and which keys (contract §6): equality filters on highlighted
 * text fields (a list means any of them, `null` means the field is null; different
 * fields must all match), ranges, a word search, and the keys to keep. Filters
 * that do not apply to the kind are refused by the server (InvalidRequestError).
 *
 * @example
 * ```ts
 * await client.obras.list({ cliente_id_erp: 'C000001', estado: ['abierto', 'pendiente'] });
 * await client.clientes.list({ q: 'ferr iba', fields: ['nombre'] });
 * await client.avisosCorrectivo.list({ fecha_desde: '2026-11-01', obra_id_erp: null });
 * ```
 */
export type SubsetParams<T> = { [K in FilterField<T>]?: string | null | readonly (string | null)[] } & {
  /** Every word is a prefix of a word of `nombre`, or of the whole `id_erp`, `codigo` or `cif` (case and accents ignored). */
  q?: string;
  /** Only these keys of each item (`id_erp` and `actualizado_at` always). */
  fields?: readonly FieldName<T>[];
  /** `fecha` on or after this date, YYYY-MM-DD (avisos-correctivo). */
  fecha_desde?: string;
  /** `fecha` on or before this date, YYYY-MM-DD (avisos-correctivo). */
  fecha_hasta?: string;
  /** `precio` at least this (articulos). */
  precio_min?: number;
  /** `precio` at most this (articulos). */
  precio_max?: number;
};

/** Parameters that ask for tombstones: the items are then records or tombstones. */
type WithDeleted = { includeDeleted: true };

/**
 * Parameters of a full walk through a list.
 *
 * @example
 * ```ts
 * for await (const c of client.clientes.all({ updatedSince: lastSync, pageSize: 1000 })) save(c);
 * ```
 */
export interface AllParams {
  /** Only records changed at or after this instant. */
  updatedSince?: string | Date;
  /** Records per request, 1 to 1000 (default 1000: fewest round trips). */
  pageSize?: number;
  /** Also list records that imports removed, as tombstones: how a sync learns of deletions. */
  includeDeleted?: boolean;
}

/**
 * Per-call options.
 *
 * @example
 * ```ts
 * await client.obras.list({}, { signal: AbortSignal.timeout(60_000) });
 * ```
 */
export interface CallOptions {
  /** Aborts the call, including any wait between retries. */
  signal?: AbortSignal;
}

const LIST_KEYS = new Set(['limit', 'offset', 'updatedSince', 'includeDeleted', 'snapshot', 'pageSize']);

/** The wire names of the list parameters: the one place a new parameter is added. */
function listQuery(params: ListParams & Record<string, unknown>): Record<string, QueryValue> {
  const since = params.updatedSince;
  return {
    limit: params.limit,
    offset: params.offset,
    updated_since: since instanceof Date ? since.toISOString() : since,
    include_deleted: params.includeDeleted ? 'true' : undefined,
    snapshot: params.snapshot,
    ...subsetQuery(params),
  };
}

/** The subset parameters as sent: filters and `q` as given (null as empty), `fields` joined by commas. */
function subsetQuery(params: Record<string, unknown>): Record<string, QueryValue> {
  const out: Record<string, QueryValue> = {};
  for (const [name, value] of Object.entries(params)) {
    if (LIST_KEYS.has(name) || value === undefined) continue;
    if (name === 'fields') out.fields = (value as readonly string[]).join(',');
    else if (Array.isArray(value)) out[name] = value.map((v: unknown) => (v === null ? '' : String(v)));
    else out[name] = value === null ? '' : String(value);
  }
  return out;
}

/**
 * The endpoints of one kind: `client.clientes`, `client.articulos`, `client.obras`, `client.avisosCorrectivo`.
 *
 * @example
 * ```ts
 * const page = await client.clientes.list({ limit: 10 });
 * const one = await client.clientes.get(page.items[0]!.id_erp);
 * for await (const c of client.clientes.all()) console.log(c.id_erp);
 * ```
 */
export class KindResource<T extends { id_erp: string }> {
  /** `path` is the list's path, such as `/v1/clientes` or `/v1/sandbox/clientes`. */
  constructor(
    private readonly transport: Transport,
    readonly path: string,
  ) {}

  /**
   * One page, ordered by `actualizado_at` then `id_erp`.
   *
   * @example
   * ```ts
   * const { total, items, has_more, next_offset } = await client.articulos.list({ limit: 100, updatedSince: '2026-11-01' });
   * ```
   */
  list(params: ListParams & SubsetParams<T> & WithDeleted, options?: CallOptions): Promise<ListPage<T | Tombstone>>;
  list(params?: ListParams & SubsetParams<T> & { includeDeleted?: false }, options?: CallOptions): Promise<ListPage<T>>;
  list(params?: ListParams & SubsetParams<T>, options?: CallOptions): Promise<ListPage<T | Tombstone>>;
  list(params: ListParams & SubsetParams<T> = {}, options: CallOptions = {}): Promise<ListPage<T | Tombstone>> {
    return this.transport.getJson<ListPage<T | Tombstone>>(this.path, listQuery(params as ListParams & Record<string, unknown>), options.signal);
  }

  /**
   * One record by its `id_erp` (any characters: it is percent-encoded here).
   * Throws NotFoundError when there is none.
   *
   * @example
   * ```ts
   * const obra = await client.obras.get('OB000001');
   * ```
   */
  async get(idErp: string, options: CallOptions & { fields?: readonly FieldName<T>[] } = {}): Promise<T> {
    const query = options.fields ? { fields: options.fields.join(',') } : {};
    const body = await this.transport.getJson<{ item: T }>(`${this.path}/${encodeURIComponent(idErp)}`, query, options.signal);
    return body.item;
  }

  /**
   * Every page, following `next_offset` until `has_more` is false. Each page
   * carries `total`, for progress. Pages after the first pin the first page's
   * `snapshot`, so an import landing meanwhile never makes the walk skip or
   * repeat a record; a walk longer than the server keeps snapshots (15
   * minutes by default) fails with SnapshotExpiredError: start it again.
   *
   * @example
   * ```ts
   * for await (const page of client.clientes.pages({ pageSize: 500 })) {
   *   console.log(`${page.offset + page.items.length} of ${page.total}`);
   * }
   * ```
   */
  pages(params: AllParams & SubsetParams<T> & WithDeleted, options?: CallOptions): AsyncGenerator<ListPage<T | Tombstone>, void, undefined>;
  pages(params?: AllParams & SubsetParams<T> & { includeDeleted?: false }, options?: CallOptions): AsyncGenerator<ListPage<T>, void, undefined>;
  pages(params?: AllParams & SubsetParams<T>, options?: CallOptions): AsyncGenerator<ListPage<T | Tombstone>, void, undefined>;
  async *pages(params: AllParams & SubsetParams<T> = {}, options: CallOptions = {}): AsyncGenerator<ListPage<T | Tombstone>, void, undefined> {
    const { pageSize, ...rest } = params;
    const base: ListParams & SubsetParams<T> = { ...rest, limit: pageSize ?? 1000 } as ListParams & SubsetParams<T>;
    let offset = 0;
    for (;;) {
      const page = await this.list({ ...base, offset }, options);
      if (base.snapshot === undefined && page.snapshot) base.snapshot = page.snapshot;
      yield page;
      if (!page.has_more) return;
      // A page that does not move forward would loop for ever.
      if (!(page.next_offset > offset)) {
        throw new MiradorError(`The list did not advance past offset ${offset}.`, { code: 'invalid_response', status: 200, requestId: null });
      }
      offset = page.next_offset;
    }
  }

  /**
   * Every record, in list order, fetched page by page as you iterate.
   *
   * @example
   * ```ts
   * for await (const aviso of client.avisosCorrectivo.all({ updatedSince: '2026-10-01T00:00:00Z' })) {
   *   console.log(aviso.id_erp, aviso.estado);
   * }
   * ```
   */
  all(params: AllParams & SubsetParams<T> & WithDeleted, options?: CallOptions): AsyncGenerator<T | Tombstone, void, undefined>;
  all(params?: AllParams & SubsetParams<T> & { includeDeleted?: false }, options?: CallOptions): AsyncGenerator<T, void, undefined>;
  all(params?: AllParams & SubsetParams<T>, options?: CallOptions): AsyncGenerator<T | Tombstone, void, undefined>;
  async *all(params: AllParams & SubsetParams<T> = {}, options: CallOptions = {}): AsyncGenerator<T | Tombstone, void, undefined> {
    for await (const page of this.pages(params, options)) yield* page.items;
  }
}

/**
 * A kind's list filtered on one parent record (`/v1/clientes/{id_erp}/obras`):
 * the same parameters as `list`; NotFoundError when the parent does not exist.
 *
 * @example
 * ```ts
 * const projects = await client.clientes.obras('C000001', { estado: 'abierto' });
 * ```
 */
export type RelatedList<T> = (parentId: string, params?: ListParams & SubsetParams<T>, options?: CallOptions) => Promise<ListPage<T>>;

/** Makes a RelatedList on `parentPath` (`/v1/clientes`) for the child kind `child` (`obras`). */
export function relatedList<T extends { id_erp: string }>(transport: Transport, parentPath: string, child: string): RelatedList<T> {
  return (parentId, params = {}, options = {}) =>
    transport.getJson<ListPage<T>>(
      `${parentPath}/${encodeURIComponent(parentId)}/${child}`,
      listQuery(params as ListParams & Record<string, unknown>),
      options.signal,
    );
}

/**
 * Customers, with their projects and notices.
 *
 * @example
 * ```ts
 * const open = await client.clientes.avisosCorrectivo('C000001', { estado: 'abierto' });
 * ```
 */
export class ClientesResource<T extends { id_erp: string }, O extends { id_erp: string }, A extends { id_erp: string }> extends KindResource<T> {
  /** The customer's projects. */
  readonly obras: RelatedList<O>;
  /** The customer's corrective-maintenance notices. */
  readonly avisosCorrectivo: RelatedList<A>;

  constructor(transport: Transport, path: string) {
    super(transport, path);
    this.obras = relatedList<O>(transport, path, 'obras');
    this.avisosCorrectivo = relatedList<A>(transport, path, 'avisos-correctivo');
  }
}

/**
 * Projects, with their notices.
 *
 * @example
 * ```ts
 * const notices = await client.obras.avisosCorrectivo('OB000001');
 * ```
 */
export class ObrasResource<T extends { id_erp: string }, A extends { id_erp: string }> extends KindResource<T> {
  /** The project's corrective-maintenance notices. */
  readonly avisosCorrectivo: RelatedList<A>;

  constructor(transport: Transport, path: string) {
    super(transport, path);
    this.avisosCorrectivo = relatedList<A>(transport, path, 'avisos-correctivo');
  }
}
