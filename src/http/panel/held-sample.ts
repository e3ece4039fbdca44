/**
 * The records a held import would remove, as the guard's page lists them:
 * the report names their `id_erp` (the first few, store's DELETED_EXAMPLES),
 * and their names are read from the live snapshot, which is the one the
 * import was compared with (a held import stops the kind's queue).
 */
import { KIND_SPECS, type Kind } from '../../domain/kinds.js';
import type { Chunk, Store } from '../../store/store.js';
import { chunkIndexOf, sliceItems } from '../api/snapshot-reader.js';

export interface RemovedRecord {
  idErp: string;
  /** The record's `nombre` (or `descripcion`, for a kind without a name); null when it has none. */
  name: string | null;
}

/** The field that names a record of a kind for a person. */
export function nameField(kind: Kind): 'nombre' | 'descripcion' | null {
  const fields = KIND_SPECS[kind].fields.map((f) => f.name);
  return fields.includes('nombre') ? 'nombre' : fields.includes('descripcion') ? 'descripcion' : null;
}

/** `ids` with their names from the live snapshot: a lookup and at most one chunk read per record, off the API's hot path. */
export async function removedSample(store: Store, companyId: number, kind: Kind, ids: readonly string[]): Promise<RemovedRecord[]> {
  const field = nameField(kind);
  const live = ids.length === 0 || field === null ? null : await store.liveSnapshotId(companyId, kind);
  const meta = live === null ? null : await store.snapshotMeta(live);
  if (!meta || !field) return ids.map((idErp) => ({ idErp, name: null }));
  const chunks = new Map<number, Chunk>();
  const sample: RemovedRecord[] = [];
  for (const idErp of ids) {
    const ref = await store.findRecord(meta.id, idErp);
    if (!ref) {
      sample.push({ idErp, name: null });
      continue;
    }
    const chunkNo = chunkIndexOf(meta.chunkStarts, ref.pos);
    let chunk = chunks.get(chunkNo);
    if (!chunk) {
      [chunk] = await store.readChunks(meta.id, chunkNo, chunkNo);
      if (chunk) chunks.set(chunkNo, chunk);
    }
    const item = chunk ? (JSON.parse(Buffer.concat(sliceItems([chunk], ref.pos, ref.pos + 1)).toString('utf8')) as Record<string, unknown>) : {};
    const value = item[field];
    sample.push({ idErp, name: typeof value === 'string' && value !== '' ? value : null });
  }
  return sample;
}
