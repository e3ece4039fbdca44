/**
 * Snapshots in the PostgreSQL adapter: publishing, discarding, sweeping, and
 * the reads of the request path. Writing one is postgres-snapshot-writer.ts.
 */
import type { Kind } from '../../domain/kinds.js';
import { CURRENT_HASH, type HashAlgorithm } from '../../domain/item-renderer.js';
import { decodeUint32s } from '../chunk-builder.js';
import { joinParts } from '../snapshot-index.js';
import { LIVE_CHANNEL } from './postgres-live-listener.js';
import {
  DEFAULT_TOMBSTONE_RETENTION_MS,
  type SnapshotRef,
  type Tombstone,
  type ThinChunk,
  type Chunk,
  type ItemRef,
  type RecordRef,
  type RecordRow,
  type SnapshotMeta,
} from '../store.js';
import type { AuditEvent } from '../../domain/audit.js';
import { insertAudit } from './postgres-audit.js';
import type { Conn, Db } from './postgres-connection.js';
import { copyOut, int4, sqlInt } from './postgres-copy-out.js';
import { recordImportEnd } from './postgres-events.js';
import { SNAPSHOT_META_COLUMNS, toHashAlgorithm, toSnapshotMeta, type SnapshotRow } from '../row-mappers.js';

export { writeSnapshot } from './postgres-snapshot-writer.js';

/**
 * Grace period before an unpublished snapshot counts as abandoned, unless its import is
 * still being stored or queued (a prepared import, see imports/prepared-import.ts), running,
 * or awaiting confirmation.
 */
const ABANDONED_AFTER_MS = 10 * 60 * 1000;

export async function publishSnapshot(
  db: Db,
  snapshotId: number,
  finish?: { importId: number; report: unknown },
  tombstoneRetentionMs = DEFAULT_TOMBSTONE_RETENTION_MS,
  audit?: AuditEvent,
) {
  await db.tx(async (c) => {
    const snap = await c.one<{ company_id: number; kind: Kind; state: string; import_at: number | null; public_id: string }>(
      'SELECT company_id, kind, state, import_at, public_id FROM snapshots WHERE id = $1 FOR UPDATE',
      [snapshotId],
    );
    if (!snap || snap.state !== 'staged') throw new Error(`snapshot ${snapshotId} is not staged`);
    const now = Date.now();
    // Locks the pointer row first: concurrent publishes of one company and kind queue here.
    const prev = await c.one<{ snapshot_id: number }>(
      'SELECT snapshot_id FROM live_snapshots WHERE company_id = $1 AND kind = $2 FOR UPDATE',
      [snap.company_id, snap.kind],
    );
    if (prev) await writeTombstones(c, prev.snapshot_id, snapshotId, snap.import_at ?? now, now - tombstoneRetentionMs);
    await c.run(
      `INSERT INTO live_snapshots (company_id, kind, snapshot_id) VALUES ($1, $2, $3)
       ON CONFLICT (company_id, kind) DO UPDATE SET snapshot_id = excluded.snapshot_id`,
      [snap.company_id, snap.kind, snapshotId],
    );
    await c.run(
      `UPDATE snapshots SET state = 'superseded', superseded_at = $3
       WHERE company_id = $1 AND kind = $2 AND state = 'live'`,
      [snap.company_id, snap.kind, now],
    );
    await c.run(`UPDATE snapshots SET state = 'live', published_at = $2 WHERE id = $1`, [snapshotId, now]);
    // Delivered at commit to every serving process (postgres-live-listener.ts).
    await c.run(`SELECT pg_notify('${LIVE_CHANNEL}', '')`);
    if (finish) {
      await c.run(
        `UPDATE imports SET status = 'succeeded', finished_at = $1, report = $2, snapshot_id = $3, error = NULL WHERE id = $4`,
        [now, JSON.stringify(finish.report), snapshotId, finish.importId],
      );
      // The outbox: the event commits with the publication, or neither happens.
      await recordImportEnd(c, { importId: finish.importId, type: 'import.published', snapshot: snap.public_id, report: finish.report, at: now });
    }
    if (audit) await insertAudit(c, audit);
  });
}

/** Ends an import whose file changed nothing: the live snapshot stays, untouched (see Store.keepLiveSnapshot). */
export async function keepLiveSnapshot(db: Db, snapshotId: number, finish: { importId: number; report: unknown }) {
  await db.tx(async (c) => {
    // FOR SHARE: a publication of the same company and kind waits for this end, or this sees it.
    const snap = await c.one<{ state: string; public_id: string }>('SELECT state, public_id FROM snapshots WHERE id = $1 FOR SHARE', [snapshotId]);
    if (!snap || snap.state !== 'live') throw new Error(`snapshot ${snapshotId} is no longer live`);
    const now = Date.now();
    await c.run(
      `UPDATE imports SET status = 'succeeded', finished_at = $1, report = $2, snapshot_id = $3, error = NULL WHERE id = $4`,
      [now, JSON.stringify(finish.report), snapshotId, finish.importId],
    );
    await recordImportEnd(c, { importId: finish.importId, type: 'import.published', snapshot: snap.public_id, report: finish.report, at: now });
  });
}

/**
 * The new snapshot's tombstones: the previous one's that are recent enough
 * and not back, plus the previous records the new snapshot lacks.
 */
async function writeTombstones(c: Conn, prev: number, next: number, removedAt: number, keepAfter: number) {
  await c.run(
    `INSERT INTO snapshot_tombstones (snapshot_id, id_erp, deleted_at)
     SELECT $1, t.id_erp, t.deleted_at FROM snapshot_tombstones t
     WHERE t.snapshot_id = $2 AND t.deleted_at >= $3
       AND NOT EXISTS (SELECT 1 FROM records r WHERE r.snapshot_id = $1 AND r.id_erp = t.id_erp)`,
    [next, prev, keepAfter],
  );
  await c.run(
    `INSERT INTO snapshot_tombstones (snapshot_id, id_erp, deleted_at)
     SELECT $1, p.id_erp, $3 FROM records p
     WHERE p.snapshot_id = $2 AND NOT EXISTS (SELECT 1 FROM records r WHERE r.snapshot_id = $1 AND r.id_erp = p.id_erp)
     ON CONFLICT (snapshot_id, id_erp) DO UPDATE SET deleted_at = excluded.deleted_at`,
    [next, prev, removedAt],
  );
}

export async function snapshotByPublicId(db: Db, companyId: number, kind: Kind, publicId: string): Promise<SnapshotRef | null> {
  if (publicId.includes('\0')) return null;
  const r = await db.one<{ id: number; state: SnapshotRef['state']; superseded_at: number | null }>(
    `SELECT id, state, superseded_at FROM snapshots
     WHERE public_id = $1 AND company_id = $2 AND kind = $3 AND state IN ('staged', 'live', 'superseded')`,
    [publicId, companyId, kind],
  );
  return r ? { id: r.id, state: r.state, supersededAt: r.superseded_at } : null;
}

export async function readTombstones(db: Db, snapshotId: number): Promise<Tombstone[]> {
  const rows = await db.rows<{ id_erp: string; deleted_at: number }>(
    'SELECT id_erp, deleted_at FROM snapshot_tombstones WHERE snapshot_id = $1 ORDER BY deleted_at, id_erp',
    [snapshotId],
  );
  return rows.map((r) => ({ idErp: r.id_erp, deletedAt: r.deleted_at }));
}

/** Removes a snapshot that is not live, with its records and chunks; false when there was none. */
export async function discardSnapshot(db: Db, snapshotId: number): Promise<boolean> {
  return db.tx(
    async (c) => {
      // SKIP LOCKED: a snapshot that an import being written reuses chunks of (its row held FOR
      // KEY SHARE, postgres-snapshot-writer.ts) stays until a later sweep.
      const deleted = await c.run(
        `DELETE FROM snapshots WHERE id = (SELECT id FROM snapshots WHERE id = $1 AND state <> 'live' FOR UPDATE SKIP LOCKED)`,
        [snapshotId],
      );
      if (deleted === 0) return false;
      // Stored chunks and segments may be shared with other snapshots (chunk-reuse.ts): those of
      // this one's map go once no map row names them any more.
      const named = (await c.one<{ sources: string[]; segments: string[] }>(
        `SELECT coalesce(array_agg(DISTINCT src_snapshot), '{}') AS sources, coalesce(array_agg(DISTINCT seg_snapshot), '{}') AS segments
         FROM chunk_map WHERE snapshot_id = $1`,
        [snapshotId],
      ))!;
      const sources = [...new Set([snapshotId, ...named.sources.map(Number)])];
      const segments = [...new Set([snapshotId, ...named.segments.map(Number)])];
      await c.run('DELETE FROM chunk_map WHERE snapshot_id = $1', [snapshotId]);
      for (const table of ['chunks', 'thin_chunks']) {
        await c.run(
          `DELETE FROM ${table} x WHERE x.snapshot_id = ANY($1::bigint[]) AND NOT EXISTS (
             SELECT 1 FROM chunk_map m WHERE m.src_snapshot = x.snapshot_id AND m.src_chunk = x.chunk_no)`,
          [sources],
        );
      }
      await c.run(
        `DELETE FROM chunk_segments x WHERE x.snapshot_id = ANY($1::bigint[]) AND NOT EXISTS (
           SELECT 1 FROM chunk_map m WHERE m.seg_snapshot = x.snapshot_id AND m.seg_chunk = x.chunk_no)`,
        [segments],
      );
      await c.run('DELETE FROM snapshot_indexes WHERE snapshot_id = $1', [snapshotId]);
      await c.run('DELETE FROM records WHERE snapshot_id = $1', [snapshotId]);
      await c.run('DELETE FROM snapshot_tombstones WHERE snapshot_id = $1', [snapshotId]);
      return true;
    },
    { unbounded: true },
  );
}

export async function liveSnapshotId(db: Db, companyId: number, kind: Kind): Promise<number | null> {
  const r = await db.one<{ snapshot_id: number }>(
    'SELECT snapshot_id FROM live_snapshots WHERE company_id = $1 AND kind = $2',
    [companyId, kind],
    'mirador_live_snapshot',
  );
  return r?.snapshot_id ?? null;
}

export async function nextHashAlgorithm(db: Db, companyId: number, kind: Kind): Promise<HashAlgorithm> {
  const r = await db.one<{ hash_algorithm: string }>(
    `SELECT s.hash_algorithm FROM live_snapshots l JOIN snapshots s ON s.id = l.snapshot_id WHERE l.company_id = $1 AND l.kind = $2`,
    [companyId, kind],
  );
  return r ? toHashAlgorithm(r.hash_algorithm) : CURRENT_HASH;
}

export async function snapshotMeta(db: Db, snapshotId: number): Promise<SnapshotMeta | null> {
  const r = await db.one<SnapshotRow>(
    `SELECT ${SNAPSHOT_META_COLUMNS}
     FROM snapshots WHERE id = $1 AND state IN ('staged', 'live', 'superseded')`,
    [snapshotId],
    'mirador_snapshot_meta',
  );
  return r ? toSnapshotMeta(r) : null;
}

export async function readChunks(db: Db, snapshotId: number, from: number, to: number): Promise<Chunk[]> {
  const rows = await copyOut(
    db,
    `SELECT m.chunk_no, m.first_pos, c.offsets, c.bytes FROM chunk_map m
     JOIN chunks c ON c.snapshot_id = m.src_snapshot AND c.chunk_no = m.src_chunk
     WHERE m.snapshot_id = ${sqlInt(snapshotId)} AND m.chunk_no BETWEEN ${sqlInt(from)} AND ${sqlInt(to)} ORDER BY m.chunk_no`,
  );
  return rows.map((r) => ({ chunkNo: int4(r[0]!), firstPos: int4(r[1]!), offsets: decodeUint32s(r[2]!), bytes: r[3]! }));
}

/**
 * Item `index` of the snapshot's chunk `chunkNo`: its bounds read from the
 * chunk's offsets (little-endian uint32s) by the server, which sends only the
 * item, not the whole chunk as hex.
 */
export async function readItem(db: Db, snapshotId: number, chunkNo: number, index: number): Promise<Buffer | null> {
  const start = uint32At('c.offsets', '4 * $3::int');
  const stop = uint32At('c.offsets', '4 * $3::int + 4');
  // CASE, not WHERE, guards get_byte: PostgreSQL evaluates a CASE's branch only when its condition holds.
  const r = await db.one<{ item: Buffer | null }>(
    `SELECT CASE WHEN $3::int >= 0 AND length(c.offsets) >= 4 * ($3::int + 2)
       THEN substring(c.bytes FROM ${start} + 1 FOR ${stop} - 1 - ${start}) END AS item
     FROM chunk_map m JOIN chunks c ON c.snapshot_id = m.src_snapshot AND c.chunk_no = m.src_chunk
     WHERE m.snapshot_id = $1 AND m.chunk_no = $2`,
    [snapshotId, chunkNo, index],
    'mirador_read_item',
  );
  return r?.item ?? null;
}

/** `readItem` of several items in one query (by COPY, as chunks: 100 items are ~170 KB), in the order asked for. */
export async function readItems(db: Db, snapshotId: number, items: readonly ItemRef[]): Promise<(Buffer | null)[]> {
  if (items.length === 0) return [];
  const start = uint32At('c.offsets', '4 * w.k');
  const stop = uint32At('c.offsets', '4 * w.k + 4');
  const array = (ns: number[]) => `'{${ns.map(sqlInt).join(',')}}'::int[]`;
  const rows = await copyOut(
    db,
    `SELECT w.i::int, CASE WHEN w.k >= 0 AND length(c.offsets) >= 4 * (w.k + 2)
       THEN substring(c.bytes FROM ${start} + 1 FOR ${stop} - 1 - ${start}) END
     FROM unnest(${array(items.map((r) => r.chunkNo))}, ${array(items.map((r) => r.index))}) WITH ORDINALITY AS w(chunk_no, k, i)
     JOIN chunk_map m ON m.snapshot_id = ${sqlInt(snapshotId)} AND m.chunk_no = w.chunk_no
     JOIN chunks c ON c.snapshot_id = m.src_snapshot AND c.chunk_no = m.src_chunk`,
  );
  const out: (Buffer | null)[] = new Array<Buffer | null>(items.length).fill(null);
  for (const r of rows) if (r[1]) out[int4(r[0]!) - 1] = r[1];
  return out;
}

/**
 * SQL for the little-endian uint32 at byte `at` of `blob` (an int: chunks are
 * far below 2 GiB). Parenthesised term by term: PostgreSQL gives `|` and `<<`
 * the same precedence.
 */
function uint32At(blob: string, at: string): string {
  const byte = (i: number) => `(get_byte(${blob}, ${at} + ${i}) << ${8 * i})`;
  return `(${byte(0)} | ${byte(1)} | ${byte(2)} | ${byte(3)})`;
}

export async function readThinChunks(db: Db, snapshotId: number, from: number, to: number): Promise<ThinChunk[]> {
  const rows = await copyOut(
    db,
    `SELECT m.chunk_no, m.first_pos, t.bounds, t.bytes FROM chunk_map m
     JOIN thin_chunks t ON t.snapshot_id = m.src_snapshot AND t.chunk_no = m.src_chunk
     WHERE m.snapshot_id = ${sqlInt(snapshotId)} AND m.chunk_no BETWEEN ${sqlInt(from)} AND ${sqlInt(to)} ORDER BY m.chunk_no`,
  );
  return rows.map((r) => ({ chunkNo: int4(r[0]!), firstPos: int4(r[1]!), bounds: decodeUint32s(r[2]!), bytes: r[3]! }));
}

/** Index names are the import's own (`eq:estado`, `q`, `range:fecha`); anything else is refused before it reaches SQL. */
const INDEX_NAME = /^[a-z_]+(:[a-z_]+)?$/;

export async function readIndex(db: Db, snapshotId: number, name: string): Promise<Buffer | null> {
  if (!INDEX_NAME.test(name)) throw new TypeError(`not an index name: ${JSON.stringify(name)}`);
  const rows = await copyOut(db, `SELECT bytes FROM snapshot_indexes WHERE snapshot_id = ${sqlInt(snapshotId)} AND name = '${name}' ORDER BY part`);
  return joinParts(rows.map((r) => r[0]!));
}

export async function findRecord(db: Db, snapshotId: number, idErp: string): Promise<RecordRef | null> {
  // PostgreSQL text cannot hold NUL, so no record has it (and the query would fail).
  if (idErp.includes('\0')) return null;
  const r = await db.one<{ pos: number; hash: Buffer; actualizado_at: number }>(
    'SELECT pos, hash, actualizado_at FROM records WHERE snapshot_id = $1 AND id_erp = $2',
    [snapshotId, idErp],
    'mirador_find_record',
  );
  return r ? { pos: r.pos, hash: r.hash, actualizadoAt: r.actualizado_at } : null;
}

export async function readRecordPage(db: Db, snapshotId: number, after: string | null, limit: number): Promise<RecordRow[]> {
  const rows =
    after === null
      ? await db.rows<{ id_erp: string; pos: number; hash: Buffer }>(
          'SELECT id_erp, pos, hash FROM records WHERE snapshot_id = $1 ORDER BY id_erp LIMIT $2',
          [snapshotId, limit],
          'mirador_record_page_first',
        )
      : await db.rows<{ id_erp: string; pos: number; hash: Buffer }>(
          'SELECT id_erp, pos, hash FROM records WHERE snapshot_id = $1 AND id_erp > $2 ORDER BY id_erp LIMIT $3',
          [snapshotId, after, limit],
          'mirador_record_page',
        );
  return rows.map((r) => ({ idErp: r.id_erp, pos: r.pos, hash: r.hash }));
}

export async function findLiveRecord(db: Db, companyId: number, kind: Kind, idErp: string) {
  // PostgreSQL text cannot hold NUL, so no record has it (and the query would fail).
  if (idErp.includes('\0')) {
    const snapshotId = await liveSnapshotId(db, companyId, kind);
    return snapshotId === null ? null : { snapshotId, record: null };
  }
  const r = await db.one<{ snapshot_id: number; pos: number | null; hash: Buffer | null; actualizado_at: number | null }>(
    `SELECT l.snapshot_id, r.pos, r.hash, r.actualizado_at FROM live_snapshots l
     LEFT JOIN records r ON r.snapshot_id = l.snapshot_id AND r.id_erp = $3
     WHERE l.company_id = $1 AND l.kind = $2`,
    [companyId, kind, idErp],
    'mirador_find_live_record',
  );
  if (!r) return null;
  const record = r.pos === null ? null : { pos: r.pos, hash: r.hash!, actualizadoAt: r.actualizado_at! };
  return { snapshotId: r.snapshot_id, record };
}

export async function sweepSnapshots(db: Db, supersededBefore: number): Promise<number> {
  const ids = await db.rows<{ id: number }>(
    `SELECT id FROM snapshots s WHERE (s.state = 'superseded' AND s.superseded_at < $1)
       OR (s.state IN ('staging', 'staged') AND s.created_at < $2 AND NOT EXISTS (
         SELECT 1 FROM imports i WHERE i.id = s.import_id AND i.status IN ('receiving', 'queued', 'running', 'awaiting_confirmation')))`,
    [supersededBefore, Date.now() - ABANDONED_AFTER_MS],
  );
  let removed = 0;
  for (const { id } of ids) if (await discardSnapshot(db, id)) removed++;
  return removed;
}
