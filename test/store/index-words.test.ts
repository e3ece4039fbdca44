/**
 * The `q` index an import builds (index-builder.ts) holds exactly the words
 * `foldedWords` makes of each name, and the whole folded `id_erp` and `cif`,
 * whether the import folds a value on its bytes (ASCII and the Latin blocks,
 * latinFolds) or as a string (escapes, other scripts): a request's `q`
 * is folded by the same functions, so any disagreement is a search that
 * silently misses.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { KIND_SPECS } from '../../src/domain/kinds.js';
import { foldedWords, foldText, latinFolds } from '../../src/domain/search-words.js';
import { ChunkBuilder } from '../../src/store/chunk-builder.js';
import { decodeIndex, type PostingIndex } from '../../src/store/snapshot-index.js';

const AT = Date.UTC(2026, 11, 3, 12, 0, 0);

/** A customer's body as ItemRenderer lays it out, up to the time's opening quote. */
function body(values: Record<string, string | null>): Buffer {
  const item: Record<string, unknown> = {};
  for (const f of KIND_SPECS.clientes.fields) item[f.name] = values[f.name] ?? null;
  item.data = { COL: 'x' };
  return Buffer.from(JSON.stringify(item).slice(0, -1) + ',"actualizado_at":"');
}

/** Every key of a postings index with its positions, as strings. */
function entries(ix: PostingIndex): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (let i = 0; i + 1 < ix.keyStarts.length; i++) {
    const key = ix.dict.toString('utf8', ix.keyStarts[i]!, ix.keyStarts[i + 1]!);
    out.set(key, [...ix.postings.subarray(ix.groupStarts[i]!, ix.groupStarts[i + 1]!)]);
  }
  return out;
}

/** The q index of customers with these names and CIFs. */
function qIndex(rows: readonly { nombre: string; cif: string | null }[]): Map<string, number[]> {
  const builder = new ChunkBuilder({ views: true, kind: 'clientes' });
  rows.forEach((r, i) => {
    if (builder.add(body({ id_erp: `Id-${i}`, nombre: r.nombre, cif: r.cif }), AT)) builder.recycle();
  });
  builder.flush();
  const q = [...builder.indexes()].find((ix) => ix.name === 'q')!;
  return entries(decodeIndex(q.bytes) as PostingIndex);
}

/** What the index should hold: each word once per position, in position order. */
function expected(rows: readonly { nombre: string; cif: string | null }[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const put = (term: string, pos: number) => {
    const list = out.get(term) ?? [];
    if (list[list.length - 1] !== pos) list.push(pos);
    out.set(term, list);
  };
  rows.forEach((r, pos) => {
    put(foldText(`Id-${pos}`), pos);
    for (const w of foldedWords(r.nombre)) put(w, pos);
    if (r.cif !== null) put(foldText(r.cif), pos);
  });
  return out;
}

const sorted = (m: Map<string, number[]>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

// ASCII, every character of the Latin blocks, and what must take the string path:
// escapes, a character folding to three bytes (U+023A), Greek's final sigma, combining
// marks, other scripts, and characters outside the Basic Multilingual Plane.
const { first, last } = latinFolds();
const LATIN = Array.from({ length: last - first + 1 }, (_, i) => String.fromCharCode(first + i));
const OTHERS = ['"', '\\', '\n', '\t', 'Ⱥ', 'ΣΑΣ', 'Σ', 'a\u0301', '\u0301', 'Ж', 'жук', '漢字', '😀', '\u2028'];
const ASCII = [' ', ' ', '-', '.', ',', '/', 'a', 'B', 'z', 'Q', '0', '9', 'SL', 'de'];

test('q words folded on bytes are the words foldedWords makes, whatever the text', () => {
  const char = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...ASCII) },
    { weight: 4, arbitrary: fc.constantFrom(...LATIN) },
    { weight: 1, arbitrary: fc.constantFrom(...OTHERS) },
  );
  const text = fc.array(char, { maxLength: 24 }).map((cs) => cs.join(''));
  const row = fc.record({ nombre: text, cif: fc.option(text, { nil: null }) });
  fc.assert(
    fc.property(fc.array(row, { minLength: 1, maxLength: 60 }), (rows) => {
      assert.deepEqual(sorted(qIndex(rows)), sorted(expected(rows)));
    }),
    { numRuns: 300 },
  );
});

test('every character of the Latin blocks folds as foldText folds it, alone and between words', () => {
  const rows = LATIN.map((c) => ({ nombre: `Pé${c}rez ${c} ${c}${c}x`, cif: `${c}A-1${c}` }));
  assert.deepEqual(sorted(qIndex(rows)), sorted(expected(rows)));
});
