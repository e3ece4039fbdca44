/**
 * ChunkBuilder in `views` mode (the snapshot writers) lays out exactly the
 * chunks it lays out when each chunk owns its bytes, however the caller
 * recycles, and whatever the items' sizes (some larger than its buffer).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ChunkBuilder, itemBodies } from '../../src/store/chunk-builder.js';
import type { Chunk } from '../../src/store/store.js';

const AT = Date.UTC(2026, 10, 23, 12, 0, 0);

interface Laid {
  chunkNo: number;
  firstPos: number;
  offsets: number[];
  bytes: Buffer;
}

/** A chunk as a caller would keep it after its write: a copy, taken before any recycle. */
const keep = (c: Chunk): Laid => ({ chunkNo: c.chunkNo, firstPos: c.firstPos, offsets: [...c.offsets], bytes: Buffer.from(c.bytes) });

function layOut(bodies: Buffer[], times: number[], builder: ChunkBuilder, recycleAfter: (i: number) => boolean): Laid[] {
  const out: Laid[] = [];
  let pending: Chunk[] = [];
  bodies.forEach((body, i) => {
    const chunk = builder.add(body, times[i]!);
    if (chunk) pending.push(chunk);
    if (recycleAfter(i)) {
      out.push(...pending.map(keep));
      pending = [];
      builder.recycle();
    }
  });
  const last = builder.flush();
  if (last) pending.push(last);
  out.push(...pending.map(keep));
  return out;
}

test('views: the same chunks as owned copies, for any item sizes and any recycling', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 70_000 }), fc.integer({ min: 0, max: 255 }), fc.boolean()), { maxLength: 120 }),
      fc.integer({ min: 1, max: 7 }),
      (items, every) => {
        const bodies = items.map(([n, fill]) => Buffer.alloc(n, fill));
        // Two times, so that the timeline has more than one entry.
        const times = items.map(([, , later]) => (later ? AT + 1000 : AT));
        const owned = layOut(bodies, times, new ChunkBuilder(), () => false);
        const views = layOut(bodies, times, new ChunkBuilder({ views: true }), (i) => i % every === 0);
        assert.deepEqual(views, owned);
      },
    ),
    { numRuns: 200 },
  );
});

test('views: items larger than the buffer, and a recycle with an open chunk, keep every byte', () => {
  const big = Buffer.alloc(5 * 1024 * 1024, 7); // larger than the 4 MiB buffer
  const bodies = [Buffer.from('{"a":1,'), big, Buffer.from('{"b":2,'), Buffer.from('{"c":3,')];
  const builder = new ChunkBuilder({ views: true });
  const chunks: Laid[] = [];
  for (const body of bodies) {
    const c = builder.add(body, AT);
    if (c) chunks.push(keep(c));
    builder.recycle();
  }
  const last = builder.flush();
  if (last) chunks.push(keep(last));
  const back = chunks.flatMap((c) => itemBodies(Uint32Array.from(c.offsets), c.bytes, AT));
  assert.equal(back.length, bodies.length);
  back.forEach((b, i) => assert.ok(b.equals(bodies[i]!), `item ${i}`));
  assert.deepEqual(chunks.map((c) => c.firstPos), chunks.map((_, i) => (i === 0 ? 0 : chunks[i - 1]!.firstPos + chunks[i - 1]!.offsets.length - 1)));
});
