/**
 * Writes a snapshot for the SQLite adapter: each record's position, id, time
 * and hash (`records`), and the items in list order (`chunks`). Nothing is
 * visible to readers until `publishSnapshot`.
 *
 * Two ways, chosen as records arrive:
 * - In order: with no previous snapshot, every record is new and gets the
 *   import's time, so list order is id order; while ids arrive in increasing
 *   byte order (ERP exports are usually sorted by their code), arrival order
 *   is list order, and records and chunks are written as they stream in.
 * - Staged (sqlite-stage.ts): otherwise. Records are staged, compared with the
 *   previous snapshot, and laid out afterwards in list order. When records
 *   stop arriving in order midway, what was written is moved to the stage.
 *   When the comparison finds nothing inserted, updated or deleted (and the
 *   spec asks for it), nothing is laid out: the live snapshot is kept.
 *
 * While it writes, the connection checkpoints the WAL only every
 * WRITE_CHECKPOINT_PAGES (by default SQLite would copy hundreds of MB of
 * chunks into the database in 16 MiB steps, each with an fsync); the last
 * commit checkpoints what is left, in this thread.
 */
import type { Database } from 'better-sqlite3';
import { ChunkBuilder, decodeUint32s, encodeUint32s, itemBodies } from '../chunk-builder.js';
import { allInserted, changesNothing, checkHashAlgorithm, sameColumns, type Chunk, type SnapshotSpec, type StagedRecord, type StagedSnapshot, type ThinChunk } from '../store.js';
import { layoutStats, ownEntry, reusedChunks, ReusePlanner, ReusingLayout, type LayoutOutput, type LayoutStats, type MapEntry, type OrderedRow, type Step } from '../chunk-reuse.js';
import type { Kind } from '../../domain/kinds.js';
import { IncreasingIds, LineNumbers } from '../arrival-order.js';
import { discardSnapshot, newPublicId } from './sqlite-snapshots.js';
import { Stage } from './sqlite-stage.js';
import { scratchDirBeside } from '../scratch-file.js';
import { PreviousItems, PreviousRecords, refKey, type ChunkRef, type PreviousRecord, type StoredChunk } from '../previous-records.js';

/** Rows of `records` per INSERT statement (SQLite allows 32,766 parameters). */
const RECORDS_PER_INSERT = 50;
/** 256 MiB of 16 KiB pages: few checkpoints, and a WAL that stays bounded on a huge import. */
const WRITE_CHECKPOINT_PAGES = 16384;

export async function writeSnapshot(
  db: Database,
  dbPath: string,
  spec: SnapshotSpec,
  records: AsyncIterable<StagedRecord[]>,
): Promise<StagedSnapshot> {
  const live = db
    .prepare(
      `SELECT l.snapshot_id, s.hash_algorithm, s.columns FROM live_snapshots l JOIN snapshots s ON s.id = l.snapshot_id
       WHERE l.company_id = ? AND l.kind = ?`,
    )
    .get(spec.companyId, spec.kind) as { snapshot_id: number; hash_algorithm: string; columns: string } | undefined;
  if (live) checkHashAlgorithm(spec, live.hash_algorithm);
  const prev = live?.snapshot_id ?? null;
  const snapshotId = Number(
    db
      .prepare(
        `INSERT INTO snapshots (public_id, company_id, kind, import_id, state, created_at, columns, import_at, hash_algorithm, base_snapshot_id)
         VALUES (?, ?, ?, ?, 'staging', ?, ?, ?, ?, ?)`,
      )
      .run(newPublicId(), spec.companyId, spec.kind, spec.importId, Date.now(), JSON.stringify(spec.columns), spec.at, spec.hashAlgorithm, prev)
      .lastInsertRowid,
  );
  const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma(`wal_autocheckpoint = ${autocheckpoint === 0 ? 0 : WRITE_CHECKPOINT_PAGES}`);
  const before = prev === null ? null : previousLayout(db, prev);
  // Unchanged records are staged without their bodies, which stay in the previous snapshot.
  const previous = before?.items.complete ? new PreviousRecords(previousRecordReader(db, prev!)) : null;
  const layout = new Layout(db, snapshotId, spec.kind, scratchDirBeside(dbPath));
  let stage: Stage | null = null;
  try {
    let inOrder = prev === null;
    if (!inOrder) stage = new Stage(db, dbPath, snapshotId);
    const order = new IncreasingIds();
    const lines = new LineNumbers();
    for await (const batch of records) {
      if (inOrder) {
        if (order.continues(batch)) {
          db.transaction(() => layout.addAll(batch, spec.at))();
          for (const r of batch) lines.push(r.line);
          continue;
        }
        inOrder = false;
        stage = new Stage(db, dbPath, snapshotId);
        moveToStage(db, layout, stage, lines, spec.at);
      }
      const unchanged = previous?.unchanged(batch);
      db.transaction(() => stage!.add(batch, spec.at, unchanged))();
    }
    let changes;
    if (stage === null) {
      changes = allInserted(layout.count);
    } else {
      stage.checkDuplicates();
      changes = stage.detectChanges(prev);
      if (spec.keepLiveWhenUnchanged && live && changesNothing(changes) && sameColumns(JSON.parse(live.columns) as string[], spec.columns)) {
        // Nothing to lay out: the live snapshot already holds exactly these items.
        discardSnapshot(db, snapshotId);
        return { snapshotId: live.snapshot_id, changes, previousId: prev, keptLive: true, bodiesStaged: stage.bodiesStaged };
      }
      layout.layOutStaged(before, stage);
    }
    db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
    layout.finish();
    return { snapshotId, changes, previousId: prev, layout: layout.stats, bodiesStaged: stage?.bodiesStaged ?? 0 };
  } catch (err) {
    discardSnapshot(db, snapshotId);
    throw err;
  } finally {
    stage?.close();
    layout.close();
    db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
  }
}

/**
 * Writes records in list order: their positions, the chunks of their items,
 * and the snapshot's chunk map — in a re-import, sharing the previous
 * snapshot's unchanged chunks (chunk-reuse.ts).
 */
class Layout {
  // Views: each chunk is inserted (and its bytes copied by SQLite) as soon as it is complete.
  private builder: ChunkBuilder;
  private readonly insertRecord;
  private readonly insertRecords;
  private readonly insertChunk;
  private readonly insertThinChunk;
  private readonly insertMap;
  private readonly chunkAt;
  private readonly pending: unknown[] = [];
  private reusing: ReusingLayout | null = null;
  private prevThin: ((k: number) => ThinChunk) | null = null;
  /** Chunks written in order, before any reuse (a first import shares none). */
  private ownChunks = 0;

  constructor(
    private readonly db: Database,
    readonly snapshotId: number,
    private readonly kind: Kind,
    private readonly spillDir: string,
  ) {
    this.builder = new ChunkBuilder({ views: true, kind, spill: { dir: spillDir } });
    this.insertRecord = db.prepare('INSERT INTO records (snapshot_id, id_erp, pos, actualizado_at, hash) VALUES (?, ?, ?, ?, ?)');
    this.insertRecords = db.prepare(
      `INSERT INTO records (snapshot_id, id_erp, pos, actualizado_at, hash) VALUES ${Array(RECORDS_PER_INSERT).fill('(?, ?, ?, ?, ?)').join(', ')}`,
    );
    this.insertChunk = db.prepare('INSERT INTO chunks (snapshot_id, chunk_no, first_pos, offsets, bytes) VALUES (?, ?, ?, ?, ?)');
    this.insertThinChunk = db.prepare('INSERT INTO thin_chunks (snapshot_id, chunk_no, first_pos, bounds, bytes) VALUES (?, ?, ?, ?, ?)');
    this.chunkAt = db.prepare('SELECT offsets, bytes FROM chunks WHERE snapshot_id = ? AND chunk_no = ?');
    this.insertMap = db.prepare(
      `INSERT INTO chunk_map (snapshot_id, chunk_no, first_pos, src_snapshot, src_chunk, seg_snapshot, seg_chunk) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  get stats(): LayoutStats {
    return this.reusing?.stats ?? layoutStats(this.builder, this.ownChunks, 0);
  }

  /**
   * Lays out the staged records in list order against the previous snapshot
   * (if any), sharing its unchanged chunks (chunk-reuse.ts), a page per transaction.
   */
  layOutStaged(before: PreviousLayout | null, stage: Stage): void {
    const staged = (rows: readonly OrderedRow[]) => stage.bodies(rows);
    const bodies = before ? (rows: readonly OrderedRow[]) => before.items.bodies(rows, staged, (refs) => this.storedChunks(refs)) : staged;
    const record = (row: OrderedRow, pos: number) => this.record(row.idErp, pos, row.ts, row.hash);
    let planner = new ReusePlanner(new Uint32Array(0), 0);
    if (before === null) this.reusing = new ReusingLayout(this.builder, this.snapshotId, null, bodies, record);
    else planner = this.shareWith(before, bodies, record);
    for (const page of stage.ordered()) this.run(planner.push(page));
    this.run(planner.end());
  }

  /** Reads what sharing the previous snapshot's chunks needs; the planner that finds them. */
  private shareWith(
    before: PreviousLayout,
    bodies: (rows: readonly OrderedRow[]) => Buffer[],
    record: (row: OrderedRow, pos: number) => void,
  ): ReusePlanner {
    const { map } = before;
    const thinAt = this.db.prepare('SELECT bounds, bytes FROM thin_chunks WHERE snapshot_id = ? AND chunk_no = ?');
    this.prevThin = (k) => {
      const e = map[k]!;
      const r = thinAt.get(e.srcSnapshot, e.srcChunk) as { bounds: Buffer; bytes: Buffer } | undefined;
      if (!r) throw new Error(`snapshot ${before.id}: chunk ${k} has no thin chunk`);
      return { chunkNo: k, firstPos: e.firstPos, bounds: decodeUint32s(r.bounds), bytes: r.bytes };
    };
    this.reusing = new ReusingLayout(this.builder, this.snapshotId, { map, count: before.count }, bodies, record);
    // A snapshot whose map does not cover its chunks (none should be) is laid out again whole.
    return new ReusePlanner(before.items.complete ? before.starts : new Uint32Array(0), before.count);
  }

  /** Stored chunks, for the bodies of unchanged records staged without them. */
  private storedChunks(refs: readonly ChunkRef[]): Map<string, StoredChunk> {
    const out = new Map<string, StoredChunk>();
    for (const ref of refs) {
      const r = this.chunkAt.get(ref.snapshot, ref.chunk) as { offsets: Buffer; bytes: Buffer } | undefined;
      if (r) out.set(refKey(ref), { offsets: decodeUint32s(r.offsets), bytes: r.bytes });
    }
    return out;
  }

  /** Runs planned steps in one transaction. */
  private run(steps: Step[]): void {
    const thin = new Map<number, ThinChunk>();
    for (const k of reusedChunks(steps)) thin.set(k, this.prevThin!(k));
    this.db.transaction(() => {
      this.writeOut(this.reusing!.run(steps, thin));
      this.flushRecords();
    })();
  }

  get count(): number {
    return this.builder.count;
  }

  /**
   * Adds the next records in list order, each at its `ts` or at `at` (the
   * caller holds a transaction). Their rows go in RECORDS_PER_INSERT at a
   * time: one statement per row cost more than the B-tree work itself.
   */
  addAll(records: readonly { idErp: string; hash: Buffer; body: Uint8Array }[], at: number): void {
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      this.record(r.idErp, this.builder.count, at, r.hash);
      this.write(this.builder.add(r.body, at));
    }
    this.flushRecords();
  }

  /** Closes the current chunk, however few items it holds (the caller holds a transaction). */
  flushChunk(): void {
    if (this.reusing) this.writeOut(this.reusing.finish());
    else this.write(this.builder.flush());
  }

  private record(idErp: string, pos: number, ts: number, hash: Buffer) {
    const params = this.pending;
    params.push(this.snapshotId, idErp, pos, ts, hash);
    if (params.length === 5 * RECORDS_PER_INSERT) {
      this.insertRecords.run(params);
      params.length = 0;
    }
  }

  private flushRecords() {
    const params = this.pending;
    for (let i = 0; i < params.length; i += 5) this.insertRecord.run(params.slice(i, i + 5));
    params.length = 0;
  }

  /** Writes the last chunk and the snapshot's description, and marks it staged. */
  finish(): void {
    this.db.transaction(() => {
      this.flushChunk();
      const insertIndex = this.db.prepare('INSERT INTO snapshot_indexes (snapshot_id, name, part, bytes) VALUES (?, ?, ?, ?)');
      for (const p of this.builder.indexParts()) insertIndex.run(this.snapshotId, p.name, p.part, p.bytes);
      this.db
        .prepare(`UPDATE snapshots SET state = 'staged', indexed = 1, record_count = ?, chunk_starts = ?, timeline = ? WHERE id = ?`)
        .run(this.builder.count, encodeUint32s(this.builder.chunkStarts()), JSON.stringify(this.builder.timelineEntries()), this.snapshotId);
    })();
  }

  /** Forgets everything written, to start again. */
  reset(): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM chunks WHERE snapshot_id = ?').run(this.snapshotId);
      this.db.prepare('DELETE FROM thin_chunks WHERE snapshot_id = ?').run(this.snapshotId);
      this.db.prepare('DELETE FROM records WHERE snapshot_id = ?').run(this.snapshotId);
      this.db.prepare('DELETE FROM chunk_map WHERE snapshot_id = ?').run(this.snapshotId);
    })();
    this.ownChunks = 0;
    this.builder.close();
    this.builder = new ChunkBuilder({ views: true, kind: this.kind, spill: { dir: this.spillDir } });
  }

  /** Lets go of the builder's temporary file, if the build spilled and did not finish. */
  close(): void {
    this.builder.close();
  }

  /** A chunk of this snapshot's own, with its map row. */
  private write(c: Chunk | null) {
    if (!c) return;
    this.storeChunk(c);
    this.storeMap(ownEntry(this.snapshotId, c));
    this.ownChunks++;
    this.builder.recycle();
  }

  private writeOut(out: LayoutOutput) {
    for (const c of out.chunks) this.storeChunk(c);
    for (const e of out.map) this.storeMap(e);
    this.builder.recycle();
  }

  private storeChunk(c: Chunk) {
    this.insertChunk.run(this.snapshotId, c.chunkNo, c.firstPos, encodeUint32s(c.offsets), c.bytes);
    const t = c.thin!;
    this.insertThinChunk.run(this.snapshotId, t.chunkNo, t.firstPos, encodeUint32s(t.bounds), t.bytes);
  }

  private storeMap(e: MapEntry) {
    this.insertMap.run(this.snapshotId, e.chunkNo, e.firstPos, e.srcSnapshot, e.srcChunk, e.segSnapshot, e.segChunk);
  }
}

/** The previous snapshot's layout: its chunk starts, record count and chunk map. */
interface PreviousLayout {
  id: number;
  starts: Uint32Array;
  count: number;
  map: MapEntry[];
  items: PreviousItems;
}

function previousLayout(db: Database, prev: number): PreviousLayout {
  const snap = db.prepare('SELECT chunk_starts, record_count FROM snapshots WHERE id = ?').get(prev) as {
    chunk_starts: Buffer | null;
    record_count: number;
  };
  const starts = snap.chunk_starts ? decodeUint32s(snap.chunk_starts) : new Uint32Array(0);
  const map = db
    .prepare(
      `SELECT chunk_no AS chunkNo, first_pos AS firstPos, src_snapshot AS srcSnapshot, src_chunk AS srcChunk,
         seg_snapshot AS segSnapshot, seg_chunk AS segChunk FROM chunk_map WHERE snapshot_id = ? ORDER BY chunk_no`,
    )
    .all(prev) as MapEntry[];
  return { id: prev, starts, count: snap.record_count, map, items: new PreviousItems(starts, map) };
}

/** The previous snapshot's records, by id: in pages in id order, or looked up (previous-records.ts). */
function previousRecordReader(db: Database, prev: number) {
  const columns = 'r.id_erp AS idErp, r.hash';
  const first = db.prepare(`SELECT ${columns} FROM records r WHERE r.snapshot_id = ? ORDER BY r.id_erp LIMIT ?`);
  const after = db.prepare(`SELECT ${columns} FROM records r WHERE r.snapshot_id = ? AND r.id_erp > ? ORDER BY r.id_erp LIMIT ?`);
  // json_each drives the join: one primary-key lookup per id.
  const byIds = db.prepare(`SELECT ${columns} FROM json_each(?) j CROSS JOIN records r ON r.snapshot_id = ? AND r.id_erp = j.value`);
  return {
    after: (id: string | null, limit: number) => (id === null ? first.all(prev, limit) : after.all(prev, id, limit)) as PreviousRecord[],
    byIds: (ids: readonly string[]) => byIds.all(JSON.stringify(ids), prev) as PreviousRecord[],
  };
}

/**
 * Moves records written in order to the stage: their bodies are the items in
 * the chunks minus the time every one of them got (`at`).
 */
function moveToStage(db: Database, layout: Layout, stage: Stage, lines: LineNumbers, at: number) {
  db.transaction(() => layout.flushChunk())(); // the partial last chunk: every record is in a chunk
  const chunkAt = db.prepare('SELECT offsets, bytes FROM chunks WHERE snapshot_id = ? AND chunk_no = ?');
  // In order, position order is id order: read records by id, on the primary key.
  const recordsAfter = db.prepare('SELECT id_erp, hash FROM records WHERE snapshot_id = ? AND id_erp > ? ORDER BY id_erp LIMIT ?');
  const id = layout.snapshotId;
  let pos = 0;
  let lastId = '';
  for (let chunkNo = 0; ; chunkNo++) {
    const chunk = chunkAt.get(id, chunkNo) as { offsets: Buffer; bytes: Buffer } | undefined;
    if (!chunk) break;
    const bodies = itemBodies(decodeUint32s(chunk.offsets), chunk.bytes, at);
    const count = bodies.length;
    const refs = recordsAfter.all(id, lastId, count) as { id_erp: string; hash: Buffer }[];
    const batch = refs.map((r, k) => ({ idErp: r.id_erp, hash: r.hash, body: bodies[k]!, line: lines.at(pos + k) }));
    db.transaction(() => stage.add(batch, at))();
    pos += count;
    lastId = refs[refs.length - 1]!.id_erp;
  }
  layout.reset();
}
