/** Issue 7, point 4: `mirador pull`, run as a child process against a started server. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { miradorAsync } from '../helpers/cli-async.js';
import { request } from '../helpers/http.js';
import { customer, customers, CUSTOMER_COLUMNS, range } from '../helpers/records.js';
import { sqliteFactory, tempDir } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const T1 = Date.parse('2026-01-10T08:00:00.000Z');
const T2 = Date.parse('2026-02-20T09:30:00.500Z');
const T3 = Date.parse('2026-03-01T12:00:00.000Z');

describe('mirador pull', () => {
  const dir = tempDir('mirador-pull-');
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let key: string;
  let companyId: number;
  const file = (name: string) => join(dir.path, name);
  const pull = (args: string[], env: Record<string, string> = {}) => miradorAsync(['pull', ...args, '--base-url', server.baseUrl], env);
  const lines = (name: string) => readFileSync(file(name), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const csvRows = (name: string) => parse(readFileSync(file(name)), { columns: true }) as Record<string, string>[];

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    ({ key, company: { id: companyId } } = await companyWithKey(store, 'acme'));
    await replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: T1 }, customers(range(250)));
    server = await startServer(store);
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
    dir.remove();
  });

  test('the sandbox, in each format: every record, progress on stderr', async () => {
    const api = (await request(`${server.baseUrl}/v1/sandbox/articulos?limit=1000`)).json();
    const nd = await pull(['articulos', '--sandbox', '-o', file('a.ndjson'), '--page-size', '7']);
    assert.equal(nd.code, 0, nd.stderr);
    assert.match(nd.stderr, new RegExp(`pull articulos: ${api.total}/${api.total} rows 100%`));
    assert.match(nd.stderr, new RegExp(`Pulled ${api.total} records of articulos`));
    assert.deepEqual(lines('a.ndjson'), api.items);

    assert.equal((await pull(['articulos', '--sandbox', '--format', 'json', '-o', file('a.json')])).code, 0);
    assert.deepEqual(JSON.parse(readFileSync(file('a.json'), 'utf8')), api.items);

    assert.equal((await pull(['articulos', '--sandbox', '--format', 'csv', '-o', file('a.csv')])).code, 0);
    const rows = csvRows('a.csv');
    assert.equal(rows.length, api.total);
    const header = Object.keys(rows[0]!);
    const columns = Object.keys(api.items[0].data);
    assert.deepEqual(header, ['id_erp', 'codigo', 'nombre', 'unidad', 'precio', ...columns.map((c) => `data.${c}`), 'actualizado_at']);
    const first = api.items[0];
    assert.equal(rows[0]!.id_erp, first.id_erp);
    assert.equal(rows[0]!.precio, first.precio === null ? '' : String(first.precio));
    assert.equal(rows[0]![`data.${columns[1]}`], first.data[columns[1]!]);
    assert.equal(rows[0]!.actualizado_at, first.actualizado_at);

    const stdout = await pull(['obras', '--sandbox']);
    assert.equal(stdout.code, 0, stdout.stderr);
    assert.equal(stdout.stdout.trim().split('\n').length, (await request(`${server.baseUrl}/v1/sandbox/obras`)).json().total);
  });

  test('--since, a key from MIRADOR_API_KEY, and --json', async () => {
    const r = await pull(['clientes', '--since', '2026-01-10', '-o', file('since.ndjson'), '--json'], { MIRADOR_API_KEY: key });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      { fetched: r.json().fetched, records: r.json().records, updated_since: r.json().updated_since },
      { fetched: 250, records: 250, updated_since: '2026-01-10T00:00:00.000Z' },
    );
    const none = await pull(['clientes', '--key', key, '--since', '2026-01-10T08:00:00.001Z', '-o', file('none.ndjson'), '--json']);
    assert.equal(none.json().fetched, 0);
  });

  test('--state: the next runs fetch only what changed, upsert it into csv and json, append it to ndjson', async () => {
    const run = async (format: string, out: string) => {
      const r = await pull(['clientes', '--key', key, '--state', file(`${format}.state.json`), '--format', format, '-o', file(out), '--json']);
      assert.equal(r.code, 0, r.stderr);
      return r.json();
    };
    for (const [format, out] of [['csv', 'c.csv'], ['json', 'c.json'], ['ndjson', 'c.ndjson']] as const) {
      assert.equal((await run(format, out)).fetched, 250, format);
    }
    const state = JSON.parse(readFileSync(file('csv.state.json'), 'utf8'));
    assert.equal(state.max_actualizado_at, '2026-01-10T08:00:00.000Z');
    assert.equal(state.output, file('c.csv'));

    // An import changes two records and adds one.
    const second = customers(range(250));
    second[4] = customer('C000005', 'Renamed, "five"');
    second[99] = customer('C000100', 'Renamed 100');
    second.push(customer('C000251', 'New 251'));
    await replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: T2 }, second);

    for (const [format, out] of [['csv', 'c.csv'], ['json', 'c.json'], ['ndjson', 'c.ndjson']] as const) {
      const summary = await run(format, out);
      assert.equal(summary.fetched, 3, format);
      assert.equal(summary.updated_since, '2026-01-10T08:00:00.001Z', format);
    }
    const live = (await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: { authorization: `Bearer ${key}` } })).json().items;
    assert.deepEqual(JSON.parse(readFileSync(file('c.json'), 'utf8')), live, 'json: upserted, in list order');
    const csv = csvRows('c.csv');
    assert.deepEqual(csv.map((r) => r.id_erp), live.map((i: { id_erp: string }) => i.id_erp), 'csv: upserted, in list order');
    assert.equal(csv.find((r) => r.id_erp === 'C000005')!.nombre, 'Renamed, "five"');
    const log = lines('c.ndjson');
    assert.equal(log.length, 253, 'ndjson: the changes appended');
    assert.deepEqual(log.slice(-3).map((i) => i.id_erp), ['C000005', 'C000100', 'C000251']);

    // Nothing changed: nothing fetched, files as they were.
    const before = readFileSync(file('c.csv'));
    assert.equal((await run('csv', 'c.csv')).fetched, 0);
    assert.deepEqual(readFileSync(file('c.csv')), before);
    assert.equal(JSON.parse(readFileSync(file('csv.state.json'), 'utf8')).max_actualizado_at, '2026-02-20T09:30:00.500Z');
  });

  test('--state applies deletions: ndjson carries the tombstones, csv and json drop the rows', async () => {
    // Continues the files of the previous test: an import removes two records and changes one.
    const keep: Record<string, string> = {
      C000001: 'Renamed one', // the one change
      C000005: 'Renamed, "five"', // as the previous import left them
      C000100: 'Renamed 100',
      C000251: 'New 251',
    };
    const third = customers(range(251))
      .filter((r) => r.fields[0] !== 'C000007' && r.fields[0] !== 'C000200')
      .map((r) => {
        const id = r.fields[0] as string;
        return keep[id] ? customer(id, keep[id]) : r;
      });
    await replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: T3 }, third);
    for (const [format, out] of [['csv', 'c.csv'], ['json', 'c.json'], ['ndjson', 'c.ndjson']] as const) {
      const r = await pull(['clientes', '--key', key, '--state', file(`${format}.state.json`), '--format', format, '-o', file(out), '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.json().fetched, 3, format);
      assert.equal(r.json().deleted, 2, format);
    }
    const live = (await request(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: { authorization: `Bearer ${key}` } })).json().items;
    assert.equal(live.length, 249);
    assert.deepEqual(JSON.parse(readFileSync(file('c.json'), 'utf8')), live, 'json: deleted rows dropped');
    assert.deepEqual(csvRows('c.csv').map((r) => r.id_erp), live.map((i: { id_erp: string }) => i.id_erp), 'csv: deleted rows dropped');
    assert.deepEqual(lines('c.ndjson').slice(-3), [
      live.find((i: { id_erp: string }) => i.id_erp === 'C000001'),
      { id_erp: 'C000007', eliminado: true, actualizado_at: new Date(T3).toISOString() },
      { id_erp: 'C000200', eliminado: true, actualizado_at: new Date(T3).toISOString() },
    ]);
  });

  test('--where and --fields (issue 17): a subset, thin, kept in sync by --state as records enter and leave it', async () => {
    const { key: k2, company } = await companyWithKey(store, 'subset-pull');
    const notice = (id: string, estado: string, cliente = 'C1') => ({
      fields: [id, null, '2026-01-02', cliente, null, 'x', estado, null],
      cells: [id, estado],
      line: 2,
    });
    const load = (at: number, rows: ReturnType<typeof notice>[]) =>
      replaceRecords(store, { companyId: company.id, kind: 'avisos-correctivo', columns: ['ID', 'ESTADO'], at }, rows);
    await load(T1, [notice('A1', 'abierto'), notice('A2', 'abierto'), notice('A3', 'cerrado'), notice('A4', 'pendiente', 'C2')]);
    const args = ['avisos-correctivo', '--key', k2, '--where', 'cliente_id_erp=C1', '--where', 'estado=abierto', '--where', 'estado=pendiente', '--fields', 'estado'];
    const run = async () => {
      const r = await pull([...args, '--state', file('sub.state.json'), '--format', 'csv', '-o', file('sub.csv'), '--json']);
      assert.equal(r.code, 0, r.stderr);
      return r.json();
    };
    assert.equal((await run()).fetched, 2, 'a first run brings the subset only');
    assert.deepEqual(csvRows('sub.csv'), [
      { id_erp: 'A1', estado: 'abierto', actualizado_at: new Date(T1).toISOString() },
      { id_erp: 'A2', estado: 'abierto', actualizado_at: new Date(T1).toISOString() },
    ]);
    // A1 closes (leaves), A3 reopens (enters), A4 moves to C1 (enters), A2 is removed.
    await load(T2, [notice('A1', 'cerrado'), notice('A3', 'pendiente'), notice('A4', 'pendiente')]);
    await run();
    assert.deepEqual(csvRows('sub.csv').map((r) => `${r.id_erp} ${r.estado}`), ['A3 pendiente', 'A4 pendiente']);
    const other = await pull(['avisos-correctivo', '--key', k2, '--where', 'estado=abierto', '--state', file('sub.state.json'), '--format', 'csv', '-o', file('sub.csv')]);
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /belongs to another pull/);
    const bad = await pull(['avisos-correctivo', '--key', k2, '--where', 'estado']);
    assert.match(bad.stderr, /--where must be field=value/);
    const refused = await pull(['clientes', '--key', k2, '--where', 'estado=abierto']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /"estado" does not apply to clientes/);
  });

  test('a column added by a later export widens the csv; older rows get it empty', async () => {
    const own = await companyWithKey(store, 'widening');
    const target = { companyId: own.company.id, kind: 'clientes' as const };
    await replaceRecords(store, { ...target, columns: CUSTOMER_COLUMNS, at: T1 }, customers(['A1', 'A2']));
    const args = ['clientes', '--key', own.key, '--state', file('w.state'), '--format', 'csv', '-o', file('w.csv')];
    assert.equal((await pull(args)).code, 0);
    const wide = customer('A2', 'Two');
    await replaceRecords(store, { ...target, columns: [...CUSTOMER_COLUMNS, 'ZONA'], at: T3 }, [
      { ...customer('A1'), cells: [...customer('A1').cells, ''] },
      { ...wide, cells: [...wide.cells, 'NORTE'] },
    ]);
    const r = await pull(args);
    assert.equal(r.code, 0, r.stderr);
    const rows = csvRows('w.csv');
    assert.deepEqual(rows.map((x) => [x.id_erp, x['data.ZONA']]), [['A1', ''], ['A2', 'NORTE']]);
  });

  test('mistakes get a clear message and a non-zero exit, and touch nothing', async () => {
    writeFileSync(file('keep.csv'), 'precious\n');
    const cases: [string[], RegExp][] = [
      [['facturas', '--sandbox'], /"facturas" is not a kind/],
      [['clientes'], /API key is needed/],
      [['clientes', '--sandbox', '--key', key], /--key or --sandbox, not both/],
      [['clientes', '--sandbox', '--since', 'yesterday'], /--since must be an ISO 8601/],
      [['clientes', '--sandbox', '--since', '2026-01-01', '--state', file('x.state')], /--since or --state, not both/],
      [['clientes', '--sandbox', '--state', file('x.state'), '--format', 'csv'], /needs -o FILE/],
      [['clientes', '--sandbox', '--json'], /--json .* needs -o FILE|records need -o FILE/],
      [['clientes', '--sandbox', '--format', 'xml'], /Allowed choices are ndjson, csv, json/],
      [['clientes', '--sandbox', '--page-size', '5000'], /--page-size must be an integer from 1 to 1000/],
      [['clientes', '--key', 'api_aaaaaaaa_nope', '--format', 'csv', '-o', file('keep.csv')], /not valid.*unauthorized, HTTP 401, request [0-9a-f-]{36}/],
      [['obras', '--sandbox', '--state', file('csv.state.json')], /belongs to another pull \(kind clientes, not obras/],
    ];
    for (const [args, message] of cases) {
      const r = await pull(args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
    }
    assert.equal(readFileSync(file('keep.csv'), 'utf8'), 'precious\n', 'a failed pull leaves the output alone');
  });

  test('a state whose output file is gone asks to start over instead of writing a partial file', async () => {
    const args = ['obras', '--sandbox', '--state', file('gone.state'), '--format', 'json', '-o', file('gone.json')];
    assert.equal((await pull(args)).code, 0);
    const { rmSync } = await import('node:fs');
    rmSync(file('gone.json'));
    const r = await pull(args);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /gone\.json is missing.*Delete the state file/);
    assert.equal(existsSync(file('gone.json')), false);
  });
});
