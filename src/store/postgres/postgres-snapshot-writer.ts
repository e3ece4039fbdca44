/**
 * Snapshot writing for the PostgreSQL adapter (publishing and reading are
 * postgres-snapshots.ts). A snapshot is written in one transaction on one
 * connection, in one of two ways:
 * - In order: a first import (no live snapshot) whose ids arrive in
 *   increasing byte order, as ERP exports usually do. Every record is new
 *   and gets the import's time, so arrival order is list order: records and
 *   chunks go in with binary COPY as they stream in, while the CSV is still
 *   being parsed.
 * - Staged: otherwise. Records are streamed with binary COPY into a TEMP
 *   table (no WAL, dropped at commit): id, hash, time and where the item's
 *   body is in a file of this process (body-file.ts). Every body is staged,
 *   unchanged or not: comparing each record with the live snapshot as it
 *   arrives, as the SQLite adapter does (previous-records.ts), cost more
 *   here than the writes it saves (a re-import of 100,000 customers that
 *   changes nothing: 2.9-3.1 s against 2.4-2.8 s). Duplicates and changes
 *   against the live snapshot are found in SQL, and the records are read
 *   back in list order through a cursor (one sort, each unchanged record
 *   joined with its previous time and position), their bodies from the file,
 *   to lay out chunks; records and chunks go in with COPY at the positions
 *   they are read in (postgres-layout.ts). When ids stop
 *   arriving in order midway, what was written in order is moved to the stage.
 * When the comparison finds nothing inserted, updated or deleted (and the spec
 * asks for it), nothing is laid out and the live snapshot is kept.
 * A failure anywhere rolls everything back: nothing is left behind, and
 * nothing is visible to readers until `publish`.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import type { Kind } from '../../domain/kinds.js';
import { BodyFile } from '../body-file.js';
import { ChunkBuilder, decodeUint32s, itemBodies } from '../chunk-builder.js';
import { IncreasingIds, LineNumbers } from '../arrival-order.js';
import {
  allInserted,
  changesNothing,
  checkHashAlgorithm,
  sameColumns,
  DELETED_EXAMPLES,
  DuplicateIdError,
  type Chunk,
  type SnapshotChanges,
  type SnapshotSpec,
  type StagedRecord,
  type StagedSnapshot,
} from '../store.js';
import type { Conn, Db } from './postgres-connection.js';
import { copyIn, CopyEncoder } from './postgres-copy.js';
import { layOut, markStaged, RECORD_COLUMNS, writeChunks } from './postgres-layout.js';
import { layoutStats, type LayoutStats } from '../chunk-reuse.js';

/** Staged rows handed to COPY at a time… */
const COPY_FLUSH_BYTES = 1024 * 1024;
/**
 * …and, written in order, the chunk bytes gathered before one COPY of chunks and one of
 * records (~330 records' rows, ~20 KB). Small on purpose: an import's peak RSS grew with
 * larger buffers (4 MiB: 327 MB on a 1 GiB file), as glibc keeps freed memory for reuse
 * once a large buffer was freed; the COPYs cost about the same.
 */
const IN_ORDER_FLUSH_BYTES = 1024 * 1024;
/** The records' COPY buffer starts small for the same reason. */
const IN_ORDER_RECORDS_BUFFER = 64 * 1024;
const MAX_DUPLICATES_REPORTED = 10;

function newPublicId(): string {
  // 16 hex characters: unique enough across databases for ETags never to collide.
  return randomBytes(8).toString('hex');
}

export async function writeSnapshot(db: Db, spec: SnapshotSpec, records: AsyncIterable<StagedRecord[]>): Promise<StagedSnapshot> {
  return db.tx(
    async (c) => {
      const prev = await c.one<{ snapshot_id: number; hash_algorithm: string; columns: string[] }>(
        // FOR KEY SHARE: the snapshot this one may share chunks with is not swept before this commits.
        `SELECT l.snapshot_id, s.hash_algorithm, s.columns FROM live_snapshots l JOIN snapshots s ON s.id = l.snapshot_id
         WHERE l.company_id = $1 AND l.kind = $2 FOR KEY SHARE OF s`,
        [spec.companyId, spec.kind],
      );
      if (prev) checkHashAlgorithm(spec, prev.hash_algorithm);
      const { id: snapshotId } = (await c.one<{ id: number }>(
        `INSERT INTO snapshots (public_id, company_id, kind, import_id, state, created_at, columns, import_at, hash_algorithm)
         VALUES ($1, $2, $3, $4, 'staging', $5, $6, $7, $8) RETURNING id`,
        [newPublicId(), spec.companyId, spec.kind, spec.importId, Date.now(), JSON.stringify(spec.columns), spec.at, spec.hashAlgorithm],
      ))!;
      const source = records[Symbol.asyncIterator]();
      let written: OutOfOrder | null = null;
      if (!prev) {
        const inOrder = await writeInOrder(c, snapshotId, spec.kind, spec.at, source).catch(async (err: unknown) => {
          // Stopped reading early: let the producer (the CSV reader) stop too.
          await source.return?.().catch(() => {});
          throw err;
        });
        if (!('pending' in inOrder)) {
          return {
            snapshotId,
            changes: allInserted(inOrder.count),
            previousId: null,
            layout: inOrder.layout,
            bodiesStaged: 0,
          };
        }
        written = inOrder;
      }
      // `rid` keeps the order records arrived in, to name the first of duplicates. The bodies
      // stay in this process, in a file (`off`, `len`): see body-file.ts.
      await c.run(`CREATE TEMP TABLE stage (
        rid INTEGER NOT NULL, id_erp TEXT COLLATE "C" NOT NULL, line INTEGER NOT NULL,
        hash BYTEA NOT NULL, off BIGINT NOT NULL, len INTEGER NOT NULL, ts BIGINT NOT NULL) ON COMMIT DROP`);
      const bodies = new BodyFile(tmpdir(), String(snapshotId));
      try {
        let total = 0;
        let rest: AsyncIterable<StagedRecord[]> = { [Symbol.asyncIterator]: () => source };
        if (written) {
          total = await moveToStage(c, snapshotId, spec.at, written, bodies);
          rest = prepend(written.pending, source);
        }
        total += await copyIn(c, 'stage', STAGE_COLUMNS, encodeStaged(rest, spec.at, total, bodies));
        await rejectDuplicates(c);
        // Temporary tables are never analysed automatically; the joins below need the statistics.
        await c.run('ANALYZE stage');
        const changes = await detectChanges(c, total, prev?.snapshot_id ?? null);
        if (spec.keepLiveWhenUnchanged && prev && changesNothing(changes) && sameColumns(liveColumns(prev.columns), spec.columns)) {
          // Nothing to lay out: the live snapshot already holds exactly these items.
          await c.run('DELETE FROM snapshots WHERE id = $1', [snapshotId]);
          return { snapshotId: prev.snapshot_id, changes, previousId: prev.snapshot_id, keptLive: true, bodiesStaged: bodies.count };
        }
        const layout = await layOut(c, snapshotId, spec.kind, total, bodies, prev?.snapshot_id ?? null);
        return { snapshotId, changes, previousId: prev?.snapshot_id ?? null, layout, bodiesStaged: bodies.count };
      } finally {
        bodies.close();
      }
    },
    { unbounded: true },
  );
}

/** A snapshot's `columns` as the driver hands them: parsed JSON, or its text. */
function liveColumns(stored: unknown): string[] {
  return (typeof stored === 'string' ? JSON.parse(stored) : stored) as string[];
}

/** What `writeInOrder` wrote before a batch broke the order, and that batch. */
interface OutOfOrder {
  count: number;
  lines: LineNumbers;
  pending: StagedRecord[];
}

/**
 * Writes records and chunks as they arrive, while ids keep increasing; then
 * marks the snapshot staged. Stops at the first batch that breaks the order,
 * with every record before it written (in chunks, the last one partial).
 */
async function writeInOrder(
  c: Conn,
  snapshotId: number,
  kind: Kind,
  at: number,
  source: AsyncIterator<StagedRecord[]>,
): Promise<{ count: number; layout: LayoutStats } | OutOfOrder> {
  // Views: each flush's COPY has completed before the builder writes over its chunks.
  const builder = new ChunkBuilder({ views: true, kind, spill: { dir: tmpdir() } });
  try {
    const lines = new LineNumbers();
    let records = new CopyEncoder(IN_ORDER_RECORDS_BUFFER);
    let recordCount = 0;
    let chunks: Chunk[] = [];
    let chunkBytes = 0;
    const flush = async () => {
      if (recordCount > 0) {
        await copyIn(c, 'records', RECORD_COLUMNS, [records.take(true)]);
        records = new CopyEncoder(IN_ORDER_RECORDS_BUFFER);
        recordCount = 0;
      }
      await writeChunks(c, snapshotId, chunks);
      chunks = [];
      chunkBytes = 0;
    };
    const add = (chunk: Chunk | null) => {
      if (!chunk) return;
      chunks.push(chunk);
      chunkBytes += chunk.bytes.length;
    };
    const order = new IncreasingIds();
    for (;;) {
      const next = await source.next();
      if (next.done) break;
      const batch = next.value;
      if (!order.continues(batch)) {
        // Every record written so far goes into a chunk, to be read back into the stage.
        add(builder.flush());
        await flush();
        return { count: builder.count, lines, pending: batch };
      }
      for (const r of batch) {
        records.row(5).int8(snapshotId).text(r.idErp).int4(builder.count).int8(at).bytes(r.hash);
        recordCount++;
        lines.push(r.line);
        add(builder.add(r.body, at));
      }
      if (chunkBytes >= IN_ORDER_FLUSH_BYTES || records.size >= IN_ORDER_FLUSH_BYTES) {
        await flush();
        builder.recycle();
      }
    }
    add(builder.flush());
    await flush();
    await markStaged(c, snapshotId, builder);
    return { count: builder.count, layout: layoutStats(builder, builder.chunkStarts().length, 0) };
  } finally {
    builder.close();
  }
}

/**
 * Moves what `writeInOrder` wrote into the stage: each record's body is its
 * item in the chunks minus the time every one of them got (`at`). Returns how
 * many records were moved; their `rid` is their position (their arrival order).
 */
async function moveToStage(c: Conn, snapshotId: number, at: number, written: OutOfOrder, file: BodyFile): Promise<number> {
  const id = Number(snapshotId);
  await c.run(`DECLARE written_chunks NO SCROLL CURSOR FOR SELECT offsets, bytes FROM chunks WHERE snapshot_id = ${id} ORDER BY chunk_no`);
  await c.run(`DECLARE written_records NO SCROLL CURSOR FOR SELECT id_erp, hash FROM records WHERE snapshot_id = ${id} ORDER BY pos`);
  let pos = 0;
  for (;;) {
    const chunks = await c.rows<{ offsets: Buffer; bytes: Buffer }>('FETCH 16 FROM written_chunks');
    if (chunks.length === 0) break;
    const enc = new CopyEncoder();
    for (const chunk of chunks) {
      const bodies = itemBodies(decodeUint32s(chunk.offsets), chunk.bytes, at);
      const refs = await c.rows<{ id_erp: string; hash: Buffer }>(`FETCH ${bodies.length} FROM written_records`);
      for (const [k, body] of bodies.entries()) {
        enc.row(7).int4(pos).text(refs[k]!.id_erp).int4(written.lines.at(pos)).bytes(refs[k]!.hash).int8(file.append(body)).int4(body.length).int8(at);
        pos++;
      }
    }
    await copyIn(c, 'stage', STAGE_COLUMNS, [enc.take(true)]);
  }
  await c.run('CLOSE written_chunks');
  await c.run('CLOSE written_records');
  if (pos !== written.count) throw new Error(`snapshot ${snapshotId}: moved ${pos} of ${written.count} records to the stage`);
  await c.run('DELETE FROM records WHERE snapshot_id = $1', [snapshotId]);
  await c.run('DELETE FROM chunks WHERE snapshot_id = $1', [snapshotId]);
  await c.run('DELETE FROM thin_chunks WHERE snapshot_id = $1', [snapshotId]);
  await c.run('DELETE FROM chunk_map WHERE snapshot_id = $1', [snapshotId]);
  return pos;
}

/** `first`, then the rest of `source`. */
async function* prepend<T>(first: T, source: AsyncIterator<T>): AsyncGenerator<T> {
  yield first;
  for (;;) {
    const next = await source.next();
    if (next.done) return;
    yield next.value;
  }
}

const STAGE_COLUMNS = ['rid', 'id_erp', 'line', 'hash', 'off', 'len', 'ts'];

async function* encodeStaged(records: AsyncIterable<StagedRecord[]>, at: number, firstRid: number, file: BodyFile): AsyncGenerator<Buffer> {
  const enc = new CopyEncoder();
  let rid = firstRid;
  for await (const batch of records) {
    for (const r of batch) enc.row(7).int4(rid++).text(r.idErp).int4(r.line).bytes(r.hash).int8(file.append(r.body)).int4(r.body.length).int8(at);
    if (enc.size >= COPY_FLUSH_BYTES) yield enc.take();
  }
  yield enc.take(true);
}

async function rejectDuplicates(c: Conn) {
  const duplicates = await c.rows<{ id_erp: string; line: number; first_line: number }>(
    `SELECT id_erp, line, first_line FROM (
       SELECT id_erp, line, rid, first_value(line) OVER w AS first_line, row_number() OVER w AS n
       FROM stage WINDOW w AS (PARTITION BY id_erp ORDER BY rid)) d
     WHERE n > 1 ORDER BY rid LIMIT ${MAX_DUPLICATES_REPORTED}`,
  );
  if (duplicates.length > 0) {
    throw new DuplicateIdError(duplicates.map((d) => ({ idErp: d.id_erp, line: d.line, firstLine: d.first_line })));
  }
}

async function detectChanges(c: Conn, total: number, prev: number | null): Promise<SnapshotChanges> {
  if (prev === null) return allInserted(total);
  const { matched, unchanged } = (await c.one<{ matched: number; unchanged: number }>(
    `SELECT count(*) AS matched, count(*) FILTER (WHERE r.hash = s.hash) AS unchanged
     FROM stage s JOIN records r ON r.snapshot_id = $1 AND r.id_erp = s.id_erp`,
    [prev],
  ))!;
  const { record_count: prevCount } = (await c.one<{ record_count: number }>(
    'SELECT record_count FROM snapshots WHERE id = $1',
    [prev],
  ))!;
  const deleted = prevCount - matched;
  const deletedExamples =
    deleted === 0
      ? []
      : (
          await c.rows<{ id_erp: string }>(
            `SELECT r.id_erp FROM records r WHERE r.snapshot_id = $1
             AND NOT EXISTS (SELECT 1 FROM stage s WHERE s.id_erp = r.id_erp) ORDER BY r.id_erp LIMIT $2`,
            [prev, DELETED_EXAMPLES],
          )
        ).map((r) => r.id_erp);
  return { total, inserted: total - matched, updated: matched - unchanged, unchanged, deleted, deletedExamples };
}
