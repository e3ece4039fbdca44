/** The compressed-body cache behind gzip and br responses (src/http/api/send-body.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { CompressedBodyCache } from '../../src/http/api/send-body.js';

const body = (n: number) => Buffer.from(`{"page":${n},"items":[${'"x",'.repeat(200)}"y"]}`);

test('a prefetched body is reported as prepared ahead once, so a walking client keeps one page ahead', async () => {
  const cache = new CompressedBodyCache(1024 * 1024);
  let compressed = 0;
  const source = (n: number) => async () => {
    compressed++;
    return [body(n)];
  };
  cache.prefetch('"p1-gzip"', 'gzip', source(1));
  // Asked for while still under way: the same compression is awaited, not a second one.
  const out = await cache.get('"p1-gzip"', 'gzip', source(1));
  assert.deepEqual(gunzipSync(out), body(1));
  assert.equal(compressed, 1);
  assert.equal(cache.takePrefetched('"p1-gzip"'), true);
  assert.equal(cache.takePrefetched('"p1-gzip"'), false);
  // A cached or pending body is not prefetched again.
  cache.prefetch('"p1-gzip"', 'gzip', source(1));
  assert.equal(cache.takePrefetched('"p1-gzip"'), false);
  assert.equal(compressed, 1);
  // A body fetched on demand was not prepared ahead.
  await cache.get('"p2-gzip"', 'gzip', source(2));
  assert.equal(cache.takePrefetched('"p2-gzip"'), false);
});

test('evicted and failed prefetches are forgotten', async () => {
  const cache = new CompressedBodyCache(1); // nothing fits
  cache.prefetch('"big-gzip"', 'gzip', async () => [body(3)]);
  await cache.get('"big-gzip"', 'gzip', async () => [body(3)]);
  assert.equal(cache.cached('"big-gzip"'), false);
  assert.equal(cache.takePrefetched('"big-gzip"'), false);
  cache.prefetch('"bad-gzip"', 'gzip', async () => {
    throw new Error('store unavailable');
  });
  await assert.rejects(cache.get('"bad-gzip"', 'gzip', async () => [body(4)]));
  assert.equal(cache.takePrefetched('"bad-gzip"'), false);
});

test('a body given as pieces is compressed as the pieces joined, in gzip and br', async () => {
  const cache = new CompressedBodyCache(1024 * 1024);
  // Pieces as a list page has them: an envelope, views of chunks (one empty), the closing bytes.
  const chunk = Buffer.from('{"id_erp":"C1","nombre":"Ñandú"},'.repeat(3000));
  const pieces = [Buffer.from('{"ok":true,"items":['), chunk.subarray(0, 40_000), Buffer.alloc(0), chunk.subarray(40_000, chunk.length - 1), Buffer.from(']}')];
  const joined = Buffer.concat(pieces);
  assert.deepEqual(gunzipSync(await cache.get('"pieces-gzip"', 'gzip', async () => pieces)), joined);
  assert.deepEqual(brotliDecompressSync(await cache.get('"pieces-br"', 'br', () => pieces)), joined);
  assert.deepEqual(gunzipSync(await cache.get('"empty-gzip"', 'gzip', () => [])), Buffer.alloc(0));
});

test('a small compressed body is its own bytes, not a view of a larger buffer it would keep alive', async () => {
  const cache = new CompressedBodyCache(1024 * 1024);
  const gz = await cache.get('"small-gzip"', 'gzip', () => [body(5)]);
  const br = await cache.get('"small-br"', 'br', () => [body(5)]);
  assert.deepEqual(gunzipSync(gz), body(5));
  assert.deepEqual(brotliDecompressSync(br), body(5));
  // A view into zlib's output buffer would span the whole buffer (16 KiB or more).
  for (const out of [gz, br]) assert.ok(out.buffer.byteLength <= 8192, `backed by ${out.buffer.byteLength} bytes for a ${out.length}-byte body`);
});

test('a gzip body made another way (assembled from segments) is what gzip gets and caches; br still compresses the pieces', async () => {
  const cache = new CompressedBodyCache(1024 * 1024);
  let assembled = 0;
  const made = gzipSync(body(9));
  const gzip = async () => {
    assembled++;
    return made;
  };
  assert.equal(await cache.get('"s-gzip"', 'gzip', async () => [body(9)], gzip), made);
  assert.equal(await cache.get('"s-gzip"', 'gzip', async () => [body(9)], gzip), made);
  assert.equal(assembled, 1, 'cached by ETag like any other');
  assert.deepEqual(brotliDecompressSync(await cache.get('"s-br"', 'br', async () => [body(9)], gzip)), body(9));
  assert.equal(assembled, 1, 'br does not use it');
});
