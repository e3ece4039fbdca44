/**
 * The sandbox served through the same read path as real data: its fixed rows
 * are rendered and laid out into in-memory snapshots once, at start.
 */
import { createHash } from 'node:crypto';
import { compareUtf8, hashBody, isoTime, ItemRenderer } from '../domain/item-renderer.js';
import { KINDS, type Kind } from '../domain/kinds.js';
import { ChunkBuilder } from '../store/chunk-builder.js';
import type { Chunk, RecordRef, SnapshotMeta, ThinChunk } from '../store/store.js';
import { decodeIndex, type SnapshotIndex } from '../store/snapshot-index.js';
import type { ChunkSource } from '../snapshots/chunk-source.js';
import { renderTombstones, type RenderedTombstone } from '../snapshots/tombstones.js';
import { sandboxDataset } from './sandbox-data.js';

export interface SandboxSnapshot {
  meta: SnapshotMeta;
  chunks: Chunk[];
  /** The same items without `data`, and the filter indexes: built once, as an import builds them. */
  thinChunks: ThinChunk[];
  indexes: Map<string, SnapshotIndex>;
  records: Map<string, RecordRef>;
  /** Fictitious removed records, so include_deleted can be tried. */
  tombstones: RenderedTombstone[];
}

/** Ids of sandbox records "removed" by later imports; none exists in the data. */
const REMOVED_IDS: Record<Kind, [string, string]> = {
  clientes: ['C000900', 'C000901'],
  articulos: ['BAJ000900', 'BAJ000901'],
  obras: ['OB000900', 'OB000901'],
  'avisos-correctivo': ['AV0000900', 'AV0000901'],
};

function buildKind(kind: Kind, id: number): SandboxSnapshot {
  const { columns, rows } = sandboxDataset()[kind];
  const renderer = new ItemRenderer(kind, columns);
  const staged = rows.map((r) => {
    const body = renderer.body(r.fields, r.cells);
    return { idErp: String(r.fields[0]), body, hash: hashBody(body), at: r.actualizadoAt };
  });
  staged.sort((a, b) => a.at - b.at || compareUtf8(a.idErp, b.idErp));
  const builder = new ChunkBuilder({ kind });
  const chunks: Chunk[] = [];
  const records = new Map<string, RecordRef>();
  const digest = createHash('sha256');
  for (const r of staged) {
    records.set(r.idErp, { pos: builder.count, hash: r.hash, actualizadoAt: r.at });
    digest.update(r.body).update(isoTime(r.at)).update('"}');
    const chunk = builder.add(r.body, r.at);
    if (chunk) chunks.push(chunk);
  }
  const last = builder.flush();
  if (last) chunks.push(last);
  const meta: SnapshotMeta = {
    id,
    publicId: `sandbox-${digest.digest('hex').slice(0, 16)}`,
    companyId: 0,
    kind,
    count: builder.count,
    createdAt: 0,
    chunkStarts: builder.chunkStarts(),
    timeline: builder.timelineEntries(),
    columns: [...columns],
    // The sandbox's last 'import': its newest record.
    publishedAt: Math.max(...rows.map((r) => r.actualizadoAt)),
    indexed: true,
  };
  const indexes = new Map([...builder.indexes()].map((ix) => [ix.name, decodeIndex(ix.bytes)]));
  const thinChunks = chunks.map((c) => c.thin!);
  // Removed by the second and by the latest of the sandbox's imports.
  const times = meta.timeline.map((t) => t.at);
  const [first, second] = REMOVED_IDS[kind];
  const tombstones = renderTombstones([
    { idErp: first, deletedAt: times[Math.min(1, times.length - 1)]! },
    { idErp: second, deletedAt: times[times.length - 1]! },
  ]);
  return { meta, chunks, thinChunks, indexes, records, tombstones };
}

export class SandboxSnapshots implements ChunkSource {
  readonly byKind: Readonly<Record<Kind, SandboxSnapshot>>;

  constructor() {
    const byKind = {} as Record<Kind, SandboxSnapshot>;
    // Negative ids can never collide with a stored snapshot's.
    KINDS.forEach((kind, i) => (byKind[kind] = buildKind(kind, -1 - i)));
    this.byKind = byKind;
  }

  async meta(snapshotId: number): Promise<SnapshotMeta | null> {
    return this.cachedMeta(snapshotId) ?? null;
  }

  async chunks(meta: SnapshotMeta, from: number, to: number): Promise<Chunk[]> {
    return this.cachedChunks(meta, from, to);
  }

  /** The sandbox lives in memory: always known. */
  cachedMeta(snapshotId: number): SnapshotMeta | undefined {
    return Object.values(this.byKind).find((s) => s.meta.id === snapshotId)?.meta;
  }

  cachedChunks(meta: SnapshotMeta, from: number, to: number): Chunk[] {
    return this.byKind[meta.kind].chunks.slice(from, to + 1);
  }

  async thinChunks(meta: SnapshotMeta, from: number, to: number): Promise<ThinChunk[]> {
    return this.cachedThinChunks(meta, from, to);
  }

  cachedThinChunks(meta: SnapshotMeta, from: number, to: number): ThinChunk[] {
    return this.byKind[meta.kind].thinChunks.slice(from, to + 1);
  }

  async index(meta: SnapshotMeta, name: string): Promise<SnapshotIndex | null> {
    return this.byKind[meta.kind].indexes.get(name) ?? null;
  }
}
