/**
 * A thin page of a list (`fields=` without `data`, no filter): consecutive
 * positions, each chunk's share of them one run of its projection
 * (thin-projection.ts). Walked chunk by chunk, not item by item as
 * subset-page.ts walks any positions: a page of 1,000 customers spans ~56
 * chunks, so this is ~56 lookups and ~56 views instead of 1,000 steps
 * and a comma piece per chunk.
 */
import { KIND_SPECS } from '../../domain/kinds.js';
import type { SnapshotMeta } from '../../store/store.js';
import { addRun, loadRuns } from './page-chunks.js';
import { PageWriter, VIEW_ITEM_FROM_BYTES, VIEW_RUN_FROM_BYTES } from './page-writer.js';
import { chunkIndexOf, type ChunkSource } from './snapshot-reader.js';
import type { FieldMask } from './subset-query.js';
import { keptRuns, maskKeyOf, projectionOf, type Projection, type ProjectionCache } from './thin-projection.js';

/** The items at positions `from..to` (exclusive) trimmed to `fields` (whose `data` is false), joined by commas. */
export async function renderThinRange(
  source: ChunkSource,
  meta: SnapshotMeta,
  from: number,
  to: number,
  fields: FieldMask,
  projections: ProjectionCache | null,
): Promise<Buffer[]> {
  if (from >= to) return [];
  const starts = meta.chunkStarts;
  const first = chunkIndexOf(starts, from);
  const last = chunkIndexOf(starts, to - 1);
  const maskKey = maskKeyOf(fields);
  const kept: (Projection | undefined)[] = new Array(last - first + 1);
  const missing: number[] = [];
  for (let c = first; c <= last; c++) {
    const p = projections?.peek(meta.id, maskKey, c);
    if (p) kept[c - first] = p;
    else addRun(missing, c);
  }
  const thin = await loadRuns(missing, (a, b) => source.cachedThinChunks(meta, a, b), (a, b) => source.thinChunks(meta, a, b));
  const f = KIND_SPECS[meta.kind].fields.length;
  const runs = fields.keep.every(Boolean) ? null : keptRuns(fields);
  const out = new PageWriter();
  for (let c = first; c <= last; c++) {
    let p = kept[c - first];
    if (!p) {
      const t = thin.get(c);
      if (!t) throw new Error(`snapshot ${meta.id}: no thin chunk ${c}`);
      p = projectionOf(projections, meta.id, maskKey, t, f, runs);
    }
    const lo = Math.max(from, p.firstPos) - p.firstPos;
    const hi = Math.min(to, starts[c + 1] ?? meta.count) - p.firstPos;
    out.entry(p.bytes, p.offsets[lo]!, p.offsets[hi]! - 1, lo > 0 || p.leadingComma, hi - lo > 1 ? VIEW_RUN_FROM_BYTES : VIEW_ITEM_FROM_BYTES);
  }
  return out.finish();
}
