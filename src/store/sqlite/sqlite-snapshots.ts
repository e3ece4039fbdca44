/**
 * Snapshot writing and reading for the SQLite adapter. Records are staged in
 * a TEMP table (SQLite's separate temporary database: no WAL traffic), compared
 * with the live snapshot in SQL, then read back in list order to write
 * positions and chunks. Nothing is visible to readers until `publish`.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Kind } from '../../domain/kinds.js';
import { ChunkBuilder, decodeUint32s, encodeUint32s } from '../chunk-builder.js';
import { cachedStatement } from './sqlite-statements.js';
import {
  DuplicateIdError,
  type Chunk,
  type RecordRef,
  type SnapshotChanges,
  type SnapshotMeta,
  type SnapshotSpec,
  type StagedRecord,
  type StagedSnapshot,
} from '../store.js';

/** Rows read back per keyset page while laying out chunks. */
const ORDERED_PAGE = 2000;
const MAX_DUPLICATES_REPORTED = 10;

export function newPublicId(): string {
  // 16 hex characters: unique enough across databases for ETags never to collide.
  return randomBytes(8).toString('hex');
}

export async function writeSnapshot(
  db: Database,
  spec: SnapshotSpec,
  records: AsyncIterable<StagedRecord[]>,
): Promise<StagedSnapshot> {
  const prev = db
    .prepare('SELECT snapshot_id FROM live_snapshots WHERE company_id = ? AND kind = ?')
    .pluck()
    .get(spec.companyId, spec.kind) as number | undefined;
  const snapshotId = Number(
    db
      .prepare(
        `INSERT INTO snapshots (public_id, company_id, kind, import_id, state, created_at, columns)
         VALUES (?, ?, ?, ?, 'staging', ?, ?)`,
      )
      .run(newPublicId(), spec.companyId, spec.kind, spec.importId, Date.now(), JSON.stringify(spec.columns))
      .lastInsertRowid,
  );
  // A TEMP table lives in SQLite's temporary database: no WAL traffic, gone with the connection.
  const stage = `stage_${snapshotId}`;
  try {
    db.exec(`CREATE TEMP TABLE ${stage} (
      rid INTEGER PRIMARY KEY, id_erp TEXT NOT NULL UNIQUE, line INTEGER NOT NULL,
      hash BLOB NOT NULL, body TEXT NOT NULL, ts INTEGER NOT NULL)`);
    await stageRecords(db, stage, spec.at, records);
    const changes = detectChanges(db, stage, prev ?? null);
    layOut(db, stage, snapshotId);
    return { snapshotId, changes };
  } catch (err) {
    discardSnapshot(db, snapshotId);
    throw err;
  } finally {
    db.exec(`DROP TABLE IF EXISTS ${stage}`);
  }
}

async function stageRecords(db: Database, stage: string, at: number, records: AsyncIterable<StagedRecord[]>) {
  const insert = db.prepare(
    `INSERT INTO ${stage} (id_erp, line, hash, body, ts) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id_erp) DO NOTHING`,
  );
  const firstLine = db.prepare(`SELECT line FROM ${stage} WHERE id_erp = ?`).pluck();
  const duplicates: { idErp: string; line: number; firstLine: number }[] = [];
  const stageBatch = db.transaction((batch: StagedRecord[]) => {
    for (const r of batch) {
      if (insert.run(r.idErp, r.line, r.hash, r.body, at).changes === 0 && duplicates.length < MAX_DUPLICATES_REPORTED) {
        duplicates.push({ idErp: r.idErp, line: r.line, firstLine: firstLine.get(r.idErp) as number });
      }
    }
  });
  for await (const batch of records) stageBatch(batch);
  if (duplicates.length > 0) throw new DuplicateIdError(duplicates);
}

function detectChanges(db: Database, stage: string, prev: number | null): SnapshotChanges {
  const total = db.prepare(`SELECT count(*) FROM ${stage}`).pluck().get() as number;
  if (prev === null) return { total, inserted: total, updated: 0, unchanged: 0, deleted: 0, deletedExamples: [] };
  // An unchanged record keeps the time of the import that last changed it.
  const unchanged = db
    .prepare(
      `UPDATE ${stage} SET ts = r.actualizado_at FROM main.records r
       WHERE r.snapshot_id = ? AND r.id_erp = ${stage}.id_erp AND r.hash = ${stage}.hash`,
    )
    .run(prev).changes;
  const matched = db
    .prepare(`SELECT count(*) FROM ${stage} s JOIN main.records r ON r.snapshot_id = ? AND r.id_erp = s.id_erp`)
    .pluck()
    .get(prev) as number;
  const prevCount = db.prepare('SELECT record_count FROM snapshots WHERE id = ?').pluck().get(prev) as number;
  const deletedExamples = db
    .prepare(
      `SELECT id_erp FROM main.records r WHERE r.snapshot_id = ?
       AND NOT EXISTS (SELECT 1 FROM ${stage} s WHERE s.id_erp = r.id_erp) ORDER BY r.id_erp LIMIT 5`,
    )
    .pluck()
    .all(prev) as string[];
  return {
    total,
    inserted: total - matched,
    updated: matched - unchanged,
    unchanged,
    deleted: prevCount - matched,
    deletedExamples,
  };
}

/** Reads staged records in list order and writes positions and chunks. */
function layOut(db: Database, stage: string, snapshotId: number) {
  db.exec(`CREATE INDEX ${stage}_order ON ${stage} (ts, id_erp)`);
  const first = db.prepare(`SELECT id_erp, hash, body, ts FROM ${stage} ORDER BY ts, id_erp LIMIT ${ORDERED_PAGE}`);
  const next = db.prepare(
    `SELECT id_erp, hash, body, ts FROM ${stage} WHERE (ts, id_erp) > (?, ?) ORDER BY ts, id_erp LIMIT ${ORDERED_PAGE}`,
  );
  const insertRecord = db.prepare(
    'INSERT INTO records (snapshot_id, id_erp, pos, actualizado_at, hash) VALUES (?, ?, ?, ?, ?)',
  );
  const insertChunk = db.prepare(
    'INSERT INTO chunks (snapshot_id, chunk_no, first_pos, offsets, bytes) VALUES (?, ?, ?, ?, ?)',
  );
  const builder = new ChunkBuilder();
  const writeChunk = (c: Chunk | null) => {
    if (c) insertChunk.run(snapshotId, c.chunkNo, c.firstPos, encodeUint32s(c.offsets), c.bytes);
  };
  type Staged = { id_erp: string; hash: Buffer; body: string; ts: number };
  const writePage = db.transaction((rows: Staged[]) => {
    for (const r of rows) {
      insertRecord.run(snapshotId, r.id_erp, builder.count, r.ts, r.hash);
      writeChunk(builder.add(r.body, r.ts));
    }
  });
  let rows = first.all() as Staged[];
  while (rows.length > 0) {
    writePage(rows);
    const last = rows[rows.length - 1]!;
    rows = next.all(last.ts, last.id_erp) as Staged[];
  }
  db.transaction(() => {
    writeChunk(builder.flush());
    db.prepare(
      `UPDATE snapshots SET state = 'staged', record_count = ?, chunk_starts = ?, timeline = ? WHERE id = ?`,
    ).run(builder.count, encodeUint32s(builder.chunkStarts()), JSON.stringify(builder.timelineEntries()), snapshotId);
  })();
}

export function publishSnapshot(db: Database, snapshotId: number, finish?: { importId: number; report: unknown }) {
  db.transaction(() => {
    const snap = db.prepare('SELECT company_id, kind, state FROM snapshots WHERE id = ?').get(snapshotId) as
      | { company_id: number; kind: Kind; state: string }
      | undefined;
    if (!snap || snap.state !== 'staged') throw new Error(`snapshot ${snapshotId} is not staged`);
    const now = Date.now();
    db.prepare(
      `UPDATE snapshots SET state = 'superseded', superseded_at = ?
       WHERE id = (SELECT snapshot_id FROM live_snapshots WHERE company_id = ? AND kind = ?)`,
    ).run(now, snap.company_id, snap.kind);
    db.prepare(
      `INSERT INTO live_snapshots (company_id, kind, snapshot_id) VALUES (?, ?, ?)
       ON CONFLICT (company_id, kind) DO UPDATE SET snapshot_id = excluded.snapshot_id`,
    ).run(snap.company_id, snap.kind, snapshotId);
    db.prepare(`UPDATE snapshots SET state = 'live' WHERE id = ?`).run(snapshotId);
    if (finish) {
      db.prepare(
        `UPDATE imports SET status = 'succeeded', finished_at = ?, report = ?, snapshot_id = ?, error = NULL WHERE id = ?`,
      ).run(now, JSON.stringify(finish.report), snapshotId, finish.importId);
    }
  })();
}

export function discardSnapshot(db: Database, snapshotId: number) {
  db.transaction(() => {
    // A live snapshot is never removed, nor are its records and chunks.
    if (db.prepare(`DELETE FROM snapshots WHERE id = ? AND state <> 'live'`).run(snapshotId).changes === 0) return;
    db.prepare('DELETE FROM chunks WHERE snapshot_id = ?').run(snapshotId);
    db.prepare('DELETE FROM records WHERE snapshot_id = ?').run(snapshotId);
  })();
}

export function snapshotMeta(db: Database, snapshotId: number): SnapshotMeta | null {
  const r = cachedStatement(
    db,
    `SELECT id, public_id, company_id, kind, record_count, created_at, chunk_starts, timeline, columns
     FROM snapshots WHERE id = ? AND state IN ('staged', 'live', 'superseded')`,
  ).get(snapshotId) as
    | {
        id: number; public_id: string; company_id: number; kind: Kind; record_count: number; created_at: number;
        chunk_starts: Buffer; timeline: string; columns: string;
      }
    | undefined;
  if (!r) return null;
  return {
    id: r.id,
    publicId: r.public_id,
    companyId: r.company_id,
    kind: r.kind,
    count: r.record_count,
    createdAt: r.created_at,
    chunkStarts: decodeUint32s(r.chunk_starts),
    timeline: JSON.parse(r.timeline),
    columns: JSON.parse(r.columns),
  };
}

export function readChunks(db: Database, snapshotId: number, from: number, to: number): Chunk[] {
  const rows = cachedStatement(
    db,
    `SELECT chunk_no, first_pos, offsets, bytes FROM chunks
     WHERE snapshot_id = ? AND chunk_no BETWEEN ? AND ? ORDER BY chunk_no`,
  ).all(snapshotId, from, to) as { chunk_no: number; first_pos: number; offsets: Buffer; bytes: Buffer }[];
  return rows.map((r) => ({ chunkNo: r.chunk_no, firstPos: r.first_pos, offsets: decodeUint32s(r.offsets), bytes: r.bytes }));
}

export function findRecord(db: Database, snapshotId: number, idErp: string): RecordRef | null {
  const r = cachedStatement(db, 'SELECT pos, hash, actualizado_at FROM records WHERE snapshot_id = ? AND id_erp = ?').get(
    snapshotId,
    idErp,
  ) as { pos: number; hash: Buffer; actualizado_at: number } | undefined;
  return r ? { pos: r.pos, hash: r.hash, actualizadoAt: r.actualizado_at } : null;
}

/** Grace period before an unpublished snapshot with no live import counts as abandoned. */
const ABANDONED_AFTER_MS = 10 * 60 * 1000;

export function sweepSnapshots(db: Database, supersededBefore: number): number {
  const ids = db
    .prepare(
      `SELECT id FROM snapshots s WHERE (s.state = 'superseded' AND s.superseded_at < ?)
         OR (s.state IN ('staging', 'staged') AND s.created_at < ? AND NOT EXISTS (
           SELECT 1 FROM imports i WHERE i.id = s.import_id AND i.status IN ('running', 'awaiting_confirmation')))`,
    )
    .pluck()
    .all(supersededBefore, Date.now() - ABANDONED_AFTER_MS) as number[];
  for (const id of ids) discardSnapshot(db, id);
  return ids.length;
}
