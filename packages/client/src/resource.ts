/**
 * One kind's endpoints: a page, one record, and every record by following
 * `next_offset`.
 */
import { MiradorError } from './errors.js';
import type { ListPage } from './items.js';
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
}

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
  list(params: ListParams = {}, options: CallOptions = {}): Promise<ListPage<T>> {
    return this.transport.getJson<ListPage<T>>(this.path, listQuery(params), options.signal);
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
   * carries `total`, for progress.
   *
   * @example
   * ```ts
   * for await (const page of client.clientes.pages({ pageSize: 500 })) {
   *   console.log(`${page.offset + page.items.length} of ${page.total}`);
   * }
   * ```
   */
  async *pages(params: AllParams = {}, options: CallOptions = {}): AsyncGenerator<ListPage<T>, void, undefined> {
    const base: ListParams = { updatedSince: params.updatedSince, limit: params.pageSize ?? 1000 };
    let offset = 0;
    for (;;) {
      const page = await this.list({ ...base, offset }, options);
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
  async *all(params: AllParams = {}, options: CallOptions = {}): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages(params, options)) yield* page.items;
  }
}
