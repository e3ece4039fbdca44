/**
 * Snapshots share unchanged chunks (src/store/chunk-reuse.ts, issues 22 and
 * 23): a re-import that changes a few records stores only the chunks those
 * touch, and maps the rest to the stored chunks of the snapshot before it.
 * What readers get must be exactly what a snapshot laid out from scratch
 * would give: the same items in the same order, the same thin items and
 * filter indexes (compared with a ChunkBuilder fed the same items), and gzip
 * segments that inflate to the chunk they stand for. Sweeping the old
 * snapshot keeps what the new one shares, and night after night the stored
 * chunks stay bounded. Rows are counted in the database itself. Once per store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { constants, inflateRawSync } from 'node:zlib';
import { ChunkBuilder, itemBodies } from '../../src/store/chunk-builder.js';
import { thinStride } from '../../src/store/index-builder.js';
import { SEGMENT_CONTEXT_BYTES, writeChunkSegments } from '../../src/snapshots/chunk-segments.js';
import { writeRecords, type RecordInput } from '../../src/snapshots/write-records.js';
import type { Chunk, Store, ThinChunk } from '../../src/store/store.js';
import { customer, CUSTOMER_COLUMNS, range } from '../helpers/records.js';
import { sqlCounter } from '../helpers/sql-count.js';
import type { StoreFactory } from '../helpers/stores.js';

const DAY = 24 * 3600 * 1000;
const FIRST = Date.parse('2026-10-01T02:00:00.000Z');

/** Customers with remarks long enough for about 100 items a chunk. */
function rows(ids: readonly string[], version: (id: string) => string = () => 'v1'): RecordInput[] {
  return ids.map((id, i) => customer(id, `Cliente ${id} ${version(id)}`, i + 2, { obs: `Observaciones ${id} `.repeat(25) }));
}

/** Counts stored rows of every snapshot table, straight from the database (the suite owns it). */
function rowCounter(databaseUrl: string) {
  const tables = ['chunks', 'thin_chunks', 'chunk_segments', 'chunk_map', 'snapshots'] as const;
  const counter = sqlCounter(databaseUrl);
  return {
    async count(): Promise<Record<(typeof tables)[number], number>> {
      const out = {} as Record<(typeof tables)[number], number>;
      for (const t of tables) out[t] = await counter.count(`SELECT count(*) AS n FROM ${t}`);
      return out;
    },
    /** A count of the suite's own query. */
    rows: (sql: string) => counter.count(sql),
    close: () => counter.close(),
  };
}

interface Item {
  id_erp: string;
  nombre: string;
  actualizado_at: string;
}

export async function allChunks(store: Store, snapshotId: number): Promise<Chunk[]> {
  const meta = (await store.snapshotMeta(snapshotId))!;
  return meta.chunkStarts.length === 0 ? [] : store.readChunks(snapshotId, 0, meta.chunkStarts.length - 1);
}

export function itemsOf(chunks: readonly Chunk[]): Buffer[] {
  return chunks.flatMap((c) => Array.from({ length: c.offsets.length - 1 }, (_, k) => c.bytes.subarray(c.offsets[k]!, c.offsets[k + 1]! - 1)));
}

/** Each thin item of thin chunks, in order. */
function thinItemsOf(thin: readonly ThinChunk[]): string[] {
  const stride = thinStride('clientes');
  return thin.flatMap((t) => {
    const count = t.bounds.length / stride;
    return Array.from({ length: count }, (_, k) =>
      t.bytes.toString('utf8', t.bounds[k * stride]!, k + 1 < count ? t.bounds[(k + 1) * stride]! - 1 : t.bytes.length),
    );
  });
}

export function chunkSharingSuite(factory: StoreFactory) {
  describe(`re-imports share unchanged chunks (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let counter: ReturnType<typeof rowCounter>;
    let slugs = 0;

    before(async () => {
      let databaseUrl: string;
      ({ store, databaseUrl, cleanup } = await factory.create());
      counter = rowCounter(databaseUrl);
    });
    after(async () => {
      await counter?.close();
      await cleanup?.();
    });

    const company = async () => (await store.createCompany(`share-${factory.name}-${++slugs}`, 'Sharing')).id;
    async function load(companyId: number, input: RecordInput[], at: number) {
      const staged = await writeRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at }, [input]);
      await store.publishSnapshot(staged.snapshotId);
      return staged;
    }

    /** Checks a snapshot's items, thin items and indexes against a ChunkBuilder fed the same items from scratch. */
    async function assertLaidOutAsFresh(snapshotId: number) {
      const chunks = await allChunks(store, snapshotId);
      const items = itemsOf(chunks);
      const fresh = new ChunkBuilder({ kind: 'clientes' });
      const freshThin: ThinChunk[] = [];
      const add = (c: Chunk | null) => c && freshThin.push(c.thin!);
      for (const item of items) {
        const ts = Date.parse((JSON.parse(item.toString('utf8')) as Item).actualizado_at);
        const [body] = itemBodies(Uint32Array.of(0, item.length + 1), item, ts);
        add(fresh.add(body!, ts));
      }
      add(fresh.flush());
      const meta = (await store.snapshotMeta(snapshotId))!;
      assert.equal(meta.count, items.length);
      assert.deepEqual(
        chunks.map((c) => c.firstPos),
        Array.from(meta.chunkStarts),
        'each chunk starts where the snapshot says',
      );
      const thin = await store.readThinChunks(snapshotId, 0, chunks.length - 1);
      assert.deepEqual(thinItemsOf(thin), thinItemsOf(freshThin), 'thin items');
      assert.deepEqual(
        thin.map((t) => t.firstPos),
        chunks.map((c) => c.firstPos),
      );
      for (const ix of fresh.indexes()) {
        assert.deepEqual(await store.readIndex(snapshotId, ix.name), ix.bytes, `index ${ix.name}`);
      }
      return items.map((b) => JSON.parse(b.toString('utf8')) as Item);
    }

    /** Every segment the snapshot maps inflates to its chunk, against the chunk before it. */
    async function assertSegmentsInflate(snapshotId: number) {
      const chunks = await allChunks(store, snapshotId);
      const segments = await store.readSegments(snapshotId, 0, chunks.length - 1);
      assert.deepEqual(
        segments.map((s) => s.chunkNo),
        chunks.map((c) => c.chunkNo),
        'every chunk has its segment',
      );
      for (const s of segments) {
        const prev = s.chunkNo > 0 ? chunks[s.chunkNo - 1]!.bytes : null;
        const dictionary =
          s.contextLength > 0 ? Buffer.concat([prev!.subarray(prev!.length - (s.contextLength - 1)), Buffer.from(',')]) : undefined;
        const raw = inflateRawSync(s.deflate, { finishFlush: constants.Z_SYNC_FLUSH, ...(dictionary ? { dictionary } : {}) });
        assert.ok(raw.equals(chunks[s.chunkNo]!.bytes), `segment of chunk ${s.chunkNo}`);
        assert.ok(s.contextLength <= SEGMENT_CONTEXT_BYTES);
      }
    }

    test('a re-import with a few changes stores only the chunks they touch; readers get exactly the fresh layout', async () => {
      const companyId = await company();
      const ids = range(3000);
      const before = await counter.count();
      const first = await load(companyId, rows(ids), FIRST);
      const firstChunks = (await store.snapshotMeta(first.snapshotId))!.chunkStarts.length;
      assert.ok(firstChunks >= 20, `enough chunks to share (${firstChunks})`);
      assert.deepEqual(first.layout, { chunksWritten: firstChunks, chunksShared: 0, indexRuns: 0 });
      await writeChunkSegments(store, first.snapshotId);
      await assertSegmentsInflate(first.snapshotId);

      // Three records changed far apart, one removed, two new: a nightly re-export.
      const changed = new Set([ids[10]!, ids[1500]!, ids[2998]!]);
      const removed = ids[700]!;
      const next = [...ids.filter((id) => id !== removed), 'C900001', 'C900002'];
      const second = await load(companyId, rows(next, (id) => (changed.has(id) ? 'v2' : 'v1')), FIRST + DAY);
      assert.deepEqual([second.changes.inserted, second.changes.updated, second.changes.deleted], [2, 3, 1]);
      const { chunksWritten, chunksShared } = second.layout!;
      const secondChunks = (await store.snapshotMeta(second.snapshotId))!.chunkStarts.length;
      assert.equal(chunksWritten + chunksShared, secondChunks);
      // The chunks holding the four changed or removed records are laid out again (with a small
      // neighbour at most each), and the new and changed records go in a last chunk.
      assert.ok(chunksWritten <= 9, `chunks written: ${chunksWritten} of ${secondChunks}`);
      assert.ok(chunksShared >= firstChunks - 8, `chunks shared: ${chunksShared} of ${firstChunks}`);
      const stored = await counter.count();
      assert.equal(stored.chunks - before.chunks, firstChunks + chunksWritten, 'only the written chunks are stored again');
      assert.equal(stored.thin_chunks - before.thin_chunks, firstChunks + chunksWritten);

      const items = await assertLaidOutAsFresh(second.snapshotId);
      // Unchanged records keep their order and time; changed and new ones come last, at the new time.
      const stay = ids.filter((id) => id !== removed && !changed.has(id));
      const last = [...changed, 'C900001', 'C900002'].sort();
      assert.deepEqual(
        items.map((i) => i.id_erp),
        [...stay, ...last],
      );
      assert.ok(items.slice(0, stay.length).every((i) => i.actualizado_at === new Date(FIRST).toISOString()));
      assert.ok(items.slice(stay.length).every((i) => i.actualizado_at === new Date(FIRST + DAY).toISOString()));
      assert.equal(items.find((i) => i.id_erp === ids[1500])!.nombre, `Cliente ${ids[1500]} v2`);

      // Segments: the shared chunks keep theirs where the chunk before them is shared too.
      const missing = await store.chunksWithoutSegments(second.snapshotId);
      assert.ok(missing.length > 0 && missing.length <= 2 * chunksWritten, `segments to make: ${missing.length}`);
      const pass = await writeChunkSegments(store, second.snapshotId);
      assert.equal(pass.chunks, missing.length, 'the pass makes only the missing segments');
      assert.equal(pass.complete, true);
      await assertSegmentsInflate(second.snapshotId);

      // Swept, the first snapshot leaves every chunk, thin chunk and segment the second maps.
      assert.equal(await store.sweepSnapshots(Date.now() + 1000), 1);
      assert.deepEqual(await assertLaidOutAsFresh(second.snapshotId), items);
      await assertSegmentsInflate(second.snapshotId);
    });

    test('indexes past the spill budget and the part size: built in runs, stored in parts, read back as a fresh build makes them', async () => {
      const companyId = await company();
      // ~25 bytes of id_erp index a customer: 60,000 pass 1 MiB (INDEX_PART_BYTES) and the 4 MiB budget several times.
      const ids = range(60_000);
      const input = (version: (id: string) => string) => ids.map((id, i) => customer(id, `Cliente ${id} ${version(id)}`, i + 2));
      const first = await load(companyId, input(() => 'v1'), FIRST);
      // Written in runs, not gathered whole: a whole build gives the same bytes, so only the count tells.
      assert.ok(first.layout!.indexRuns >= 2, `a first import's indexes built in runs (${first.layout!.indexRuns})`);
      await assertLaidOutAsFresh(first.snapshotId);
      // A re-import lays out from the stage (and shares chunks): the other way into the index build.
      const changed = new Set([ids[5]!, ids[30_000]!, ids[59_990]!]);
      const second = await load(companyId, input((id) => (changed.has(id) ? 'v2' : 'v1')), FIRST + DAY);
      assert.equal(second.changes.updated, 3);
      assert.ok(second.layout!.indexRuns >= 2, `a re-import's indexes built in runs (${second.layout!.indexRuns})`);
      await assertLaidOutAsFresh(second.snapshotId);
      const parts = await counter.rows(`SELECT count(*) AS n FROM snapshot_indexes WHERE snapshot_id = ${second.snapshotId} AND part > 0`);
      assert.ok(parts >= 2, `indexes stored in several parts (${parts} parts past the first)`);
      // The superseded first snapshot, swept here: the next test counts what a sweep removes.
      assert.equal(await store.sweepSnapshots(Date.now() + 1000), 1);
    });

    test('sweeping a snapshot keeps what a later one shares, and removes the rest', async () => {
      const companyId = await company();
      const ids = range(2500);
      const first = await load(companyId, rows(ids), FIRST);
      await writeChunkSegments(store, first.snapshotId);
      const second = await load(companyId, rows(ids, (id) => (id === ids[1200] ? 'v2' : 'v1')), FIRST + DAY);
      await writeChunkSegments(store, second.snapshotId);
      const expected = itemsOf(await allChunks(store, second.snapshotId));
      const beforeSweep = await counter.count();
      assert.equal(await store.sweepSnapshots(Date.now() + 1000), 1, 'the first, superseded, is swept');
      assert.equal(await store.snapshotMeta(first.snapshotId), null);
      const afterSweep = await counter.count();
      // Only the first snapshot's chunks the second does not map are gone: the one that held the changed record.
      const gone = beforeSweep.chunks - afterSweep.chunks;
      assert.ok(gone >= 1 && gone <= 2, `chunks removed: ${gone}`);
      assert.equal(beforeSweep.thin_chunks - afterSweep.thin_chunks, gone);
      const still = itemsOf(await allChunks(store, second.snapshotId));
      assert.equal(still.length, expected.length);
      assert.ok(still.every((b, k) => b.equals(expected[k]!)), 'the live snapshot reads the same bytes');
      await assertLaidOutAsFresh(second.snapshotId);
      await assertSegmentsInflate(second.snapshotId);
    });

    test('segments made only after the re-import land where both snapshots find them', async () => {
      const companyId = await company();
      const ids = range(2500);
      const first = await load(companyId, rows(ids), FIRST);
      // No segment pass for the first (a CLI import with no server running), then a re-import.
      const second = await load(companyId, rows(ids, (id) => (id === ids[1800] ? 'v2' : 'v1')), FIRST + DAY);
      const chunks = (await store.snapshotMeta(second.snapshotId))!.chunkStarts.length;
      assert.equal((await store.chunksWithoutSegments(second.snapshotId)).length, chunks);
      const pass = await writeChunkSegments(store, second.snapshotId);
      assert.equal(pass.chunks, chunks);
      assert.deepEqual(await store.chunksWithoutSegments(second.snapshotId), []);
      await assertSegmentsInflate(second.snapshotId);
      // The shared chunks' segments serve the first snapshot too, where their neighbours are the same.
      const firstMissing = await store.chunksWithoutSegments(first.snapshotId);
      assert.ok(firstMissing.length <= 3, `the first snapshot still lacks ${firstMissing.length} segments`);
      await writeChunkSegments(store, first.snapshotId);
      await assertSegmentsInflate(first.snapshotId);
      await assertSegmentsInflate(second.snapshotId);
      await store.sweepSnapshots(Date.now() + 1000);
      await assertSegmentsInflate(second.snapshotId);
    });

    test('thirty nights of a few changes each: stored chunks stay within 1.5× one snapshot, and reads stay exact', async () => {
      const companyId = await company();
      const ids = range(3000);
      let version = new Map<string, number>();
      const input = () => rows(ids, (id) => `v${version.get(id) ?? 0}`);
      const first = await load(companyId, input(), FIRST);
      const base = await counter.count();
      const oneSnapshot = (await store.snapshotMeta(first.snapshotId))!.chunkStarts.length;
      let seed = 7;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      let last = first;
      for (let night = 1; night <= 30; night++) {
        version = new Map(version);
        for (let k = 0; k < 5; k++) {
          const id = ids[Math.floor(random() * ids.length)]!;
          version.set(id, (version.get(id) ?? 0) + 1);
        }
        last = await load(companyId, input(), FIRST + night * DAY);
        await writeChunkSegments(store, last.snapshotId);
        await store.sweepSnapshots(Date.now() + 1000);
      }
      const now = await counter.count();
      const liveChunks = (await store.snapshotMeta(last.snapshotId))!.chunkStarts.length;
      assert.ok(now.chunks - base.chunks + oneSnapshot <= 1.5 * oneSnapshot, `stored chunks: ${now.chunks - base.chunks + oneSnapshot} for ${oneSnapshot}`);
      assert.equal(now.chunk_map - base.chunk_map + oneSnapshot, liveChunks, 'one map: the live snapshot');
      assert.ok(liveChunks <= oneSnapshot * 1.25, `chunks stay full: ${liveChunks} against ${oneSnapshot}`);
      const items = await assertLaidOutAsFresh(last.snapshotId);
      assert.equal(items.length, ids.length);
      assert.deepEqual(
        new Map(items.map((i) => [i.id_erp, i.nombre])),
        new Map(ids.map((id) => [id, `Cliente ${id} v${version.get(id) ?? 0}`])),
      );
      await assertSegmentsInflate(last.snapshotId);
    });
  });
}
