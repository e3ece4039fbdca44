/**
 * A snapshot's filter indexes built in sorted runs on disk (index-runs.ts,
 * as an import past its budget builds them) are the indexes a whole build
 * in memory makes, byte for byte, for every kind and however the values
 * repeat across runs; and the runs' file goes when the build ends.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { KIND_SPECS, type Kind } from '../../src/domain/kinds.js';
import { ChunkBuilder } from '../../src/store/chunk-builder.js';
import { fnv1a } from '../../src/store/index-sort.js';
import { decodeIndex, postingsOf, type PostingIndex } from '../../src/store/snapshot-index.js';

const AT = Date.UTC(2026, 11, 2, 12, 0, 0);
const dir = mkdtempSync(join(tmpdir(), 'mirador-index-runs-'));
after(() => rmSync(dir, { recursive: true, force: true }));

type Value = string | number | null;

/** An item body as ItemRenderer lays it out: the fields, then `data`, up to the time's opening quote. */
function body(kind: Kind, values: readonly Value[]): Buffer {
  const item: Record<string, unknown> = {};
  KIND_SPECS[kind].fields.forEach((f, j) => (item[f.name] = values[j] ?? null));
  item.data = { COL: 'x' };
  return Buffer.from(JSON.stringify(item).slice(0, -1) + ',"actualizado_at":"');
}

/** The index blobs of a snapshot of these items, built with `budgetBytes` (spilled) or without (whole). */
function build(kind: Kind, items: readonly (readonly Value[])[], budgetBytes?: number): { blobs: Map<string, Buffer>; spilled: boolean } {
  const builder = new ChunkBuilder({ views: true, kind, ...(budgetBytes === undefined ? {} : { spill: { dir, budgetBytes } }) });
  for (const values of items) if (builder.add(body(kind, values), AT)) builder.recycle();
  builder.flush();
  const spilled = runFiles().length > 0;
  const blobs = new Map([...builder.indexes()].map((ix) => [ix.name, Buffer.from(ix.bytes)]));
  return { blobs, spilled };
}

/** The runs' files left in `dir`: they are unlinked at once, so only an open descriptor keeps one. */
function runFiles(): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(dir) && target.includes('.mirador-index-runs-'));
}

/** Values of field j drawn from a small set, so that they repeat within and across runs. */
function valueOf(kind: Kind, j: number, draw: number): Value {
  const f = KIND_SPECS[kind].fields[j]!;
  if (draw % 11 === 0) return null;
  if (f.type === 'number') return (draw % 37) / 4 - 3;
  if (f.type === 'date') return `2026-${String((draw % 12) + 1).padStart(2, '0')}-${String((draw % 28) + 1).padStart(2, '0')}`;
  const words = ['Álvarez', 'obra', 'Ñandú', 'abierto', 'cerrado', 'ACME', 'acme s.l.', 'Pérez e hijos', '"quoted"', 'tab\there'];
  return `${words[draw % words.length]} ${draw % 23}`;
}

for (const kind of Object.keys(KIND_SPECS) as Kind[]) {
  test(`${kind}: indexes built in runs are the whole build's, byte for byte`, () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 5000 }), { minLength: 600, maxLength: 2000 }), fc.integer({ min: 1, max: 20_000 }), (draws, budget) => {
        const n = KIND_SPECS[kind].fields.length;
        // Unique ids (as an import has), the other fields drawn.
        const items = draws.map((draw, i) => [`id-${i}`, ...Array.from({ length: n - 1 }, (_, j) => valueOf(kind, j + 1, draw * (j + 3) + i))]);
        const whole = build(kind, items);
        const runs = build(kind, items, budget);
        assert.equal(runs.spilled, true, 'the budget was passed: the build wrote runs');
        assert.equal(whole.spilled, false);
        assert.deepEqual([...runs.blobs.keys()], [...whole.blobs.keys()]);
        for (const [name, bytes] of whole.blobs) assert.ok(runs.blobs.get(name)!.equals(bytes), `${kind} ${name}`);
        assert.deepEqual(runFiles(), [], 'the runs are gone once the indexes are made');
      }),
      { numRuns: 8 },
    );
  });
}

test('values sharing a hash stay apart, in byte order, whether built whole or in runs', () => {
  // Two FNV-1a collisions between JSON tokens (the eq indexes hash the token, quotes included).
  const pairs = [
    ['v1232789', 'v1429192'],
    ['v1232788', 'v1429193'],
  ];
  for (const [a, b] of pairs) assert.equal(fnv1a(Buffer.from(JSON.stringify(a))), fnv1a(Buffer.from(JSON.stringify(b))));
  // The later value in byte order arrives first, and both come back in every run.
  const items = Array.from({ length: 1500 }, (_, i) => ['id-' + i, pairs[i % 2]![1 - (i % 3 === 0 ? 0 : 1)]!, null, null, null, null]);
  const whole = build('clientes', items);
  const runs = build('clientes', items, 1);
  assert.equal(runs.spilled, true);
  for (const [name, bytes] of whole.blobs) assert.ok(runs.blobs.get(name)!.equals(bytes), name);
  const ix = decodeIndex(runs.blobs.get('eq:nombre')!) as PostingIndex;
  for (const [a, b] of pairs) {
    for (const v of [a!, b!]) {
      const expected = items.flatMap((it, pos) => (it[1] === v ? [pos] : []));
      assert.deepEqual([...postingsOf(ix, Buffer.from(JSON.stringify(v)))], expected, v);
    }
  }
});

test('keys sharing their first bytes, shorter than four bytes or prefixes of one another merge in byte order', () => {
  // The merge orders keys by their first four bytes first, then byte by byte: these tie on the
  // first four, end inside them, or differ only past them, in UTF-8 (bytes past 0x7f) as in ASCII.
  const words = ['a', 'ab', 'abc', 'abcd', 'abcde', 'abcdf', 'abce', 'abcd e', 'ñ', 'ña', 'ñaa', 'ñb', 'zz', 'z', 'ab ab', 'Ñ'];
  const items = Array.from({ length: 2000 }, (_, i) => [`id-${i}`, `${words[(i * 7) % words.length]} ${words[(i * 5) % words.length]}`, words[i % words.length]!, null, null, null]);
  const whole = build('clientes', items);
  const runs = build('clientes', items, 1);
  assert.equal(runs.spilled, true);
  for (const [name, bytes] of whole.blobs) assert.ok(runs.blobs.get(name)!.equals(bytes), name);
  const ix = decodeIndex(runs.blobs.get('eq:cif')!) as PostingIndex;
  for (const w of words) {
    const expected = items.flatMap((it, pos) => (it[2] === w ? [pos] : []));
    assert.deepEqual([...postingsOf(ix, Buffer.from(JSON.stringify(w)))], expected, w);
  }
});

test('a build dropped before its indexes lets go of its runs', () => {
  const builder = new ChunkBuilder({ views: true, kind: 'clientes', spill: { dir, budgetBytes: 1 } });
  for (let i = 0; i < 1000; i++) if (builder.add(body('clientes', [`id-${i}`, 'n', 'c', 'e', 't', 'd']), AT)) builder.recycle();
  assert.equal(runFiles().length, 1);
  builder.close();
  assert.deepEqual(runFiles(), []);
});
