/**
 * renderEntries writes a page of any positions, whole or trimmed to any
 * `fields`, as exactly the items a plain JSON filter of the whole list gives:
 * whether an item goes out as a view of its chunk (with the comma before it)
 * or as a copy, and whether its trimmed form comes from a kept projection, a
 * fresh one, or none kept at all (a budget too small for any).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { KIND_SPECS, KINDS, type Kind } from '../../src/domain/kinds.js';
import { SandboxSnapshots } from '../../src/sandbox/sandbox-snapshots.js';
import { renderEntries } from '../../src/http/api/subset-page.js';
import { ProjectionCache } from '../../src/http/api/thin-projection.js';
import { renderThinRange } from '../../src/http/api/thin-page.js';
import type { FieldMask } from '../../src/http/api/subset-query.js';

const sandbox = new SandboxSnapshots();

/** Every item of the kind's sandbox snapshot, in list order, parsed. */
function allItems(kind: Kind): Record<string, unknown>[] {
  const { chunks } = sandbox.byKind[kind];
  return JSON.parse(`[${chunks.map((c) => c.bytes.toString('utf8')).join(',')}]`) as Record<string, unknown>[];
}

/** The item with only the keys a mask keeps, in the item's own order (JSON text, so that order counts). */
function trimmed(item: Record<string, unknown>, kind: Kind, mask: FieldMask | null): string {
  if (mask === null) return JSON.stringify(item);
  const names = KIND_SPECS[kind].fields.map((f) => f.name);
  const kept = new Set([...names.filter((_, j) => mask.keep[j]), ...(mask.data ? ['data'] : []), 'actualizado_at']);
  return JSON.stringify(Object.fromEntries(Object.entries(item).filter(([k]) => kept.has(k))));
}

function maskArb(kind: Kind): fc.Arbitrary<FieldMask | null> {
  const f = KIND_SPECS[kind].fields.length;
  return fc.option(
    fc.record({ keep: fc.array(fc.boolean(), { minLength: f, maxLength: f }), data: fc.boolean() }).map((m) => ({ keep: m.keep.map((k, j) => k || j === 0), data: m.data })),
    { nil: null },
  );
}

for (const kind of KINDS) {
  test(`${kind}: any ascending positions, whole or trimmed, render as the plain filter of the list`, async () => {
    const items = allItems(kind);
    const meta = sandbox.byKind[kind].meta;
    assert.equal(items.length, meta.count);
    const kept = new ProjectionCache(64 * 1024 * 1024);
    const none = new ProjectionCache(1);
    await fc.assert(
      fc.asyncProperty(
        // Dense runs (views of several items) and sparse picks (one item each) alike.
        fc.uniqueArray(fc.integer({ min: 0, max: meta.count - 1 }), { maxLength: 120 }),
        fc.integer({ min: 0, max: meta.count - 1 }),
        fc.integer({ min: 0, max: 60 }),
        maskArb(kind),
        fc.constantFrom<ProjectionCache | null>(kept, none, null),
        async (picked, runStart, runLength, mask, projections) => {
          const run = Array.from({ length: Math.min(runLength, meta.count - runStart) }, (_, i) => runStart + i);
          const positions = [...new Set([...picked, ...run])].sort((a, b) => a - b);
          const pieces = await renderEntries(sandbox, meta, Uint32Array.from(positions), mask, null, projections);
          // Parsed and written again, as the expectation is: the same keys in the same order, the same values.
          const got = (JSON.parse(`[${Buffer.concat(pieces).toString('utf8')}]`) as Record<string, unknown>[]).map((i) => JSON.stringify(i));
          assert.deepEqual(got, positions.map((p) => trimmed(items[p]!, kind, mask)));
        },
      ),
      { numRuns: 150 },
    );
  });
}

for (const kind of KINDS) {
  test(`${kind}: a thin range (fields without data), walked by chunk, renders as the plain filter of the list`, async () => {
    const items = allItems(kind);
    const meta = sandbox.byKind[kind].meta;
    const f = KIND_SPECS[kind].fields.length;
    const kept = new ProjectionCache(64 * 1024 * 1024);
    // A few projections' worth: pages evict what earlier ones kept (CLOCK), and reuse what is left.
    const small = new ProjectionCache(8 * 1024);
    const none = new ProjectionCache(1);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: meta.count }),
        fc.integer({ min: 0, max: 200 }),
        fc.array(fc.boolean(), { minLength: f, maxLength: f }),
        fc.constantFrom<ProjectionCache | null>(kept, small, none, null),
        async (from, length, keep, projections) => {
          const mask: FieldMask = { keep: keep.map((k, j) => k || j === 0), data: false };
          const to = Math.min(from + length, meta.count);
          const pieces = await renderThinRange(sandbox, meta, from, to, mask, projections);
          const got = (JSON.parse(`[${Buffer.concat(pieces).toString('utf8')}]`) as Record<string, unknown>[]).map((i) => JSON.stringify(i));
          assert.deepEqual(got, items.slice(from, to).map((i) => trimmed(i, kind, mask)));
          // Trimmed projections have a comma before every item, which each view takes along: no piece
          // is a lone comma. (With every field kept, the thin chunk's own bytes are sent, without.)
          if (!mask.keep.every(Boolean)) assert.ok(pieces.every((p) => !(p.length === 1 && p[0] === 0x2c)));
          if (projections) assert.ok(projections.cachedBytes <= (projections === small ? 8 * 1024 : projections === none ? 1 : 64 * 1024 * 1024));
        },
      ),
      { numRuns: 150 },
    );
  });
}

test('scattered single items are copied into a few blocks, runs of several stay views of their chunk', async () => {
  const kind = 'avisos-correctivo';
  const meta = sandbox.byKind[kind].meta;
  const items = allItems(kind);
  // Every other position: no two consecutive, so every item is a run of one.
  const scattered = Array.from({ length: Math.floor(meta.count / 2) }, (_, i) => 2 * i);
  const pieces = await renderEntries(sandbox, meta, Uint32Array.from(scattered), null);
  assert.ok(pieces.length <= 8, `${scattered.length} scattered items in ${pieces.length} pieces`);
  assert.deepEqual(JSON.parse(`[${Buffer.concat(pieces).toString('utf8')}]`), scattered.map((p) => items[p]));
  // The whole list: runs of whole chunks, each a view (a piece per chunk, not copies).
  const all = Array.from({ length: meta.count }, (_, i) => i);
  const whole = await renderEntries(sandbox, meta, Uint32Array.from(all), null);
  assert.equal(whole.length, meta.chunkStarts.length);
  assert.deepEqual(JSON.parse(`[${Buffer.concat(whole).toString('utf8')}]`), items);
});
