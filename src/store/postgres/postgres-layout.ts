/**
 * Laying out a staged snapshot for the PostgreSQL adapter
 * (postgres-snapshot-writer.ts writes and stages it): the records read back
 * in list order through a cursor and written at the positions they come in,
 * their chunks shared with the previous snapshot where unchanged
 * (chunk-reuse.ts) or laid out and written with COPY, and the snapshot's
 * description.
 */
import { tmpdir } from 'node:os';
import type { Kind } from '../../domain/kinds.js';
import type { BodyFile } from '../body-file.js';
import { ChunkBuilder, decodeUint32s, encodeUint32s } from '../chunk-builder.js';
import { ownEntry, reusedChunks, ReusePlanner, ReusingLayout, type LayoutOutput, type LayoutStats, type MapEntry, type Step } from '../chunk-reuse.js';
import type { Chunk, ThinChunk } from '../store.js';
import type { Conn } from './postgres-connection.js';
import { copyIn, CopyEncoder } from './postgres-copy.js';
import { sqlInt } from './postgres-copy-out.js';

/** The columns of `records` both ways of writing a snapshot fill, by COPY. */
export const RECORD_COLUMNS = ['snapshot_id', 'id_erp', 'pos', 'actualizado_at', 'hash'];

/** Thin chunks handed to COPY at a time… */
const COPY_FLUSH_BYTES = 1024 * 1024;
/** …rows read back per cursor fetch while laying out chunks… */
const FETCH_ROWS = 1000;
/** …records' rows gathered for one COPY (~20,000 records)… */
const RECORDS_BUFFER = 1024 * 1024;
/** …and the memory the stage is sorted in (PostgreSQL's `work_mem`, this transaction only). */
const LAYOUT_SORT_MEMORY = '64MB';

/** Records the laid-out snapshot's description, and that it is complete. */
export async function markStaged(c: Conn, snapshotId: number, builder: ChunkBuilder) {
  async function* encoded() {
    const enc = new CopyEncoder(16 * 1024);
    for (const p of builder.indexParts()) {
      enc.row(4).int8(snapshotId).text(p.name).int4(p.part).bytesFollow(p.bytes.length);
      yield enc.take();
      yield p.bytes;
    }
    yield enc.take(true);
  }
  await copyIn(c, 'snapshot_indexes', ['snapshot_id', 'name', 'part', 'bytes'], encoded());
  await c.run(
    `UPDATE snapshots SET state = 'staged', indexed = true, record_count = $2, chunk_starts = $3, timeline = $4 WHERE id = $1`,
    [snapshotId, builder.count, encodeUint32s(builder.chunkStarts()), JSON.stringify(builder.timelineEntries())],
  );
}

/**
 * Reads the staged records in list order through a cursor, each with the
 * time it keeps (an unchanged record's from the previous snapshot, with its
 * position there), and writes them at the positions they come in; their
 * chunks are shared with the previous snapshot where unchanged
 * (chunk-reuse.ts) or laid out and written with COPY.
 */
export async function layOut(c: Conn, snapshotId: number, kind: Kind, total: number, file: BodyFile, prev: number | null): Promise<LayoutStats> {
  // One sort of the stage, in memory at the sizes of most imports (the server's default of 4 MB
  // would sort a 100,000-record stage on disk); the cursor's rows are all needed, so no fast-start
  // plan. Both for this transaction only.
  await c.run(`SET LOCAL work_mem = '${LAYOUT_SORT_MEMORY}'`);
  await c.run('SET LOCAL cursor_tuple_fraction = 1');
  // List order is (time, id_erp), unique once duplicates are refused. Unchanged means the same
  // id_erp and hash as in the previous snapshot.
  await c.run(
    prev === null
      ? 'DECLARE ordered NO SCROLL CURSOR FOR SELECT id_erp, hash, off, len, ts, NULL::int AS prev_pos FROM stage ORDER BY ts, id_erp'
      : `DECLARE ordered NO SCROLL CURSOR FOR
         SELECT s.id_erp, s.hash, s.off, s.len, COALESCE(r.actualizado_at, s.ts) AS ts, r.pos AS prev_pos
         FROM stage s LEFT JOIN records r ON r.snapshot_id = ${sqlInt(prev)} AND r.id_erp = s.id_erp AND r.hash = s.hash
         ORDER BY 5, 1`,
  );
  const before = prev === null ? null : await previousLayout(c, prev);
  // Views: each page's COPY of chunks has completed before the builder writes over them.
  const builder = new ChunkBuilder({ views: true, kind, spill: { dir: tmpdir() } });
  try {
    const planner = new ReusePlanner(before?.starts ?? new Uint32Array(0), before?.count ?? 0);
    const layout = new ReusingLayout(builder, snapshotId, before, (rows) => file.read(rows));
    // The records, at the positions they are read in: written while the chunks are laid out,
    // where an INSERT … SELECT after the stage's sort kept this process waiting.
    let records = new CopyEncoder(RECORDS_BUFFER);
    let pos = 0;
    let unwritten = 0;
    /** The last COPY of records, queued on the connection and awaited before the next (its rows are its own). */
    let writing: Promise<number> | null = null;
    const writeRecords = async () => {
      if (writing) await writing;
      writing = null;
      if (unwritten === 0) return;
      writing = copyIn(c, 'records', RECORD_COLUMNS, [records.take(true)]);
      writing.catch(() => {}); // awaited by the next write or at the end
      records = new CopyEncoder(RECORDS_BUFFER);
      unwritten = 0;
    };
    const fetch = () => {
      const page = c.rows<{ id_erp: string; hash: Buffer; off: number; len: number; ts: number; prev_pos: number | null }>(
        `FETCH ${FETCH_ROWS} FROM ordered`,
      );
      page.catch(() => {}); // awaited below; this only keeps an early failure from counting as unhandled
      return page;
    };
    const run = async (steps: Step[]) => {
      const thin = await thinChunksOf(c, prev, reusedChunks(steps));
      await writeChunks(c, snapshotId, layout.run(steps, thin));
      builder.recycle();
    };
    let next = fetch();
    for (;;) {
      const rows = await next;
      if (rows.length === 0) break;
      // The server reads the next page while this one is laid out (its COPY queues behind).
      next = fetch();
      for (const r of rows) records.row(5).int8(snapshotId).text(r.id_erp).int4(pos++).int8(r.ts).bytes(r.hash);
      unwritten += rows.length;
      if (records.size >= RECORDS_BUFFER) await writeRecords();
      await run(planner.push(rows.map((r) => ({ idErp: r.id_erp, hash: r.hash, off: r.off, len: r.len, ts: r.ts, prevPos: r.prev_pos }))));
    }
    await c.run('CLOSE ordered');
    await writeRecords();
    if (writing) await writing;
    await run(planner.end());
    await writeChunks(c, snapshotId, layout.finish());
    if (builder.count !== total || pos !== total) throw new Error(`snapshot ${snapshotId}: laid out ${builder.count} and wrote ${pos} of ${total} records`);
    await markStaged(c, snapshotId, builder);
    return layout.stats;
  } finally {
    builder.close();
  }
}

/** The previous snapshot's chunk starts, record count and chunk map. */
async function previousLayout(c: Conn, prev: number): Promise<{ starts: Uint32Array; count: number; map: MapEntry[] }> {
  const snap = (await c.one<{ chunk_starts: Buffer | null; record_count: number }>(
    'SELECT chunk_starts, record_count FROM snapshots WHERE id = $1',
    [prev],
  ))!;
  const map = (
    await c.rows<{ chunk_no: number; first_pos: number; src_snapshot: string; src_chunk: number; seg_snapshot: string; seg_chunk: number }>(
      'SELECT chunk_no, first_pos, src_snapshot, src_chunk, seg_snapshot, seg_chunk FROM chunk_map WHERE snapshot_id = $1 ORDER BY chunk_no',
      [prev],
    )
  ).map((r) => ({
    chunkNo: r.chunk_no,
    firstPos: r.first_pos,
    srcSnapshot: Number(r.src_snapshot),
    srcChunk: r.src_chunk,
    segSnapshot: Number(r.seg_snapshot),
    segChunk: r.seg_chunk,
  }));
  const starts = snap.chunk_starts ? decodeUint32s(snap.chunk_starts) : new Uint32Array(0);
  // A snapshot whose map does not cover its chunks (none should be) is laid out again whole.
  return { starts: map.length === starts.length ? starts : new Uint32Array(0), count: snap.record_count, map };
}

/** The thin chunks of the previous snapshot's chunks `chunkNos`, by chunk number. */
async function thinChunksOf(c: Conn, prev: number | null, chunkNos: number[]): Promise<Map<number, ThinChunk>> {
  const out = new Map<number, ThinChunk>();
  if (prev === null || chunkNos.length === 0) return out;
  const rows = await c.rows<{ chunk_no: number; first_pos: number; bounds: Buffer; bytes: Buffer }>(
    `SELECT m.chunk_no, m.first_pos, t.bounds, t.bytes FROM chunk_map m
     JOIN thin_chunks t ON t.snapshot_id = m.src_snapshot AND t.chunk_no = m.src_chunk
     WHERE m.snapshot_id = $1 AND m.chunk_no = ANY($2::int[])`,
    [prev, chunkNos],
  );
  for (const r of rows) out.set(r.chunk_no, { chunkNo: r.chunk_no, firstPos: r.first_pos, bounds: decodeUint32s(r.bounds), bytes: r.bytes });
  return out;
}

/** Stores chunks this snapshot lays out, and map rows: `map`, or the chunks' own. */
export async function writeChunks(c: Conn, snapshotId: number, out: Chunk[] | LayoutOutput) {
  const chunks = Array.isArray(out) ? out : out.chunks;
  const map = Array.isArray(out) ? out.map((k) => ownEntry(snapshotId, k)) : out.map;
  if (map.length > 0) {
    const enc = new CopyEncoder(16 * 1024);
    for (const e of map) enc.row(7).int8(snapshotId).int4(e.chunkNo).int4(e.firstPos).int8(e.srcSnapshot).int4(e.srcChunk).int8(e.segSnapshot).int4(e.segChunk);
    await copyIn(c, 'chunk_map', ['snapshot_id', 'chunk_no', 'first_pos', 'src_snapshot', 'src_chunk', 'seg_snapshot', 'seg_chunk'], [enc.take(true)]);
  }
  if (chunks.length === 0) return;
  // Each chunk's bytes go to the socket as they are: copying megabytes of them into one COPY
  // buffer (and out again) cost ~50 MB of peak RSS on a 100,000-row import.
  async function* encoded() {
    const enc = new CopyEncoder(16 * 1024);
    for (const k of chunks) {
      enc.row(5).int8(snapshotId).int4(k.chunkNo).int4(k.firstPos).bytes(encodeUint32s(k.offsets)).bytesFollow(k.bytes.length);
      yield enc.take();
      yield k.bytes;
    }
    yield enc.take(true);
  }
  await copyIn(c, 'chunks', ['snapshot_id', 'chunk_no', 'first_pos', 'offsets', 'bytes'], encoded());
  async function* thin() {
    const enc = new CopyEncoder(64 * 1024);
    for (const k of chunks) {
      const t = k.thin!;
      enc.row(5).int8(snapshotId).int4(t.chunkNo).int4(t.firstPos).bytes(encodeUint32s(t.bounds)).bytes(t.bytes);
      if (enc.size >= COPY_FLUSH_BYTES) yield enc.take();
    }
    yield enc.take(true);
  }
  await copyIn(c, 'thin_chunks', ['snapshot_id', 'chunk_no', 'first_pos', 'bounds', 'bytes'], thin());
}
