/**
 * Gzip bodies assembled from precompressed segments (src/http/api/gzip-segments.ts)
 * and the CRC arithmetic behind their trailer (crc32-combine.ts): whatever the
 * mix of segments and bytes compressed on the spot, the body gunzips to exactly
 * the bytes in order, with a correct CRC and length (gunzipSync checks both).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { crc32Combine } from '../../src/http/api/crc32-combine.js';
import { assembleGzip, type BodyPart } from '../../src/http/api/gzip-segments.js';
import { deflateSegment } from '../../src/snapshots/chunk-segments.js';

/** JSON-like bytes that compress, of about `n` bytes. */
const jsonish = (n: number, seed: number) =>
  Buffer.from(Array.from({ length: Math.ceil(n / 40) }, (_, i) => `{"id_erp":"C${seed}-${i}","v":"${'x'.repeat(i % 9)}"}`).join(',')).subarray(0, n);

test('crc32Combine gives the CRC of the concatenation', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
      const joined = crc32(Buffer.concat([a, b]));
      assert.equal(crc32Combine(crc32(a), crc32(b), b.length), joined);
    }),
    { numRuns: 300 },
  );
  // Lengths past 2^16 and 2^24 exercise the higher powers of x.
  const a = randomBytes(17);
  const b = randomBytes(70_001);
  assert.equal(crc32Combine(crc32(a), crc32(b), b.length), crc32(Buffer.concat([a, b])));
  assert.equal(crc32Combine(123, 0, 0), 123, 'an empty B changes nothing');
});

test('a segment is raw deflate ending with a sync flush: byte-aligned, not final, and it inflates to the chunk', async () => {
  const chunk = jsonish(70_000, 1);
  const s = await deflateSegment(7, chunk);
  assert.equal(s.chunkNo, 7);
  assert.equal(s.rawLength, chunk.length);
  assert.equal(s.crc32, crc32(chunk));
  assert.ok(s.deflate.length < chunk.length / 3, 'it is compressed');
  // A sync flush ends with an empty stored block: 00 00 ff ff.
  assert.deepEqual([...s.deflate.subarray(-4)], [0x00, 0x00, 0xff, 0xff]);
  // Not final: inflating it alone as a finished stream fails…
  assert.throws(() => inflateRawSync(s.deflate));
  // …and it inflates to the chunk when the stream may stay open.
  assert.deepEqual(inflateRawSync(s.deflate, { finishFlush: 2 /* Z_SYNC_FLUSH */ }), chunk);
});

test('any mix of segments and bytes compressed on the spot gunzips to exactly the bytes in order', async () => {
  // A pool of segments made once; properties pick among them.
  const pool = await Promise.all(Array.from({ length: 6 }, (_, i) => jsonish([0, 1, 200, 5000, 40_000, 66_000][i]!, i)).map((b, i) => deflateSegment(i, b).then((s) => ({ s, b }))));
  const part = fc.oneof(
    fc.integer({ min: 0, max: pool.length - 1 }).map((i) => ({ kind: 'segment' as const, i })),
    fc.integer({ min: 0, max: 70_000 }).map((n) => ({ kind: 'raw' as const, n })),
    fc.constantFrom(',', ']}', '{"ok":true,"items":[').map((t) => ({ kind: 'text' as const, t })),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(part, { maxLength: 12 }), fc.integer({ min: 0, max: 1000 }), async (spec, seed) => {
      const parts: BodyPart[] = [];
      const raw: Buffer[] = [];
      spec.forEach((p, k) => {
        const b = p.kind === 'segment' ? pool[p.i]!.b : p.kind === 'raw' ? jsonish(p.n, seed + k) : Buffer.from(p.t);
        raw.push(b);
        parts.push(p.kind === 'segment' ? { segment: pool[p.i]!.s } : { raw: b });
      });
      const body = await assembleGzip(parts);
      assert.deepEqual([...body.subarray(0, 3)], [0x1f, 0x8b, 0x08]);
      assert.deepEqual(gunzipSync(body), Buffer.concat(raw));
    }),
    { numRuns: 150 },
  );
});

test('edge cases: nothing at all, a body ending with a segment, one of only segments, a long raw run', async () => {
  assert.deepEqual(gunzipSync(await assembleGzip([])), Buffer.alloc(0));
  const chunk = jsonish(30_000, 3);
  const s = await deflateSegment(0, chunk);
  assert.deepEqual(gunzipSync(await assembleGzip([{ raw: Buffer.from('[') }, { segment: s }])), Buffer.concat([Buffer.from('['), chunk]));
  assert.deepEqual(gunzipSync(await assembleGzip([{ segment: s }, { segment: s }])), Buffer.concat([chunk, chunk]));
  const long = jsonish(3 * 65_536 + 17, 4);
  const body = await assembleGzip([{ raw: long }, { segment: s }, { raw: Buffer.from(',') }, { raw: long }]);
  assert.deepEqual(gunzipSync(body), Buffer.concat([long, chunk, Buffer.from(','), long]));
});

test('a segment goes out as stored, byte for byte: the body is assembled, not recompressed', async () => {
  const chunk = jsonish(20_000, 5);
  const s = await deflateSegment(0, chunk);
  const body = await assembleGzip([{ raw: Buffer.from('{"items":[') }, { segment: s }, { raw: Buffer.from(']}') }]);
  assert.ok(body.indexOf(s.deflate) > 10, 'the stored deflate bytes are inside the body');
});

test('a segment compressed against the previous chunk is valid exactly where that chunk and a comma precede it', async () => {
  // Items as an export has them: the same long keys in every item, values that differ.
  const items = (n: number) =>
    Buffer.from(Array.from({ length: n }, () => `{${Array.from({ length: 40 }, (_, c) => `"CAMPO_${c}_DE_LA_EXPORTACION":"${randomBytes(3).toString('hex')}"`).join(',')}}`).join(','));
  const previous = items(30);
  const chunk = items(20);
  const s = await deflateSegment(1, chunk, previous);
  assert.equal(s.contextLength, 8192);
  const alone = await deflateSegment(1, chunk);
  assert.ok(s.deflate.length < alone.deflate.length, 'the context makes it smaller');
  // Preceded by the previous chunk's end and the comma, as in a page: it decodes.
  const tail = previous.subarray(previous.length - 9000);
  const body = await assembleGzip([{ raw: Buffer.from('[') }, { raw: tail }, { raw: Buffer.from(',') }, { segment: s }, { raw: Buffer.from(']') }]);
  assert.deepEqual(gunzipSync(body), Buffer.concat([Buffer.from('['), tail, Buffer.from(','), chunk, Buffer.from(']')]));
  // Preceded by anything else, it does not decode to the chunk: why pages check what precedes a segment.
  const elsewhere = await assembleGzip([{ raw: Buffer.from('['.repeat(9000)) }, { segment: s }, { raw: Buffer.from(']') }]);
  assert.throws(() => assert.deepEqual(gunzipSync(elsewhere), Buffer.concat([Buffer.from('['.repeat(9000)), chunk, Buffer.from(']')])));
});
