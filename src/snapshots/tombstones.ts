/**
 * Tombstones as list items (`include_deleted=true`): the JSON of a removed
 * record, rendered once, with its sort keys (time, then `id_erp` bytes) for
 * merging with live items. Used by the API's merged pages and by the sandbox's
 * fictitious removals.
 */
import type { Tombstone } from '../store/store.js';

export interface RenderedTombstone {
  at: number;
  id: Buffer;
  json: Buffer;
}

export function renderTombstones(list: readonly Tombstone[]): RenderedTombstone[] {
  return list.map((t) => ({
    at: t.deletedAt,
    id: Buffer.from(t.idErp, 'utf8'),
    json: Buffer.from(
      `{"id_erp":${JSON.stringify(t.idErp)},"eliminado":true,"actualizado_at":"${new Date(t.deletedAt).toISOString()}"}`,
    ),
  }));
}
