/**
 * Gzip list pages assembled from segments (issue 4), over real HTTP, once per
 * store: whatever the page's boundaries — mid-chunk, within one chunk, on
 * chunk boundaries, empty, filtered by updated_since — and whichever chunks
 * have segments, the gzip body gunzips to exactly the identity body.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { constants, crc32, deflateRawSync, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { deflateSegment } from '../../src/snapshots/chunk-segments.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Chunk, ChunkSegment, SnapshotMeta, Store } from '../../src/store/store.js';
import { bearer, request } from '../helpers/http.js';
import { customer, CUSTOMER_COLUMNS, range } from '../helpers/records.js';
import type { StoreFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const T1 = Date.parse('2026-01-10T08:00:00.000Z');
const T2 = Date.parse('2026-02-20T09:30:00.500Z');
const COUNT = 700;

/**
 * A segment that stores the chunk uncompressed (deflate level 0): as valid as
 * a real one, and recognisable in a response, where the chunk's bytes then
 * appear verbatim — proof that the segment, not a fresh compression, was sent.
 */
function storedSegment(c: Chunk): ChunkSegment {
  const deflate = deflateRawSync(c.bytes, { level: 0, finishFlush: constants.Z_SYNC_FLUSH });
  return { chunkNo: c.chunkNo, rawLength: c.bytes.length, contextLength: 0, crc32: crc32(c.bytes), deflate };
}

/**
 * Whether most of `bytes` appears verbatim in `body`, in windows of 1,000
 * bytes (a stored deflate stream splits its data into blocks with small
 * headers in between, so the whole never appears in one piece).
 */
function verbatimIn(body: Buffer, bytes: Buffer): boolean {
  let found = 0;
  let windows = 0;
  for (let at = 0; at + 1000 <= bytes.length; at += 1000, windows++) if (body.includes(bytes.subarray(at, at + 1000))) found++;
  return found >= windows * 0.8;
}

export function gzipPagesSuite(factory: StoreFactory) {
  describe(`gzip pages from segments (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let key: string;
    let meta: SnapshotMeta;
    let chunks: Chunk[];
    const get = (path: string, gzip: boolean) =>
      request(server.baseUrl + path, { headers: { ...bearer(key), ...(gzip ? { 'accept-encoding': 'gzip' } : {}) } });
    /** The chunks that got a stored (verbatim) segment; the others got a real one or none. */
    const verbatim = new Set<number>();
    /** Real segments, compressed against the end of the chunk before them. */
    const real = new Map<number, ChunkSegment>();

    before(async () => {
      ({ store, cleanup } = await factory.create());
      const a = await companyWithKey(store, 'gz');
      key = a.key;
      // Items of ~1.3 KB: ~50 per 64 KiB chunk, so 700 customers make a dozen chunks or more.
      const rows = range(COUNT).map((id, i) => customer(id, `Cliente ${id}`, i + 2, { obs: `${'observación '.repeat(80)}${i}` }));
      await replaceRecords(store, { companyId: a.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: T1 }, rows);
      // A second import changes 30 customers: updated_since=T2 starts mid-chunk.
      const second = rows.map((r, i) => (i % 23 === 5 ? customer(range(COUNT)[i]!, `Renamed ${i}`, i + 2, { obs: 'changed' }) : r));
      const published = await replaceRecords(store, { companyId: a.company.id, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: T2 }, second);
      meta = (await store.snapshotMeta(published.snapshotId))!;
      assert.ok(meta.chunkStarts.length >= 12, `${meta.chunkStarts.length} chunks`);
      chunks = await store.readChunks(meta.id, 0, meta.chunkStarts.length - 1);
      // Chunks 2 and 7 have no segment (a crash midway), every third one a verbatim one, the rest a real one.
      const segments: ChunkSegment[] = [];
      for (const c of chunks) {
        if (c.chunkNo === 2 || c.chunkNo === 7) continue;
        if (c.chunkNo % 3 === 0) {
          verbatim.add(c.chunkNo);
          segments.push(storedSegment(c));
        } else {
          const s = await deflateSegment(c.chunkNo, c.bytes, chunks[c.chunkNo - 1]?.bytes);
          real.set(c.chunkNo, s);
          segments.push(s);
        }
      }
      assert.ok(real.get(5)!.contextLength > 1000 && real.get(5)!.contextLength <= 8192);
      await store.writeSegments(meta.id, segments);
      server = await startServer(store, { RATE_LIMIT_PER_MINUTE: '1000000' });
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    /** Asks for the page both ways; returns the gzip response's body after checking it against the identity one. */
    async function same(query: string): Promise<Buffer> {
      const plain = await get(`/v1/clientes?${query}`, false);
      const gz = await get(`/v1/clientes?${query}`, true);
      assert.equal(plain.status, 200, plain.text());
      assert.equal(gz.status, 200);
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(gz.headers.etag, String(plain.headers.etag).replace(/"$/, '-gzip"'), 'the gzip ETag is as before');
      assert.deepEqual(gunzipSync(gz.body).toString('utf8'), plain.text(), query);
      return gz.body;
    }

    const start = (k: number) => meta.chunkStarts[k]!;

    test('pages on chunk boundaries send the stored segments of whole chunks, but for the first', async () => {
      // Chunks 3..6 whole: 4, 5 and 6 follow a whole chunk and go out as their segments (6's is
      // verbatim); 3 follows the envelope, not its context, so it is compressed.
      const body = await same(`limit=${start(7) - start(3)}&offset=${start(3)}`);
      assert.ok(verbatimIn(body, chunks[6]!.bytes), 'chunk 6 went out as its stored segment');
      assert.ok(!verbatimIn(body, chunks[3]!.bytes), 'chunk 3, first in the page, was compressed');
      // Chunk 3 inside a larger page that starts and ends mid-chunk, ten items into chunk 2.
      const wide = await same(`limit=${start(5) - start(3) + 20}&offset=${start(3) - 10}`);
      assert.ok(verbatimIn(wide, chunks[3]!.bytes));
    });

    test('a partial chunk at an edge is compressed, not sent as its segment', async () => {
      const k = 6; // verbatim segment; the page takes all of it but its first item
      const body = await same(`limit=${start(k + 1) - start(k) - 1}&offset=${start(k) + 1}`);
      assert.ok(!verbatimIn(body, chunks[k]!.bytes.subarray(2000)), 'no verbatim bytes from a partial chunk');
      assert.ok(verbatimIn(await same(`limit=${start(k + 1) - start(k - 1)}&offset=${start(k - 1)}`), chunks[k]!.bytes), 'and whole, it is its segment');
    });

    test('a segment compressed against the end of the chunk before it is sent only where the page holds that end', async () => {
      const k = 5; // a real segment; chunk 4 has a real one too
      const s = real.get(k)!;
      const bytesBefore = (offset: number) => {
        const c = chunks[k - 1]!;
        return c.bytes.length - c.offsets[offset - c.firstPos]!;
      };
      // Starting in chunk k - 1 early enough: chunk k is its segment.
      let offset = start(k - 1) + 1;
      assert.ok(bytesBefore(offset) >= s.contextLength - 1);
      assert.ok((await same(`limit=${start(k + 1) - offset}&offset=${offset}`)).includes(s.deflate), 'the segment was sent');
      // Starting in the last item of chunk k - 1: too little of it precedes, so chunk k is compressed.
      offset = start(k) - 1;
      assert.ok(bytesBefore(offset) < s.contextLength - 1);
      assert.ok(!(await same(`limit=${start(k + 1) - offset}&offset=${offset}`)).includes(s.deflate), 'not sent without its context');
      // Starting on chunk k itself: the envelope precedes it, not its context.
      assert.ok(!(await same(`limit=${start(k + 2) - start(k)}&offset=${start(k)}`)).includes(s.deflate));
      // After the whole chunk k - 1, which is the page's first: its context is there.
      assert.ok((await same(`limit=${start(k + 1) - start(k - 1)}&offset=${start(k - 1)}`)).includes(s.deflate));
    });

    test('edge cases: within one chunk, one item, the last item, empty pages, all at once', async () => {
      await same(`limit=5&offset=${start(4) + 3}`);
      await same('limit=1&offset=0');
      await same(`limit=1&offset=${COUNT - 1}`);
      await same(`limit=10&offset=${COUNT}`);
      await same(`limit=10&offset=${COUNT + 50}`);
      await same(`limit=1000&offset=0`);
      await same(`limit=1000&updated_since=2030-01-01T00:00:00Z`);
      // Chunks without a segment (2 and 7) inside a page, next to chunks with one.
      await same(`limit=${start(9) - start(1)}&offset=${start(1)}`);
    });

    test('include_deleted pages (compressed whole) gunzip to the identity body', async () => {
      await same('include_deleted=true&limit=333&offset=17');
    });

    test('property: any offset, limit and updated_since', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: COUNT + 5 }),
          fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 1000 })),
          fc.constantFrom(null, T1, T2, T2 + 1),
          async (offset, limit, since) => {
            await same(`limit=${limit}&offset=${offset}${since === null ? '' : `&updated_since=${new Date(since).toISOString()}`}`);
          },
        ),
        { numRuns: 60 },
      );
    });

    // Last: it stores the segments of chunks 2 and 7, which the tests above expect missing.
    test('a page is the same gzip bytes whether its segments were stored or made when it was read', async () => {
      // Chunks 2 and 7 have no stored segment: this server makes them while assembling.
      const queries = [`limit=${start(9) - start(1)}&offset=${start(1)}`, `limit=${start(8) - start(6) + 7}&offset=${start(6) - 30}`, 'limit=1000&offset=0'];
      const before = [];
      for (const q of queries) before.push(await same(q));
      assert.ok(before[0]!.includes((await deflateSegment(2, chunks[2]!.bytes, chunks[1]!.bytes)).deflate), 'chunk 2 made as the import makes it');
      // Now stored, as an import would have stored them; a new server (empty caches) reads them.
      await store.writeSegments(meta.id, [
        await deflateSegment(2, chunks[2]!.bytes, chunks[1]!.bytes),
        await deflateSegment(7, chunks[7]!.bytes, chunks[6]!.bytes),
      ]);
      const fresh = await startServer(store, { RATE_LIMIT_PER_MINUTE: '1000000' });
      try {
        for (const [i, q] of queries.entries()) {
          const res = await request(`${fresh.baseUrl}/v1/clientes?${q}`, { headers: { ...bearer(key), 'accept-encoding': 'gzip' } });
          assert.deepEqual(res.body, before[i], q);
        }
      } finally {
        await fresh.close();
      }
    });
  });
}
