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

/** The wire names of the list parameters: the one place a new parameter is added. */
function listQuery(params: ListParams): Record<string, QueryValue> {
  const since = params.updatedSince;
  return {
    limit: params.limit,
    offset: params.offset,
    updated_since: since instanceof Date ? since.toISOString() : since,
    include_deleted: params.includeDeleted ? 'true' : undefined,
    snapshot: params.snapshot,
  };
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
  list(params: ListParams & WithDeleted, options?: CallOptions): Promise<ListPage<T | Tombstone>>;
  list(params?: ListParams & { includeDeleted?: false }, options?: CallOptions): Promise<ListPage<T>>;
  list(params?: ListParams, options?: CallOptions): Promise<ListPage<T | Tombstone>>;
  list(params: ListParams = {}, options: CallOptions = {}): Promise<ListPage<T | Tombstone>> {
    return this.transport.getJson<ListPage<T | Tombstone>>(this.path, listQuery(params), options.signal);
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
  async get(idErp: string, options: CallOptions = {}): Promise<T> {
    const body = await this.transport.getJson<{ item: T }>(`${this.path}/${encodeURIComponent(idErp)}`, {}, options.signal);
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
  pages(params: AllParams & WithDeleted, options?: CallOptions): AsyncGenerator<ListPage<T | Tombstone>, void, undefined>;
  pages(params?: AllParams & { includeDeleted?: false }, options?: CallOptions): AsyncGenerator<ListPage<T>, void, undefined>;
  pages(params?: AllParams, options?: CallOptions): AsyncGenerator<ListPage<T | Tombstone>, void, undefined>;
  async *pages(params: AllParams = {}, options: CallOptions = {}): AsyncGenerator<ListPage<T | Tombstone>, void, undefined> {
    const base: ListParams = { updatedSince: params.updatedSince, limit: params.pageSize ?? 1000, includeDeleted: params.includeDeleted };
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
  all(params: AllParams & WithDeleted, options?: CallOptions): AsyncGenerator<T | Tombstone, void, undefined>;
  all(params?: AllParams & { includeDeleted?: false }, options?: CallOptions): AsyncGenerator<T, void, undefined>;
  all(params?: AllParams, options?: CallOptions): AsyncGenerator<T | Tombstone, void, undefined>;
  async *all(params: AllParams = {}, options: CallOptions = {}): AsyncGenerator<T | Tombstone, void, undefined> {
    for await (const page of this.pages(params, options)) yield* page.items;
  }
}
