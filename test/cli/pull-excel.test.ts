/**
 * Issue 18, point 8: `mirador pull --format csv --csv-dialect excel-es`, byte for byte: a UTF-8
 * BOM, `;` between cells, a decimal comma in numbers, cells holding `;`, quotes or line breaks
 * quoted. The default stays RFC 4180. (pull reads over HTTP; the store behind the server does
 * not change a byte of what it writes, so one store is enough here.)
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { miradorAsync } from '../helpers/cli-async.js';
import { sqliteFactory, tempDir } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const T1 = '2026-01-10T08:00:00.000Z';
const T2 = '2026-02-20T09:30:00.500Z';
const COLUMNS = ['CODIGO', 'DESCRIPCION', 'PRECIO_VENTA'];

const article = (id: string, name: string, precio: number | null, precioCell: string, line: number) => ({
  fields: [id, id, name, 'ud', precio],
  cells: [id, name, precioCell],
  line,
});

describe('mirador pull --csv-dialect', () => {
  const dir = tempDir('mirador-pull-excel-');
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let key: string;
  let companyId: number;
  const file = (name: string) => join(dir.path, name);
  const pull = (args: string[]) => miradorAsync(['pull', 'articulos', '--key', key, '--base-url', server.baseUrl, ...args], {});

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    ({ key, company: { id: companyId } } = await companyWithKey(store, 'acme'));
    await replaceRecords(store, { companyId, kind: 'articulos', columns: COLUMNS, at: Date.parse(T1) }, [
      article('A1', 'Tornillo; cabeza "plana"', 1234.5, '1.234,50', 2),
      article('A2', 'Ñandú, grande', null, '', 3),
      article('A3', 'Línea\r\nsegunda', 12, '12', 4),
    ]);
    server = await startServer(store);
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
    dir.remove();
  });

  const HEADER = ['id_erp', 'codigo', 'nombre', 'unidad', 'precio', 'data.CODIGO', 'data.DESCRIPCION', 'data.PRECIO_VENTA', 'actualizado_at'];

  test('the default is RFC 4180: no BOM, commas, a decimal point, cells with a comma quoted', async () => {
    const r = await pull(['--format', 'csv', '-o', file('rfc.csv')]);
    assert.equal(r.code, 0, r.stderr);
    const expected =
      `${HEADER.join(',')}\r\n` +
      `A1,A1,"Tornillo; cabeza ""plana""",ud,1234.5,A1,"Tornillo; cabeza ""plana""","1.234,50",${T1}\r\n` +
      `A2,A2,"Ñandú, grande",ud,,A2,"Ñandú, grande",,${T1}\r\n` +
      `A3,A3,"Línea\r\nsegunda",ud,12,A3,"Línea\r\nsegunda",12,${T1}\r\n`;
    assert.deepEqual(readFileSync(file('rfc.csv')), Buffer.from(expected, 'utf8'));
    const explicit = await pull(['--format', 'csv', '--csv-dialect', 'rfc4180', '-o', file('rfc2.csv')]);
    assert.equal(explicit.code, 0, explicit.stderr);
    assert.deepEqual(readFileSync(file('rfc2.csv')), readFileSync(file('rfc.csv')));
  });

  test('excel-es: UTF-8 BOM, ";", decimal comma; cells with ";", quotes or line breaks quoted, commas not', async () => {
    const r = await pull(['--format', 'csv', '--csv-dialect', 'excel-es', '-o', file('excel.csv')]);
    assert.equal(r.code, 0, r.stderr);
    const bytes = readFileSync(file('excel.csv'));
    assert.deepEqual(bytes.subarray(0, 3), Buffer.from([0xef, 0xbb, 0xbf]), 'a UTF-8 BOM');
    const expected =
      `\uFEFF${HEADER.join(';')}\r\n` +
      `A1;A1;"Tornillo; cabeza ""plana""";ud;1234,5;A1;"Tornillo; cabeza ""plana""";1.234,50;${T1}\r\n` +
      `A2;A2;Ñandú, grande;ud;;A2;Ñandú, grande;;${T1}\r\n` +
      `A3;A3;"Línea\r\nsegunda";ud;12;A3;"Línea\r\nsegunda";12;${T1}\r\n`;
    assert.deepEqual(bytes, Buffer.from(expected, 'utf8'));
    // To stdout as well (what `> file.csv` gets).
    const out = await pull(['--format', 'csv', '--csv-dialect', 'excel-es']);
    assert.equal(out.stdout, expected);
  });

  test('excel-es with --state: a later run merges into the file in the same dialect (one BOM); the state remembers it', async () => {
    const args = ['--format', 'csv', '--csv-dialect', 'excel-es', '--state', file('x.state'), '-o', file('x.csv')];
    assert.equal((await pull(args)).code, 0);
    assert.equal(JSON.parse(readFileSync(file('x.state'), 'utf8')).csv_dialect, 'excel-es');
    await replaceRecords(store, { companyId, kind: 'articulos', columns: COLUMNS, at: Date.parse(T2) }, [
      article('A1', 'Tornillo; cabeza "plana"', 1234.5, '1.234,50', 2),
      article('A2', 'Ñandú; pequeño', 0.75, '0,75', 3),
      article('A3', 'Línea\r\nsegunda', 12, '12', 4),
    ]);
    // The dialect comes from the state file when not given again.
    const again = await pull(['--state', file('x.state')]);
    assert.equal(again.code, 0, again.stderr);
    const expected =
      `\uFEFF${HEADER.join(';')}\r\n` +
      `A1;A1;"Tornillo; cabeza ""plana""";ud;1234,5;A1;"Tornillo; cabeza ""plana""";1.234,50;${T1}\r\n` +
      `A3;A3;"Línea\r\nsegunda";ud;12;A3;"Línea\r\nsegunda";12;${T1}\r\n` +
      `A2;A2;"Ñandú; pequeño";ud;0,75;A2;"Ñandú; pequeño";0,75;${T2}\r\n`;
    assert.deepEqual(readFileSync(file('x.csv')), Buffer.from(expected, 'utf8'));

    const other = await pull(['--format', 'csv', '--csv-dialect', 'rfc4180', '--state', file('x.state'), '-o', file('x.csv')]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /belongs to another pull \(csv dialect excel-es, not rfc4180\)/);
  });

  test('bad input: a dialect without --format csv, or an unknown one', async () => {
    const json = await pull(['--format', 'json', '--csv-dialect', 'excel-es', '-o', file('j.json')]);
    assert.equal(json.code, 1);
    assert.match(json.stderr, /--csv-dialect is for --format csv, not json/);
    const unknown = await pull(['--format', 'csv', '--csv-dialect', 'excel-fr']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Allowed choices are rfc4180, excel-es/);
  });
});
