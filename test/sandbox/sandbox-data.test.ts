import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { finishItem, ItemRenderer } from '../../src/domain/item-renderer.js';
import type { FieldSpec, Kind } from '../../src/domain/kinds.js';
import { KIND_SPECS, KINDS, normaliseColumnName } from '../../src/domain/kinds.js';
import type { SandboxKindData } from '../../src/sandbox/sandbox-data.js';
import { sandboxDataset } from '../../src/sandbox/sandbox-data.js';

/**
 * sha256 of `JSON.stringify(sandboxDataset())`. The sandbox is promised to be
 * the same bytes on every run: if this changes, the change to the data must be
 * deliberate (and then this constant is updated with it).
 */
const DATASET_SHA256 = '2371fee6f8c6bff3ef6d324030bc579653c8069fb56be53fa4c58cb51272b89a';

const ds = sandboxDataset();
const data = (kind: Kind): SandboxKindData => ds[kind];
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The column the default mapping of kinds.ts picks for a field (contract §2). */
function mappedColumn(columns: readonly string[], field: FieldSpec): number {
  const names = field.name === 'id_erp' ? ['ID_ERP', ...field.columns] : [field.name, ...field.columns];
  for (const name of names) {
    const index = columns.findIndex((c) => normaliseColumnName(c) === normaliseColumnName(name));
    if (index >= 0) return index;
  }
  return -1;
}

/** What a highlighted field must hold for a cell (contract §1.2), written independently of the module. */
function expectedField(field: FieldSpec, cell: string): string | number | null {
  const text = cell.trim();
  if (text === '') return null;
  if (field.type === 'number') {
    assert.match(text, /^\d+,\d{2}$/, `${field.name} cell ${JSON.stringify(cell)}`);
    return Number(text.replace(',', '.'));
  }
  if (field.type === 'date') {
    const m = /^(\d\d)\/(\d\d)\/(\d{4})( \d\d:\d\d:\d\d)?$/.exec(text);
    assert.ok(m, `${field.name} cell ${JSON.stringify(cell)}`);
    return `${m[3]}-${m[2]}-${m[1]}`;
  }
  return text;
}

function cell(kind: Kind, row: { cells: string[] }, column: string): string {
  const index = data(kind).columns.indexOf(column);
  assert.ok(index >= 0, `${kind} has column ${column}`);
  return row.cells[index] ?? '';
}

const ids = (kind: Kind): string[] => data(kind).rows.map((r) => String(r.fields[0]));

test('sandbox: the contracted number of records of each kind', () => {
  assert.equal(data('clientes').rows.length, 30);
  assert.equal(data('articulos').rows.length, 40);
  assert.equal(data('obras').rows.length, 15);
  assert.equal(data('avisos-correctivo').rows.length, 30);
});

test('sandbox: realistic ERP headers, unique and non-empty', () => {
  const clientes = data('clientes').columns;
  assert.ok(clientes.length >= 140, `clientes has ${clientes.length} columns`);
  for (const name of [
    'CODIGO', '01_NOMBRE_COMERCIAL', '06_CIF', '07_DOMICILIO', '08_CIUDAD', '09_PROVINCIA',
    '12_CPOSTAL', 'WWW', 'PORCENTAJE_RETENCION', 'TELEFONO', 'EMAIL',
  ]) {
    assert.ok(clientes.includes(name), `clientes has ${name}`);
  }
  assert.ok(data('articulos').columns.length >= 50);
  assert.ok(data('obras').columns.length >= 40);
  assert.ok(data('avisos-correctivo').columns.length >= 50);
  for (const kind of KINDS) {
    const { columns } = data(kind);
    assert.equal(new Set(columns).size, columns.length, `${kind} column names are unique`);
    assert.ok(columns.every((c) => c.trim() !== ''), `${kind} has no empty column name`);
  }
});

test('sandbox: every row has one cell per column and one value per highlighted field', () => {
  for (const kind of KINDS) {
    const { columns, rows } = data(kind);
    for (const row of rows) {
      assert.equal(row.cells.length, columns.length);
      assert.ok(row.cells.every((c) => typeof c === 'string'));
      assert.equal(row.fields.length, KIND_SPECS[kind].fields.length);
      assert.ok(Number.isInteger(row.actualizadoAt));
    }
  }
});

test('sandbox: ids are present, well formed and unique within each kind', () => {
  const shapes: Record<Kind, RegExp> = {
    clientes: /^C\d{6}$/,
    articulos: /^[A-Z]{3}\d{6}$/,
    obras: /^OB\d{6}$/,
    'avisos-correctivo': /^AV\d{7}$/,
  };
  for (const kind of KINDS) {
    const list = ids(kind);
    for (const id of list) assert.match(id, shapes[kind]);
    assert.equal(new Set(list).size, list.length, `${kind} ids are unique`);
  }
});

test('sandbox: works and notices point at existing records, and a notice\'s work is its customer\'s', () => {
  const clientes = new Set(ids('clientes'));
  const obraCliente = new Map(data('obras').rows.map((r) => [String(r.fields[0]), r.fields[4]]));
  for (const row of data('obras').rows) {
    assert.ok(clientes.has(String(row.fields[4])), `obra ${row.fields[0]} → cliente ${row.fields[4]}`);
  }
  let withWork = 0;
  let withoutWork = 0;
  for (const row of data('avisos-correctivo').rows) {
    const [id, , , cliente, obra] = row.fields;
    assert.ok(clientes.has(String(cliente)), `aviso ${id} → cliente ${cliente}`);
    if (obra === null) {
      withoutWork++;
      continue;
    }
    withWork++;
    assert.ok(obraCliente.has(String(obra)), `aviso ${id} → obra ${obra}`);
    assert.equal(obraCliente.get(String(obra)), cliente, `aviso ${id}: obra ${obra} belongs to ${cliente}`);
  }
  assert.ok(withWork >= 5 && withoutWork >= 5, `${withWork} notices with a work, ${withoutWork} without`);
});

test('sandbox: highlighted fields say what the default mapping reads from the cells', () => {
  for (const kind of KINDS) {
    const { columns, rows } = data(kind);
    const fields = KIND_SPECS[kind].fields;
    const sources = fields.map((f) => mappedColumn(columns, f));
    fields.forEach((f, i) => assert.ok((sources[i] ?? -1) >= 0, `${kind}.${f.name} maps to a column`));
    for (const row of rows) {
      fields.forEach((f, i) => {
        const source = row.cells[sources[i] ?? -1] ?? '';
        assert.deepEqual(row.fields[i], expectedField(f, source), `${kind} ${row.fields[0]} ${f.name}`);
      });
    }
  }
  // The named sources, spelled out.
  const c = data('clientes').rows[0];
  assert.ok(c);
  assert.deepEqual(c.fields.slice(1), ['01_NOMBRE_COMERCIAL', '06_CIF', 'EMAIL', 'TELEFONO', '07_DOMICILIO']
    .map((name) => cell('clientes', c, name).trim() || null));
  for (const row of data('articulos').rows) {
    const price = cell('articulos', row, 'PRECIO_VENTA');
    assert.equal(row.fields[4], price === '' ? null : Number(price.replace(',', '.')));
  }
});

test('sandbox: some optional highlighted fields are empty, and then null', () => {
  const nullsIn = (kind: Kind, field: number): number => data(kind).rows.filter((r) => r.fields[field] === null).length;
  assert.ok(nullsIn('clientes', 2) >= 1, 'a customer without CIF');
  assert.ok(nullsIn('clientes', 3) >= 1, 'a customer without e-mail');
  assert.ok(nullsIn('clientes', 4) >= 1, 'a customer without phone');
  assert.ok(nullsIn('articulos', 4) >= 1, 'an article without price');
  assert.ok(nullsIn('avisos-correctivo', 4) >= 1, 'a notice without work');
  for (const kind of KINDS) assert.equal(nullsIn(kind, 0), 0, `${kind}: id_erp is never null`);
});

test('sandbox: cells look like a real export', () => {
  const all = KINDS.flatMap((kind) => data(kind).rows.flatMap((r) => r.cells));
  assert.ok(all.some((c) => c !== '' && c !== c.trim()), 'a padded cell');
  assert.ok(all.some((c) => c.includes('\r\n')), 'a multi-line cell');
  assert.ok(all.some((c) => c.includes(';')), 'a cell holding the delimiter');
  assert.ok(all.some((c) => c.includes('"')), 'a cell holding a double quote');
  assert.ok(all.some((c) => /[ñÑ]/.test(c)) && all.some((c) => /[áéíóúÁÉÍÓÚ]/.test(c)), 'accents and ñ');
  assert.ok(all.filter((c) => c === '').length > all.length / 3, 'many empty optional cells');
  assert.ok(all.some((c) => /^\d+,\d{2}$/.test(c)), 'decimal commas');
  assert.ok(all.some((c) => /^\d\d\/\d\d\/\d{4}$/.test(c)), 'DD/MM/YYYY dates');
  // The text an ERP writes in Windows-1252: every character must be encodable.
  const cp1252Extra = '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';
  for (const c of all) {
    assert.equal(c, c.normalize('NFC'));
    for (const ch of c) {
      const code = ch.codePointAt(0) ?? 0;
      const ok = (code < 0x80 || (code >= 0xa0 && code <= 0xff) || cp1252Extra.includes(ch)) && (code >= 0x20 || ch === '\r' || ch === '\n');
      assert.ok(ok, `character U+${code.toString(16)} in ${JSON.stringify(c)}`);
    }
  }
});

test('sandbox: contact data is fictitious and well formed', () => {
  const NIF = 'TRWAGMYFPDXBNJZSQVHLCKE';
  for (const row of data('clientes').rows) {
    const email = cell('clientes', row, 'EMAIL');
    if (email) assert.match(email, /^[a-z0-9.]+@([a-z0-9]+\.)?example\.com$/);
    const www = cell('clientes', row, 'WWW');
    if (www) assert.match(www, /^www\.[a-z0-9]+\.example\.com$/);
    const phone = cell('clientes', row, 'TELEFONO').replace(/ /g, '');
    if (phone) assert.match(phone, /^[6789]\d{8}$/);
    const taxId = cell('clientes', row, '06_CIF');
    if (/^\d/.test(taxId)) assert.equal(taxId[8], NIF[Number(taxId.slice(0, 8)) % 23], `NIF ${taxId}`);
    else if (taxId) assert.match(taxId, /^[ABEFHP]\d{7}[0-9A-J]$/);
    assert.match(cell('clientes', row, '12_CPOSTAL'), /^\d{5}$/);
  }
});

test('sandbox: rows were written by several imports on different 2026 dates', () => {
  const days = new Set<string>();
  for (const kind of KINDS) {
    const perInstant = new Map<number, number>();
    for (const row of data(kind).rows) {
      const iso = new Date(row.actualizadoAt).toISOString();
      assert.match(iso, /^2026-/);
      days.add(iso.slice(0, 10));
      perInstant.set(row.actualizadoAt, (perInstant.get(row.actualizadoAt) ?? 0) + 1);
    }
    assert.ok(perInstant.size >= 4, `${kind}: ${perInstant.size} import instants`);
    for (const [at, n] of perInstant) assert.ok(n >= 2, `${kind}: ${n} rows at ${new Date(at).toISOString()}`);
  }
  assert.ok(days.size >= 4, `${days.size} distinct dates`);
});

test('sandbox: every row renders as a valid item', () => {
  for (const kind of KINDS) {
    const { columns, rows } = data(kind);
    const renderer = new ItemRenderer(kind, columns);
    for (const row of rows) {
      const item = JSON.parse(finishItem(renderer.body(row.fields, row.cells), row.actualizadoAt)) as Record<string, unknown>;
      assert.deepEqual(Object.keys(item), [...KIND_SPECS[kind].fields.map((f) => f.name), 'data', 'actualizado_at']);
      assert.deepEqual(Object.values(item.data as Record<string, string>), row.cells);
    }
  }
});

test('sandbox: computed once, shared, and frozen', () => {
  assert.equal(sandboxDataset(), ds);
  const row = data('clientes').rows[0];
  assert.ok(row);
  assert.throws(() => {
    (row.cells as string[])[0] = 'changed';
  }, TypeError);
  assert.throws(() => {
    data('clientes').rows.pop();
  }, TypeError);
});

test('sandbox: the same bytes on every run, whatever the time zone or locale', () => {
  const json = JSON.stringify(ds);
  assert.equal(sha256(json), DATASET_SHA256);
  // Recomputed in fresh processes under unusual zones and locales.
  const module = new URL('../../src/sandbox/sandbox-data.js', import.meta.url).href;
  const script =
    `const { sandboxDataset } = await import(${JSON.stringify(module)});` +
    `const { createHash } = await import('node:crypto');` +
    `process.stdout.write(createHash('sha256').update(JSON.stringify(sandboxDataset())).digest('hex'));`;
  for (const env of [{ TZ: 'Pacific/Chatham', LANG: 'tr_TR.UTF-8', LC_ALL: 'tr_TR.UTF-8' }, { TZ: 'America/St_Johns', LANG: 'C', LC_ALL: 'C' }]) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env } });
    assert.equal(out.toString(), DATASET_SHA256, `under ${env.TZ}`);
  }
});
