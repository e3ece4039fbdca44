import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KIND_SPECS } from '../../src/domain/kinds.js';
import { resolveMapping } from '../../src/imports/column-mapping.js';
import { Warnings, extractFields, parseFecha, parsePrecio } from '../../src/imports/normalise.js';

describe('parsePrecio', () => {
  const readable: [string, number][] = [
    ['1234.5', 1234.5],
    ['1234,5', 1234.5],
    ['1.234,56', 1234.56],
    ['1,234.56', 1234.56],
    ['-12,5', -12.5],
    ['  3272,18  ', 3272.18],
    ['\u00a012,50\t', 12.5],
    ['+7', 7],
    ['0', 0],
    ['-0,00', 0],
    [',5', 0.5],
    ['1.234.567', 1234567],
    ['1,234,567', 1234567],
    ['12.345.678,9', 12345678.9],
    ['1.234', 1.234], // one separator is the decimal one
    ['2423,8404', 2423.8404],
  ];
  for (const [text, value] of readable) {
    it(`reads ${JSON.stringify(text)} as ${value}`, () => assert.equal(parsePrecio(text), value));
  }

  it('gives null for an empty or blank cell', () => {
    assert.equal(parsePrecio(''), null);
    assert.equal(parsePrecio('   '), null);
  });

  for (const text of ['abc', '12,5 €', '1.23,4', '12,34.5,6', '1e5', '--1', '5,', '1 234', 'NaN', 'Infinity', '12-']) {
    it(`cannot read ${JSON.stringify(text)}`, () => assert.equal(parsePrecio(text), undefined));
  }
});

describe('parseFecha', () => {
  const readable: [string, string][] = [
    ['2024-04-03', '2024-04-03'],
    ['03/04/2024', '2024-04-03'],
    ['03-04-2024', '2024-04-03'],
    ['03.04.2024', '2024-04-03'],
    ['3/4/2024', '2024-04-03'],
    ['03/04/2024 16:15:55', '2024-04-03'],
    ['03/04/2024 16:15', '2024-04-03'],
    ['2024-04-03T16:15:55', '2024-04-03'],
    ['2024-04-03 16:15:55.123', '2024-04-03'],
    ['2024-04-03T16:15:55Z', '2024-04-03'],
    ['2024-04-03T16:15:55+02:00', '2024-04-03'],
    ['  29/02/2024  ', '2024-02-29'],
    ['31/12/1999 23:59:59', '1999-12-31'],
  ];
  for (const [text, value] of readable) {
    it(`reads ${JSON.stringify(text)} as ${value}`, () => assert.equal(parseFecha(text), value));
  }

  it('gives null for an empty or blank cell', () => {
    assert.equal(parseFecha(''), null);
    assert.equal(parseFecha('  '), null);
  });

  const unreadable = [
    '31/02/2024', // no such day
    '29/02/2023', // not a leap year
    '29/02/1900', // not a leap year either
    '31/04/2024',
    '00/01/2024',
    '01/13/2024',
    '2024-13-01',
    '2024/04/03', // year first only with dashes
    '03/04/24', // two-digit year
    '03/04-2024', // mixed separators
    '03/04/2024 25:00',
    '03/04/2024 12:60',
    '0000-01-01',
    'mañana',
    '03/04/2024x',
  ];
  for (const text of unreadable) {
    it(`cannot read ${JSON.stringify(text)}`, () => assert.equal(parseFecha(text), undefined));
  }
});

describe('extractFields', () => {
  it('trims strings, turns empty cells into null, parses precio, and warns on unreadable cells', () => {
    const spec = KIND_SPECS.articulos;
    const columns = ['CODIGO', 'DESCRIPCION', 'UNIDAD_MEDIDA', 'PRECIO_VENTA'];
    const mapping = resolveMapping('articulos', columns);
    const warnings = new Warnings();
    assert.deepEqual(extractFields(spec, mapping, ['  A1 ', ' Taco nylon ', '', '1.234,56'], 2, warnings), ['A1', 'A1', 'Taco nylon', null, 1234.56]);
    assert.deepEqual(extractFields(spec, mapping, ['A2', 'x', 'M', '12,5 €'], 3, warnings), ['A2', 'A2', 'x', 'M', null]);
    assert.equal(warnings.total, 1);
    assert.deepEqual(warnings.items[0], {
      line: 3,
      field: 'precio',
      column: 'PRECIO_VENTA',
      value: '12,5 €',
      message: 'Line 3: "12,5 €" in column "PRECIO_VENTA" is not a number (such as 1234,56); precio is left empty.',
    });
  });

  it('gives null for unmapped fields and parses fecha', () => {
    const spec = KIND_SPECS['avisos-correctivo'];
    const mapping = resolveMapping('avisos-correctivo', ['CODIGO', 'FECHA', 'DESCRIPCION']);
    const warnings = new Warnings();
    const values = extractFields(spec, mapping, ['AV1', '03/04/2024 16:15:55', 'Atasco'], 2, warnings);
    assert.deepEqual(values, ['AV1', 'AV1', '2024-04-03', null, null, 'Atasco', null, null]);
    extractFields(spec, mapping, ['AV2', '31/02/2024', ''], 3, warnings);
    assert.equal(warnings.items[0]?.field, 'fecha');
    assert.match(warnings.items[0]?.message ?? '', /^Line 3: "31\/02\/2024" in column "FECHA" is not a date/);
  });
});

describe('Warnings', () => {
  it('keeps the first 100 and counts them all', () => {
    const warnings = new Warnings();
    for (let line = 1; line <= 250; line++) warnings.add({ line, field: 'precio', column: 'PVP', value: 'x', message: 'm' });
    assert.equal(warnings.total, 250);
    assert.equal(warnings.items.length, 100);
    assert.equal(warnings.items.at(-1)?.line, 100);
  });
});
