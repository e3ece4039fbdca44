/**
 * The TypeScript client for Mirador's read API: typed items per kind, paging
 * that follows `next_offset`, retries as the service asks, typed errors.
 * No dependency beyond `fetch`.
 *
 * @example
 * ```ts
 * import { Mirador, NotFoundError } from 'mirador/client';
 *
 * const client = new Mirador({ baseUrl: 'http://127.0.0.1:3000', sandbox: true });
 * for await (const c of client.clientes.all({ updatedSince: '2026-06-01' })) console.log(c.id_erp, c.nombre);
 * ```
 */
export { Mirador, type MiradorOptions } from './mirador.js';
export {
  ClientesResource, KindResource, ObrasResource,
  type AllParams, type CallOptions, type FieldName, type FilterField, type ListParams, type RelatedList, type SubsetParams,
} from './resource.js';
export {
  AuthenticationError, ConnectionError, InvalidRequestError, MiradorError, NotFoundError, RateLimitError, ServerError,
  SnapshotExpiredError,
  type MiradorErrorFields,
} from './errors.js';
export {
  ITEM_FIELDS, KIND_NAMES, isTombstone,
  type Articulo, type AvisoCorrectivo, type Cliente, type Item, type ItemBase, type ItemsByKind, type KindName, type ListPage, type Obra, type Tombstone,
} from './items.js';
export { type RetryInfo, type Sleep } from './transport.js';
export {
  verifyWebhook, WebhookVerificationError,
  type MiradorEvent, type VerifyWebhookOptions, type WebhookVerificationReason,
} from './webhooks.js';
