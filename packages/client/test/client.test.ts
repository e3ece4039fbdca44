/** Issue 7, point 3: the client against a real started server (SQLite, port 0). */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { KIND_SPECS } from '../../../src/domain/kinds.js';
import { replaceRecords } from '../../../src/snapshots/write-records.js';
import type { Store } from '../../../src/store/store.js';
import { customer, customers, CUSTOMER_COLUMNS, range } from '../../../test/helpers/records.js';
import { sqliteFactory } from '../../../test/helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../../../test/helpers/test-server.js';
import { awayFromMinuteBoundary } from '../../../test/helpers/timing.js';
import {
  AuthenticationError, InvalidRequestError, ITEM_FIELDS, KIND_NAMES, Mirador, MiradorError, NotFoundError, RateLimitError,
  type Articulo, type ItemsByKind, type KindName,
} from '../src/index.js';

// Compile-time: ITEM_FIELDS names every highlighted field of each item interface, and no other.
type Unlisted<K extends KindName> = Exclude<keyof ItemsByKind[K], 'data' | 'actualizado_at' | (typeof ITEM_FIELDS)[K][number]>;
const everyFieldListed: { [K in KindName]: [Unlisted<K>] extends [never] ? true : Unlisted<K> } = {
  clientes: true,
  articulos: true,
  obras: true,
  'avisos-correctivo': true,
};

const T1 = Date.parse('2026-01-10T08:00:00.000Z');
const T2 = Date.parse('2026-02-20T09:30:00.500Z');

describe('the TypeScript client against a real server', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let key: string;
  let client: Mirador;
  let sandbox: Mirador;

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    const acme = await companyWithKey(store, 'acme');
    key = acme.key;
    const target = { companyId: acme.company.id, kind: 'clientes' as const, columns: CUSTOMER_COLUMNS };
    await replaceRecords(store, { ...target, at: T1 }, customers(range(250)));
    const changed = customers(range(250));
    changed[9] = customer('C000010', 'Renamed Ten');
    changed.push(customer('A/1 ñ?', 'Reserved characters'));
    await replaceRecords(store, { ...target, at: T2 }, changed);
    server = await startServer(store);
    client = new Mirador({ baseUrl: server.baseUrl, apiKey: key });
    sandbox = new Mirador({ baseUrl: `${server.baseUrl}/`, sandbox: true });
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  test('ITEM_FIELDS matches the server’s kinds and the items it sends', async () => {
    assert.deepEqual(Object.values(everyFieldListed), [true, true, true, true]);
    for (const kind of KIND_NAMES) {
      assert.deepEqual(ITEM_FIELDS[kind], KIND_SPECS[kind].fields.map((f) => f.name), kind);
      const [item] = (await sandbox.forKind(kind).list({ limit: 1 })).items;
      assert.deepEqual(Object.keys(item!), [...ITEM_FIELDS[kind], 'data', 'actualizado_at'], kind);
    }
  });

  test('list: a page with the envelope, limit, offset and updatedSince', async () => {
    const page = await client.clientes.list({ limit: 10, offset: 5 });
    assert.deepEqual(
      { total: page.total, limit: page.limit, offset: page.offset, has_more: page.has_more, next_offset: page.next_offset, n: page.items.length },
      { total: 251, limit: 10, offset: 5, has_more: true, next_offset: 15, n: 10 },
    );
    assert.equal('sandbox' in page, false);
    const changed = await client.clientes.list({ updatedSince: '2026-02-20T09:30:00.500Z' });
    assert.deepEqual(changed.items.map((c) => c.id_erp), ['A/1 ñ?', 'C000010']);
    const sinceDate = await client.clientes.list({ updatedSince: new Date(T2) });
    assert.equal(sinceDate.total, 2);
    assert.equal(changed.items[1]!.nombre, 'Renamed Ten');
  });

  test('subsets (issue 17): filters, q, fields, related records, typed', async () => {
    const obras = (await sandbox.obras.list({ limit: 1000 })).items;
    const customerId = obras[0]!.cliente_id_erp!;
    const estados = [...new Set(obras.map((o) => o.estado).filter((e): e is string => e !== null))].slice(0, 2);
    const filtered = await sandbox.obras.list({ cliente_id_erp: customerId, estado: estados, limit: 1000 });
    assert.deepEqual(
      filtered.items.map((o) => o.id_erp),
      obras.filter((o) => o.cliente_id_erp === customerId && estados.includes(o.estado!)).map((o) => o.id_erp),
    );
    assert.deepEqual(
      (await sandbox.clientes.obras(customerId, { limit: 1000 })).items.map((o) => o.id_erp),
      obras.filter((o) => o.cliente_id_erp === customerId).map((o) => o.id_erp),
    );
    const thin = await sandbox.clientes.list({ q: 'a', fields: ['nombre'], limit: 3 });
    assert.deepEqual(Object.keys(thin.items[0]!), ['id_erp', 'nombre', 'actualizado_at']);
    const one = await sandbox.clientes.get(customerId, { fields: ['cif'] });
    assert.deepEqual(Object.keys(one), ['id_erp', 'cif', 'actualizado_at']);
    const all: string[] = [];
    for await (const o of sandbox.obras.all({ cliente_id_erp: customerId, pageSize: 1 })) all.push(o.id_erp);
    assert.deepEqual(all, obras.filter((o) => o.cliente_id_erp === customerId).map((o) => o.id_erp));
    await assert.rejects(sandbox.clientes.obras('NOPE'), NotFoundError);
    await assert.rejects(sandbox.clientes.list({ q: '' }), InvalidRequestError);
    // @ts-expect-error: clientes have no estado to filter on
    await assert.rejects(sandbox.clientes.list({ estado: 'abierto' }), InvalidRequestError);
  });

  test('get: one record, its id percent-encoded once', async () => {
    const c = await client.clientes.get('C000010');
    assert.equal(c.nombre, 'Renamed Ten');
    assert.equal(c.actualizado_at, '2026-02-20T09:30:00.500Z');
    assert.equal((await client.clientes.get('A/1 ñ?')).nombre, 'Reserved characters');
  });

  test('all: follows next_offset through every record, once each, in order', async () => {
    const seen: string[] = [];
    for await (const c of client.clientes.all({ pageSize: 7 })) seen.push(c.id_erp);
    assert.equal(seen.length, 251);
    assert.equal(new Set(seen).size, 251);
    assert.deepEqual(seen.slice(-2), ['A/1 ñ?', 'C000010']);
    const recent: string[] = [];
    for await (const c of client.clientes.all({ updatedSince: '2026-02-01' })) recent.push(c.id_erp);
    assert.deepEqual(recent, ['A/1 ñ?', 'C000010']);
    let pages = 0;
    for await (const page of client.clientes.pages({ pageSize: 100 })) {
      pages++;
      assert.equal(page.total, 251);
    }
    assert.equal(pages, 3);
  });

  test('the sandbox: no key, every kind, typed fields', async () => {
    for (const kind of KIND_NAMES) {
      const page = await sandbox.forKind(kind).list({ limit: 1000 });
      assert.equal(page.sandbox, true);
      let n = 0;
      for await (const _ of sandbox.forKind(kind).all({ pageSize: 9 })) n++;
      assert.equal(n, page.total, kind);
    }
    const articulos: Articulo[] = (await sandbox.articulos.list({ limit: 1000 })).items;
    assert.ok(articulos.some((a) => typeof a.precio === 'number'));
    const aviso = (await sandbox.avisosCorrectivo.list({ limit: 1 })).items[0]!;
    assert.deepEqual(await sandbox.avisosCorrectivo.get(aviso.id_erp), aviso);
  });

  test('errors are typed and carry code, status and requestId', async () => {
    const missing = await client.clientes.get('NOPE-1').catch((e: unknown) => e);
    assert.ok(missing instanceof NotFoundError);
    assert.ok(missing instanceof MiradorError);
    assert.equal(missing.code, 'not_found');
    assert.equal(missing.status, 404);
    assert.match(missing.requestId ?? '', /^[0-9a-f-]{36}$/);
    assert.match(missing.message, /NOPE-1/);
    assert.equal(missing.name, 'NotFoundError');

    const bad = await client.clientes.list({ limit: 0 }).catch((e: unknown) => e);
    assert.ok(bad instanceof InvalidRequestError);
    assert.equal(bad.code, 'invalid_parameter');
    assert.match(bad.message, /"limit"/);

    const revoked = new Mirador({ baseUrl: server.baseUrl, apiKey: `${key}x` });
    const denied = await revoked.obras.list().catch((e: unknown) => e);
    assert.ok(denied instanceof AuthenticationError);
    assert.equal(denied.code, 'unauthorized');
    assert.equal(denied.status, 401);
  });

  test('the options are checked up front', () => {
    assert.throws(() => new Mirador({ baseUrl: server.baseUrl }), /apiKey is required/);
    assert.throws(() => new Mirador({ baseUrl: server.baseUrl, apiKey: key, sandbox: true }), /not both/);
    for (const baseUrl of ['localhost:3000', 'ftp://example.com', '/v1', '']) {
      assert.throws(() => new Mirador({ baseUrl, sandbox: true }), /absolute http\(s\) URL/, baseUrl);
    }
  });

  test('429 from the real rate limiter: waits Retry-After, then gives up with RateLimitError', async () => {
    await awayFromMinuteBoundary();
    const limited = await startServer(store, { RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const waits: number[] = [];
      const c = new Mirador({ baseUrl: limited.baseUrl, apiKey: key, sleep: async (ms) => void waits.push(ms) });
      await c.clientes.list({ limit: 1 });
      await c.clientes.list({ limit: 1 });
      const err = await c.clientes.list({ limit: 1 }).catch((e: unknown) => e);
      assert.ok(err instanceof RateLimitError, String(err));
      assert.equal(err.status, 429);
      assert.equal(err.code, 'rate_limited');
      // Five attempts, four waits, each what Retry-After said (the rest of the minute).
      assert.equal(waits.length, 4);
      for (const ms of waits) assert.ok(ms >= 1000 && ms <= 60_000 && ms % 1000 === 0, String(ms));
      // The error carries the last answer's Retry-After, which counts down to the end of the
      // window: the same as the wait before it, or less when a second boundary passed between
      // the two answers (CI saw 36 after a wait of 37 s).
      const lastWait = waits.at(-1)! / 1000;
      assert.ok(Number.isInteger(err.retryAfterSeconds) && err.retryAfterSeconds! >= 1 && err.retryAfterSeconds! <= lastWait, `${err.retryAfterSeconds} after a wait of ${lastWait} s`);
    } finally {
      await limited.close();
    }
  });

  test('the client source needs nothing but fetch: no Node modules, no packages', () => {
    const dir = fileURLToPath(new URL('../../../../packages/client/src/', import.meta.url));
    for (const file of readdirSync(dir)) {
      // Comments hold usage examples (process.env…); only code counts.
      const source = readFileSync(dir + file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
      for (const [, from] of source.matchAll(/from '([^']+)'/g)) assert.match(from!, /^\.\/[a-z-]+\.js$/, `${file} imports ${from}`);
      assert.doesNotMatch(source, /\b(Buffer|process|require)\b[.(]/, file);
    }
  });
});
