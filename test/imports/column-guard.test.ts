/**
 * The column-drift guard's two rules on headers alone (contract §2; issue 18,
 * point 1). The suites run them through the queue, the CLI and the panel.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { KINDS, type Kind } from '../../src/domain/kinds.js';
import { clearlyBetter, columnDrift, otherKind } from '../../src/imports/column-guard.js';
import { previewMapping } from '../../src/imports/column-mapping.js';

const header = (kind: Kind) =>
  readFileSync(new URL(`../../../test/fixtures/csv/samples/${kind}.csv`, import.meta.url), 'latin1').split('\r\n')[0]!.split(';');

describe('column-drift guard', () => {
  it('with live data: holds below half of the upload\'s names shared, and lists what appeared and disappeared', () => {
    assert.equal(columnDrift(['A', 'B', 'C', 'D'], ['A', 'B', 'X', 'Y']), null, 'exactly half is enough');
    assert.equal(columnDrift(['A'], ['A', 'B']), null);
    assert.deepEqual(columnDrift(['A', 'B', 'C', 'D'], ['A', 'X', 'Y']), {
      shared: 1,
      columns: 3,
      live_columns: 4,
      appeared: ['X', 'Y'],
      appeared_count: 2,
      disappeared: ['B', 'C', 'D'],
      disappeared_count: 3,
    });
    // Names are compared exactly, as `data` keys them: a renamed column is another column.
    assert.equal(columnDrift(['CODIGO', 'NOMBRE'], ['codigo', 'nombre'])?.shared, 0);
    const many = Array.from({ length: 500 }, (_, i) => `C${i}`);
    const drift = columnDrift(['ID'], ['ID', ...many])!;
    assert.deepEqual([drift.appeared.length, drift.appeared_count], [100, 500], 'lists are capped, counts are whole');
  });

  it('without data: each sample export uploaded as every kind is held as its own kind, or fails wrong_kind, and never held as its own', () => {
    // [file, uploaded as] → the kind it is said to look like; null: not held.
    const seen: Record<string, string | null> = {};
    for (const file of KINDS) {
      for (const kind of KINDS) {
        const sources = previewMapping(kind, header(file));
        seen[`${file} as ${kind}`] = otherKind(kind, header(file), sources)?.kind ?? null;
      }
    }
    assert.deepEqual(seen, {
      'clientes as clientes': null,
      'clientes as articulos': 'clientes',
      'clientes as obras': 'clientes', // (the import fails wrong_kind first: no field of obras is fed)
      'clientes as avisos-correctivo': 'clientes',
      'articulos as clientes': 'articulos', // (fails wrong_kind first)
      'articulos as articulos': null,
      'articulos as obras': 'articulos',
      'articulos as avisos-correctivo': 'articulos',
      'obras as clientes': 'obras',
      'obras as articulos': 'obras',
      'obras as obras': null,
      'obras as avisos-correctivo': 'obras',
      'avisos-correctivo as clientes': 'avisos-correctivo',
      'avisos-correctivo as articulos': 'avisos-correctivo',
      'avisos-correctivo as obras': 'avisos-correctivo',
      'avisos-correctivo as avisos-correctivo': null,
    });
  });

  it('"clearly better" is better on both counts: more fields fed and fewer unfed', () => {
    assert.equal(clearlyBetter({ fed: 3, unfed: 0 }, { fed: 2, unfed: 4 }), true);
    assert.equal(clearlyBetter({ fed: 3, unfed: 1 }, { fed: 3, unfed: 3 }), false, 'as many fed');
    assert.equal(clearlyBetter({ fed: 5, unfed: 2 }, { fed: 2, unfed: 2 }), false, 'as many unfed');
    // Works and notices share DESCRIPCION, CLIENTE and ESTADO: such a header is either's.
    const alike = ['CODIGO', 'CLIENTE', 'DESCRIPCION', 'ESTADO'];
    assert.equal(otherKind('obras', alike, previewMapping('obras', alike)), null);
    assert.equal(otherKind('avisos-correctivo', alike, previewMapping('avisos-correctivo', alike)), null);
    // A field fed by the id column tells nothing (every export has a code).
    const coded = ['CODIGO', 'DESCRIPCION', 'PRECIO_VENTA'];
    assert.equal(otherKind('articulos', coded, previewMapping('articulos', coded)), null);
  });

  it('counts the uploaded kind with the company\'s mapping: an override that feeds its fields keeps a header from being held', () => {
    const columns = header('articulos');
    assert.equal(otherKind('obras', columns, previewMapping('obras', columns))?.kind, 'articulos');
    const override = { nombre: 'DESCRIPCION', cliente_id_erp: 'PROVEEDOR', estado: 'BAJA', codigo: 'REF_PROVEEDOR' };
    assert.equal(otherKind('obras', columns, previewMapping('obras', columns, override)), null);
  });
});
