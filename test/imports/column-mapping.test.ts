import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KINDS, KIND_SPECS, type Kind } from '../../src/domain/kinds.js';
import { describeDefaults, resolveMapping } from '../../src/imports/column-mapping.js';
import { ImportError } from '../../src/imports/import-error.js';
import { fixture, readAll } from './read-helpers.js';

function importError(run: () => unknown, code: string): ImportError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ImportError, String(error));
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected an ImportError ${code}`);
}

describe('resolveMapping', () => {
  it('gives one index per field, −1 when unmapped, and the source column of each', () => {
    const mapping = resolveMapping('clientes', ['X', 'CODIGO', 'EMAIL']);
    assert.deepEqual(mapping.columnIndexByField, [1, -1, -1, 2, -1, -1]);
    assert.deepEqual(mapping.sources, { id_erp: 'CODIGO', nombre: null, cif: null, email: 'EMAIL', telefono: null, direccion: null });
  });

  it('a column named like the field wins: ID_ERP beats CODIGO', () => {
    const mapping = resolveMapping('articulos', ['CODIGO', 'DESCRIPCION', 'ID_ERP']);
    assert.equal(mapping.sources.id_erp, 'ID_ERP');
    assert.equal(mapping.sources.codigo, 'CODIGO');
  });

  it('a lone CODIGO feeds both id_erp and codigo', () => {
    const mapping = resolveMapping('obras', ['CODIGO', 'NOMBRE']);
    assert.equal(mapping.sources.id_erp, 'CODIGO');
    assert.equal(mapping.sources.codigo, 'CODIGO');
    assert.deepEqual(mapping.columnIndexByField.slice(0, 2), [0, 0]);
  });

  it('CLIENTE_ID_ERP beats CLIENTE, PRECIO beats PRECIO_VENTA', () => {
    assert.equal(resolveMapping('obras', ['CODIGO', 'CLIENTE', 'cliente id erp']).sources.cliente_id_erp, 'cliente id erp');
    assert.equal(resolveMapping('articulos', ['CODIGO', 'PRECIO_VENTA', 'Precio']).sources.precio, 'Precio');
  });

  it('compares ignoring case, accents, spaces, underscores and a numeric prefix', () => {
    const mapping = resolveMapping('clientes', ['Código', '01_NOMBRE_COMERCIAL', '06_CIF', 'e-mail', '15 Teléfono', '07_DOMICILIO']);
    assert.deepEqual(mapping.sources, {
      id_erp: 'Código',
      nombre: '01_NOMBRE_COMERCIAL',
      cif: '06_CIF',
      email: 'e-mail',
      telefono: '15 Teléfono',
      direccion: '07_DOMICILIO',
    });
  });

  it('follows the default names in order, not the file order', () => {
    assert.equal(resolveMapping('clientes', ['CODIGO', 'RAZON_SOCIAL', 'NOMBRE_FISCAL', 'NOMBRE_COMERCIAL']).sources.nombre, 'NOMBRE_COMERCIAL');
    // …after the field's own name, which always wins.
    assert.equal(resolveMapping('clientes', ['CODIGO', 'NOMBRE_COMERCIAL', 'NOMBRE']).sources.nombre, 'NOMBRE');
  });

  it('prefers the exact spelling among columns that match the same name', () => {
    assert.equal(resolveMapping('obras', ['CODIGO', '01_NOMBRE', 'NOMBRE']).sources.nombre, 'NOMBRE');
  });

  it('an override names an exact column, beating every default', () => {
    const mapping = resolveMapping('clientes', ['CODIGO', 'REF', 'NOMBRE', 'ALIAS'], { id_erp: 'REF', nombre: 'ALIAS' });
    assert.equal(mapping.sources.id_erp, 'REF');
    assert.equal(mapping.sources.nombre, 'ALIAS');
  });

  it('bad_mapping: an override naming a column not in the file (compared exactly)', () => {
    const error = importError(() => resolveMapping('clientes', ['CODIGO', 'NOMBRE'], { nombre: 'nombre' }), 'bad_mapping');
    assert.match(error.message, /feeds nombre from column "nombre", which is not in the file.*Did you mean "NOMBRE"\?/);
  });

  it('bad_mapping: an override naming a field the kind does not have', () => {
    const error = importError(() => resolveMapping('clientes', ['CODIGO', 'NOMBRE'], { precio: 'NOMBRE' }), 'bad_mapping');
    assert.match(error.message, /field "precio", which clientes does not have/);
  });

  it('no_id_column: lists the names looked for', () => {
    const error = importError(() => resolveMapping('clientes', ['NOMBRE', 'EMAIL']), 'no_id_column');
    assert.match(error.message, /Looked for "ID_ERP", "CODIGO", "ID", "COD" and "CODIGO_ERP"/);
    assert.match(error.message, /The file's columns are "NOMBRE" and "EMAIL"/);
  });

  it('wrong_kind: no column maps to a field besides id_erp, and the likely kind is named', () => {
    const error = importError(() => resolveMapping('articulos', ['CODIGO', 'FECHA', 'CLIENTE', 'OBRA', 'PRIORIDAD']), 'wrong_kind');
    assert.match(error.message, /No column of the file maps to a field of articulos besides id_erp/);
    assert.match(error.message, /looks like an export of avisos-correctivo/);
  });

  it('wrong_kind: the id column feeding codigo is no sign of the kind', async () => {
    const clientes = await readAll(fixture('samples/clientes.csv'));
    const error = importError(() => resolveMapping('obras', clientes.columns), 'wrong_kind');
    assert.match(error.message, /looks like an export of clientes/);
    const articulos = await readAll(fixture('samples/articulos.csv'));
    assert.match(importError(() => resolveMapping('clientes', articulos.columns), 'wrong_kind').message, /export of articulos/);
  });

  it('maps every highlighted field of each sample export', async () => {
    for (const kind of KINDS) {
      const { columns } = await readAll(fixture(`samples/${kind}.csv`));
      const mapping = resolveMapping(kind, columns);
      assert.deepEqual(
        Object.entries(mapping.sources).filter(([, column]) => column === null),
        [],
        `${kind}: ${JSON.stringify(mapping.sources)}`,
      );
    }
  });
});

describe('describeDefaults', () => {
  it('lists, per field, its own name first and then the default names', () => {
    for (const kind of KINDS as readonly Kind[]) {
      const described = describeDefaults(kind);
      assert.deepEqual(
        described.map((d) => d.field),
        KIND_SPECS[kind].fields.map((f) => f.name),
      );
      for (const d of described) assert.equal(d.columns[0], d.field.toUpperCase());
    }
    assert.deepEqual(describeDefaults('clientes')[0], { field: 'id_erp', type: 'string', columns: ['ID_ERP', 'CODIGO', 'ID', 'COD', 'CODIGO_ERP'] });
  });
});
