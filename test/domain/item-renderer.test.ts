/**
 * The byte renderer writes exactly what JSON.stringify would: items rendered
 * before it (and any client comparing bytes) see no difference.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { finishItem, ItemRenderer, type FieldValue } from '../../src/domain/item-renderer.js';
import { KIND_SPECS } from '../../src/domain/kinds.js';

/** The item as JSON.stringify renders it, up to the opening quote of actualizado_at. */
function expected(kind: 'clientes' | 'articulos', columns: string[], fields: FieldValue[], cells: string[]): string {
  const head = KIND_SPECS[kind].fields.map((f, i) => `${i === 0 ? '{' : ','}${JSON.stringify(f.name)}:${JSON.stringify(fields[i] ?? null)}`);
  const data = columns.map((c, i) => `${JSON.stringify(c)}:${JSON.stringify(cells[i] ?? '')}`).join(',');
  return `${head.join('')},"data":{${data}},"actualizado_at":"`;
}

// Any UTF-16 code units: lone and paired surrogates, controls, quotes, backslashes, non-BMP characters.
const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }));

test('bodies are byte for byte what JSON.stringify renders, for any text', () => {
  fc.assert(
    fc.property(fc.uniqueArray(text, { minLength: 1, maxLength: 6 }), fc.array(text, { maxLength: 6 }), fc.array(fc.oneof(text, fc.constant(null)), { maxLength: 6 }), (columns, cells, fields) => {
      const renderer = new ItemRenderer('clientes', columns);
      assert.deepEqual(renderer.body(fields, cells), Buffer.from(expected('clientes', columns, fields, cells), 'utf8'));
    }),
    { numRuns: 2000 },
  );
});

test('numbers and nulls in fields render as JSON.stringify does', () => {
  const renderer = new ItemRenderer('articulos', ['CODIGO', 'PVP']);
  for (const precio of [0, 16.36, -1.5, 1e21, 123456789.125, null]) {
    const fields: FieldValue[] = ['A1', 'A1', 'Taco', null, precio];
    assert.equal(renderer.body(fields, ['A1', '1,5']).toString(), expected('articulos', ['CODIGO', 'PVP'], fields, ['A1', '1,5']));
  }
});

test('the renderer grows its memory as needed and keeps bodies back to back', () => {
  const renderer = new ItemRenderer('clientes', ['CODIGO', 'OBSERVACIONES']);
  const long = 'ñ"\\\n'.repeat(300_000); // 1.2 M characters, up to 3.6 MB rendered: past the first MiB
  renderer.write(['C1'], ['C1', long]);
  const first = renderer.length;
  renderer.write(['C2'], ['C2', 'x']);
  const all = renderer.take();
  assert.equal(renderer.length, 0);
  assert.equal(all.subarray(0, first).toString(), expected('clientes', ['CODIGO', 'OBSERVACIONES'], ['C1'], ['C1', long]));
  const item = JSON.parse(finishItem(all.subarray(first), Date.UTC(2026, 10, 21))) as { data: Record<string, string>; actualizado_at: string };
  assert.deepEqual(item.data, { CODIGO: 'C2', OBSERVACIONES: 'x' });
  assert.equal(item.actualizado_at, '2026-11-21T00:00:00.000Z');
  assert.equal(renderer.body(['C3'], ['C3', 'y']).toString(), expected('clientes', ['CODIGO', 'OBSERVACIONES'], ['C3'], ['C3', 'y']));
});

test('rows of many columns, mostly empty cells, render as JSON.stringify does (empty runs are copied from a template)', () => {
  const columns = Array.from({ length: 40 }, (_, i) => `C${i}_${'ñ"\\'.slice(0, i % 4)}`);
  const cell = fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: text });
  fc.assert(
    fc.property(fc.array(cell, { minLength: 0, maxLength: 40 }), fc.array(cell, { minLength: 40, maxLength: 40 }), (short, full) => {
      // A fresh renderer starts with one MiB: long cells past it make it grow in the middle of a row.
      const renderer = new ItemRenderer('clientes', columns);
      const long = full.map((c, i) => (i % 13 === 5 && c !== '' ? c.repeat(1 + Math.floor(200_000 / (c.length + 1))) : c));
      renderer.write(['A'], short);
      renderer.write(['B'], long);
      const all = renderer.take();
      const first = Buffer.from(expected('clientes', columns, ['A'], short), 'utf8');
      assert.deepEqual(all.subarray(0, first.length), first);
      assert.deepEqual(all.subarray(first.length), Buffer.from(expected('clientes', columns, ['B'], long), 'utf8'));
    }),
    { numRuns: 100 },
  );
});
