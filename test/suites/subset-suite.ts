/**
 * Issue 17 on every store (contract §6): filters, `q`, `fields`, related
 * records and the convergence of filtered change feeds. The properties
 * compare every filtered page, total and has_more with a plain in-memory
 * filter of the unfiltered list, over random data, filters and paging.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { replaceRecords, type RecordInput } from '../../src/snapshots/write-records.js';
import { KIND_SPECS, type Kind } from '../../src/domain/kinds.js';
import type { Store } from '../../src/store/store.js';
import { bearer, request } from '../helpers/http.js';
import type { StoreFactory } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const DAY = 86_400_000;
type Item = Record<string, unknown> & { id_erp: string; actualizado_at: string; eliminado?: true };

/** The contract's folding, written again here from its words: lower case, accents dropped. */
const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
const words = (s: string) => fold(s).match(/[\p{L}\p{N}]+/gu) ?? [];

/** A plain in-memory reading of contract §6 over whole items. */
export function referenceMatch(kind: Kind, item: Item, query: Record<string, string | string[]>): boolean {
  for (const [name, raw] of Object.entries(query)) {
    const values = Array.isArray(raw) ? raw : [raw];
    if (name === 'q') {
      const terms = [...words(String(item.nombre ?? '')), ...['id_erp', 'codigo', 'cif'].filter((f) => typeof item[f] === 'string').map((f) => fold(item[f] as string))];
      if (!words(values[0]!).every((w) => terms.some((t) => t.startsWith(w)))) return false;
    } else if (name === 'fecha_desde' || name === 'fecha_hasta') {
      if (item.fecha === null) return false;
      if (name === 'fecha_desde' ? (item.fecha as string) < values[0]! : (item.fecha as string) > values[0]!) return false;
    } else if (name === 'precio_min' || name === 'precio_max') {
      if (item.precio === null) return false;
      if (name === 'precio_min' ? (item.precio as number) < Number(values[0]) : (item.precio as number) > Number(values[0])) return false;
    } else if (KIND_SPECS[kind].fields.some((f) => f.name === name)) {
      if (!values.some((v) => (v === '' ? item[name] === null : item[name] === v))) return false;
    }
  }
  return true;
}

function project(item: Item, fields: string[] | undefined): Item {
  if (!fields) return item;
  const keep = new Set([...fields, 'id_erp', 'actualizado_at']);
  return Object.fromEntries(Object.entries(item).filter(([k]) => keep.has(k))) as Item;
}

// Small vocabularies, so that random filters match something.
const ESTADOS = ['abierto', 'pendiente', 'cerrado', 'Abierto'];
const CLIENTES = ['C1', 'C2', 'C3/4', 'C5'];
const FECHAS = ['2026-01-05', '2026-02-10', '2026-02-11', '2026-03-01'];
const NAME_WORDS = ['Ferretería', 'Ibáñez', 'NUÑEZ', 'ferro', 'Iba', 'árbol', 'A1b2', 'San', 'José-Luis', 'O\'Brien'];
const PRECIOS = [0, 1.5, 12.5, 12.5, 99, 1000];
const Q_WORDS = ['fer', 'ferr', 'iba', 'nun', 'Ñu', 'ARB', 'a1', 'san', 'jose', 'luis', 'o', 'brien', 'x', 'c', 'av1', 'ART0'];

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 4 });
const nameArb = fc.array(fc.constantFrom(...NAME_WORDS), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '));

/** One random record's highlighted values (by field name), for `kind`. */
function recordArb(kind: Kind): fc.Arbitrary<Record<string, string | number | null>> {
  if (kind === 'avisos-correctivo') {
    return fc.record({
      codigo: maybe(fc.constantFrom('AV-1', 'AV-2', 'av10', 'B-7')),
      fecha: maybe(fc.constantFrom(...FECHAS)),
      cliente_id_erp: maybe(fc.constantFrom(...CLIENTES)),
      obra_id_erp: maybe(fc.constantFrom('O1', 'O2')),
      descripcion: maybe(nameArb),
      estado: maybe(fc.constantFrom(...ESTADOS)),
      prioridad: maybe(fc.constantFrom('alta', 'baja')),
    });
  }
  return fc.record({
    codigo: maybe(fc.constantFrom('ART01', 'art02', 'Ártico')),
    nombre: maybe(nameArb),
    unidad: maybe(fc.constantFrom('ud', 'kg', 'm²')),
    precio: maybe(fc.constantFrom(...PRECIOS)),
  });
}

function toInput(kind: Kind, id: string, values: Record<string, string | number | null>, line: number): RecordInput {
  const fields = KIND_SPECS[kind].fields.map((f) => (f.name === 'id_erp' ? id : values[f.name] ?? null));
  return { fields, cells: [id, JSON.stringify(values)], line };
}

/** A random query of `kind`'s subset parameters (the list parameters are added by the caller). */
function queryArb(kind: Kind): fc.Arbitrary<Record<string, string | string[]>> {
  const eq: fc.Arbitrary<Record<string, string[]>> =
    kind === 'avisos-correctivo'
      ? fc.oneof(
          fc.record({ estado: fc.array(fc.constantFrom(...ESTADOS, ''), { minLength: 1, maxLength: 2 }) }),
          fc.record({ cliente_id_erp: fc.array(fc.constantFrom(...CLIENTES, ''), { minLength: 1, maxLength: 2 }) }),
          fc.record({ obra_id_erp: fc.constant<string[]>(['']), prioridad: fc.constant<string[]>(['alta']) }),
        )
      : fc.oneof(
          fc.record({ unidad: fc.array(fc.constantFrom('ud', 'kg', 'm²', ''), { minLength: 1, maxLength: 2 }) }),
          fc.record({ codigo: fc.constant<string[]>(['art02']) }),
        );
  const range: fc.Arbitrary<Record<string, string>> =
    kind === 'avisos-correctivo'
      ? fc.record({ fecha_desde: fc.constantFrom(...FECHAS), fecha_hasta: fc.constantFrom(...FECHAS, '2026-12-31') }, { requiredKeys: [] })
      : fc.record({ precio_min: fc.constantFrom('0', '1.5', '12.5', '-1', '1e2'), precio_max: fc.constantFrom('12.5', '99', '5000') }, { requiredKeys: [] });
  const q = fc.array(fc.constantFrom(...Q_WORDS), { minLength: 1, maxLength: 2 }).map((w) => ({ q: w.join(kind === 'articulos' ? ' ' : ',') }));
  return fc
    .tuple(fc.option(eq, { nil: undefined }), fc.option(range, { nil: undefined }), fc.option(q, { nil: undefined }))
    .map(([a, b, c]) => ({ ...a, ...b, ...c }) as Record<string, string | string[]>);
}

function fieldsArb(kind: Kind): fc.Arbitrary<string[] | undefined> {
  const names = [...KIND_SPECS[kind].fields.map((f) => f.name), 'data'];
  return fc.option(fc.subarray(names, { minLength: 1 }), { nil: undefined, freq: 2 });
}

function queryString(params: Record<string, string | string[] | number | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(one))}`);
  }
  return parts.join('&');
}

/** Every item of a list, following next_offset. */
async function readAll(get: (path: string) => Promise<any>, path: string): Promise<Item[]> {
  const out: Item[] = [];
  for (let offset = 0; ; ) {
    const page = await get(`${path}${path.includes('?') ? '&' : '?'}limit=1000&offset=${offset}`);
    out.push(...page.items);
    if (!page.has_more) return out;
    offset = page.next_offset;
  }
}

export function subsetSuite(factory: StoreFactory) {
  describe(`subsets: filters, q, fields, related records (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: TestServer;
    let companies = 0;
    before(async () => {
      ({ store, cleanup } = await factory.create());
      server = await startServer(store, { RATE_LIMIT_PER_MINUTE: '1000000', SANDBOX_RATE_LIMIT_PER_MINUTE: '1000000' });
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });
    const getWith = (key: string | null) => async (path: string) => {
      const res = await request(`${server.baseUrl}${path}`, key ? { headers: bearer(key) } : {});
      assert.equal(res.status, 200, `${path}: ${res.text()}`);
      return res.json();
    };

    /** Loads `imports` successive versions of a random record set; returns their times. */
    async function loadVersions(companyId: number, kind: Kind, versions: Record<string, Record<string, string | number | null>>[], firstDay = 0) {
      const times: number[] = [];
      const base = Date.UTC(2026, 0, 1);
      for (const [v, records] of versions.entries()) {
        const at = base + (firstDay + v) * DAY;
        times.push(at);
        const rows = Object.entries(records).map(([id, values], i) => toInput(kind, id, values, i + 2));
        await replaceRecords(store, { companyId, kind, columns: ['ID', 'VALUES'], at }, rows);
      }
      return times;
    }

    /**
     * A company with `versions` loaded, read whole through the API: its pages'
     * reader, every item, and the `updated_since` of version `i` (none when out of range).
     */
    async function loadedList(slug: string, kind: Kind, versions: Record<string, Record<string, string | number | null>>[]) {
      const { company, key } = await companyWithKey(store, slug);
      const times = await loadVersions(company.id, kind, versions);
      const get = getWith(key);
      const all = await readAll(get, `/v1/${kind}`);
      const sinceAt = (i: number) => (i >= 0 && i < times.length ? new Date(times[i]!).toISOString() : undefined);
      return { get, all, sinceAt };
    }

    /** Random versions: each keeps, changes, drops and adds some records of the one before. */
    const versionsArb = (kind: Kind) =>
      fc
        .array(fc.dictionary(fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `${kind === 'articulos' ? 'ART' : 'AV'}${i}`)), recordArb(kind), { minKeys: 0, maxKeys: 30 }), {
          minLength: 1,
          maxLength: 3,
        })
        .chain((drafts) =>
          // Half of each version's records are carried over unchanged from the one before, so actualizado_at varies.
          fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }).map((keep) => {
            const out: Record<string, Record<string, string | number | null>>[] = [];
            for (const [v, draft] of drafts.entries()) {
              const prev = out[v - 1] ?? {};
              const next: Record<string, Record<string, string | number | null>> = {};
              for (const [id, values] of Object.entries(draft)) next[id] = keep[Number(id.replace(/\D/g, ''))] && prev[id] ? prev[id]! : values;
              out.push(next);
            }
            return out;
          }),
        );

    for (const kind of ['avisos-correctivo', 'articulos'] as const) {
      test(`property (${kind}): every filtered page, total and has_more equal an in-memory filter of the unfiltered list`, async () => {
        await fc.assert(
          fc.asyncProperty(
            versionsArb(kind),
            fc.array(fc.tuple(queryArb(kind), fieldsArb(kind), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: -1, max: 2 })), {
              minLength: 1,
              maxLength: 8,
            }),
            async (versions, queries) => {
              const { get, all, sinceAt } = await loadedList(`prop${companies++}`, kind, versions);
              for (const [filters, fields, limit, offset, sinceIndex] of queries) {
                const since = sinceAt(sinceIndex);
                const qs = queryString({ ...filters, fields: fields?.join(','), limit, offset, updated_since: since });
                const expected = all.filter((i) => referenceMatch(kind, i, filters) && (since === undefined || i.actualizado_at >= since));
                const slice = expected.slice(offset, offset + limit).map((i) => project(i, fields));
                // Three asks: a filter's first is copied, its second gathers blocks, its third is views of them (gathered-page.ts).
                for (let ask = 0; ask < 3; ask++) {
                  const page = await get(`/v1/${kind}?${qs}`);
                  assert.equal(page.total, expected.length, qs);
                  assert.equal(JSON.stringify(page.items), JSON.stringify(slice), `${qs}, ask ${ask + 1}`);
                  assert.equal(page.has_more, offset + slice.length < expected.length, qs);
                  assert.equal(page.next_offset, offset + slice.length, qs);
                }
              }
            },
          ),
          { numRuns: 12 },
        );
      });
    }

    test('property: unfiltered fields= pages without data (walked by chunk) equal the trimmed unfiltered list, across imports', async () => {
      const kind = 'articulos';
      const highlighted = KIND_SPECS[kind].fields.map((f) => f.name);
      await fc.assert(
        fc.asyncProperty(
          versionsArb(kind),
          fc.array(fc.tuple(fc.subarray(highlighted, { minLength: 1 }), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: -1, max: 2 })), {
            minLength: 1,
            maxLength: 8,
          }),
          async (versions, queries) => {
            const { get, all, sinceAt } = await loadedList(`thin${companies++}`, kind, versions);
            for (const [fields, limit, offset, sinceIndex] of queries) {
              const since = sinceAt(sinceIndex);
              const qs = queryString({ fields: fields.join(','), limit, offset, updated_since: since });
              const page = await get(`/v1/${kind}?${qs}`);
              const expected = all.filter((i) => since === undefined || i.actualizado_at >= since);
              const slice = expected.slice(offset, offset + limit).map((i) => project(i, fields));
              assert.equal(page.total, expected.length, qs);
              assert.equal(JSON.stringify(page.items), JSON.stringify(slice), qs);
              assert.equal(page.has_more, offset + slice.length < expected.length, qs);
            }
          },
        ),
        { numRuns: 12 },
      );
    });

    test('property: a filtered mirror kept with updated_since + include_deleted converges on exactly the subset served', async () => {
      const kind = 'avisos-correctivo';
      await fc.assert(
        fc.asyncProperty(versionsArb(kind), queryArb(kind), async (versions, filters) => {
          const { company, key } = await companyWithKey(store, `mirror${companies++}`);
          const get = getWith(key);
          const mirror = new Map<string, Item>();
          let since: string | undefined;
          for (const [v, records] of versions.entries()) {
            await loadVersions(company.id, kind, [records], v);
            const feed = await readAll(get, `/v1/${kind}?${queryString({ ...filters, include_deleted: 'true', updated_since: since })}`);
            for (const item of feed) {
              if (item.eliminado) mirror.delete(item.id_erp);
              else mirror.set(item.id_erp, item);
              if (since === undefined || item.actualizado_at > since) since = item.actualizado_at;
            }
          }
          const served = await readAll(get, `/v1/${kind}?${queryString(filters)}`);
          assert.deepEqual(
            [...mirror.values()].sort((a, b) => (a.id_erp < b.id_erp ? -1 : 1)),
            served.sort((a, b) => (a.id_erp < b.id_erp ? -1 : 1)),
          );
        }),
        { numRuns: 10 },
      );
    });

    test('a filtered page asked for again (copied, then gathered, then from blocks) is the same bytes under the same strong ETag, and 304s', async () => {
      const { company, key } = await companyWithKey(store, 'gathered-etag');
      const kind = 'avisos-correctivo';
      // 300 notices, a third of them open: the page below spans two blocks of 64 matches.
      const n = (i: number) => ({ codigo: `AV-${i}`, fecha: null, cliente_id_erp: `C${i % 7}`, obra_id_erp: null, descripcion: `Aviso ñ ${i} ${'x'.repeat(i % 50)}`, estado: i % 3 === 0 ? 'abierto' : 'cerrado', prioridad: null });
      await loadVersions(company.id, kind, [Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`A${String(i).padStart(3, '0')}`, n(i)]))]);
      const url = `${server.baseUrl}/v1/${kind}?estado=abierto&limit=90&offset=20`;
      const asks = [];
      for (let ask = 0; ask < 3; ask++) asks.push(await request(url, { headers: { ...bearer(key), 'accept-encoding': 'identity' } }));
      for (const res of asks) assert.equal(res.status, 200);
      const etag = String(asks[0]!.headers.etag);
      assert.match(etag, /^"/, 'a strong ETag');
      for (const [i, res] of asks.entries()) {
        assert.equal(res.text(), asks[0]!.text(), `ask ${i + 1}: the same bytes`);
        assert.equal(res.headers.etag, etag, `ask ${i + 1}: the same ETag`);
      }
      assert.equal(asks[0]!.json().items.length, 80);
      const again = await request(url, { headers: { ...bearer(key), 'if-none-match': etag } });
      assert.equal(again.status, 304);
    });

    test('a mirror of one customer\'s open notices: records entering, leaving, changing inside the subset and removed', async () => {
      const { company, key } = await companyWithKey(store, `mirror-story`);
      const get = getWith(key);
      const kind = 'avisos-correctivo';
      const n = (estado: string, cliente = 'C1', desc = 'x') => ({ codigo: null, fecha: null, cliente_id_erp: cliente, obra_id_erp: null, descripcion: desc, estado, prioridad: null });
      const filter = 'cliente_id_erp=C1&estado=abierto';
      const versions = [
        { A1: n('abierto'), A2: n('abierto'), A3: n('cerrado'), A4: n('abierto', 'C2') },
        // A1 leaves (closed), A3 enters (opened), A2 changes inside, A5 is new inside.
        { A1: n('cerrado'), A2: n('abierto', 'C1', 'changed'), A3: n('abierto'), A4: n('abierto', 'C2'), A5: n('abierto') },
        // A2 removed, A4 moves into the customer, A5 unchanged.
        { A1: n('cerrado'), A3: n('abierto'), A4: n('abierto'), A5: n('abierto') },
      ];
      const mirror = new Map<string, Item>();
      let since: string | undefined;
      const feeds: string[][] = [];
      let at = Date.UTC(2026, 5, 1);
      for (const records of versions) {
        const rows = Object.entries(records).map(([id, values], i) => toInput(kind, id, values, i + 2));
        await replaceRecords(store, { companyId: company.id, kind, columns: ['ID', 'VALUES'], at: (at += DAY) }, rows);
        const feed = await readAll(get, `/v1/${kind}?${filter}&include_deleted=true${since ? `&updated_since=${since}` : ''}`);
        feeds.push(feed.map((i) => `${i.id_erp}${i.eliminado ? ' x' : ''}`));
        for (const item of feed) {
          if (item.eliminado) mirror.delete(item.id_erp);
          else mirror.set(item.id_erp, item);
          if (!since || item.actualizado_at > since) since = item.actualizado_at;
        }
      }
      // The first feed carries every record (non-matching ones as tombstones); later feeds only changes.
      assert.deepEqual(feeds[0], ['A1', 'A2', 'A3 x', 'A4 x']);
      assert.deepEqual(feeds[1]!.filter((e) => e !== 'A4 x'), ['A1 x', 'A2', 'A3', 'A5']);
      // updated_since is inclusive: the last feed repeats the second import's changes, then the third's.
      assert.deepEqual(feeds[2]!.filter((e) => !e.startsWith('A5')), ['A1 x', 'A3', 'A2 x', 'A4']);
      const served = await readAll(get, `/v1/${kind}?${filter}`);
      assert.deepEqual([...mirror.keys()].sort(), ['A3', 'A4', 'A5']);
      const byId = (a: Item, b: Item) => (a.id_erp < b.id_erp ? -1 : 1);
      assert.deepEqual([...mirror.values()].sort(byId), served.sort(byId));
    });

    test('related records: a customer\'s works and notices, a work\'s notices, and 404 for a missing parent', async () => {
      const { company, key } = await companyWithKey(store, `related`);
      const get = getWith(key);
      const at = Date.UTC(2026, 3, 1);
      await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: ['ID'], at }, [
        { fields: ['C1', 'Uno', null, null, null, null], cells: ['C1'], line: 2 },
        { fields: ['C/2', 'Dos', null, null, null, null], cells: ['C/2'], line: 3 },
      ]);
      await replaceRecords(store, { companyId: company.id, kind: 'obras', columns: ['ID'], at }, [
        { fields: ['O1', null, 'Obra 1', null, 'C1', 'abierta'], cells: ['O1'], line: 2 },
        { fields: ['O2', null, 'Obra 2', null, 'C/2', 'abierta'], cells: ['O2'], line: 3 },
        { fields: ['O3', null, 'Obra 3', null, 'C1', 'cerrada'], cells: ['O3'], line: 4 },
      ]);
      await replaceRecords(store, { companyId: company.id, kind: 'avisos-correctivo', columns: ['ID'], at }, [
        { fields: ['A1', null, null, 'C1', 'O1', null, 'abierto', null], cells: ['A1'], line: 2 },
        { fields: ['A2', null, null, 'C/2', 'O2', null, 'abierto', null], cells: ['A2'], line: 3 },
        { fields: ['A3', null, null, 'C1', 'O3', null, 'cerrado', null], cells: ['A3'], line: 4 },
      ]);
      const ids = (page: { items: Item[] }) => page.items.map((i) => i.id_erp);
      assert.deepEqual(ids(await get('/v1/clientes/C1/obras')), ['O1', 'O3']);
      assert.deepEqual(ids(await get('/v1/clientes/C%2F2/obras')), ['O2']);
      assert.deepEqual(ids(await get('/v1/clientes/C1/avisos-correctivo?estado=abierto')), ['A1']);
      assert.deepEqual(ids(await get('/v1/obras/O3/avisos-correctivo?fields=estado')), ['A3']);
      assert.deepEqual((await get('/v1/obras/O3/avisos-correctivo?fields=estado')).items[0], { id_erp: 'A3', estado: 'cerrado', actualizado_at: new Date(at).toISOString() });
      // Every list parameter applies; a filter on the same field as the path ANDs with it.
      const page = await get('/v1/clientes/C1/obras?limit=1&offset=1');
      assert.deepEqual([page.total, page.has_more, ids(page)], [2, false, ['O3']]);
      assert.equal((await get('/v1/clientes/C1/obras?cliente_id_erp=C%2F2')).total, 0);
      const missing = await request(`${server.baseUrl}/v1/clientes/NOPE/obras`, { headers: bearer(key) });
      assert.equal(missing.status, 404);
      assert.equal(missing.json().error, 'not_found');
      assert.match(missing.json().message, /clientes.*NOPE/);
      // A customer with no works: an empty list, not a 404.
      await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: ['ID'], at: at + DAY }, [
        { fields: ['C1', 'Uno', null, null, null, null], cells: ['C1'], line: 2 },
        { fields: ['C9', 'Nueve', null, null, null, null], cells: ['C9'], line: 3 },
      ]);
      assert.equal((await get('/v1/clientes/C9/obras')).total, 0);
      const unauth = await request(`${server.baseUrl}/v1/clientes/C1/obras`);
      assert.equal(unauth.status, 401);
      // A pinned snapshot is filtered with its own indexes, while a newer one is live.
      const pinned = (await get('/v1/avisos-correctivo?estado=abierto')).snapshot;
      await replaceRecords(store, { companyId: company.id, kind: 'avisos-correctivo', columns: ['ID'], at: at + DAY }, [
        { fields: ['A1', null, null, 'C1', 'O1', null, 'cerrado', null], cells: ['A1'], line: 2 },
      ]);
      assert.deepEqual(ids(await get(`/v1/avisos-correctivo?estado=abierto&snapshot=${pinned}`)), ['A1', 'A2']);
      assert.deepEqual(ids(await get('/v1/avisos-correctivo?estado=abierto')), []);
    });

    test('fields on details and lists: the keys asked for, in item order, id_erp and actualizado_at always; ETags follow the query', async () => {
      const { company, key } = await companyWithKey(store, `fields`);
      const get = getWith(key);
      const at = Date.UTC(2026, 3, 1);
      await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: ['CODIGO', 'NOMBRE'], at }, [
        { fields: ['C1', 'Ferretería Ibáñez', 'B1', 'a@b.es', null, 'C/ Mayor'], cells: ['C1', 'Ferretería Ibáñez'], line: 2 },
      ]);
      const time = new Date(at).toISOString();
      assert.deepEqual((await get('/v1/clientes/C1?fields=nombre,data')).item, { id_erp: 'C1', nombre: 'Ferretería Ibáñez', data: { CODIGO: 'C1', NOMBRE: 'Ferretería Ibáñez' }, actualizado_at: time });
      assert.equal(
        (await request(`${server.baseUrl}/v1/clientes/C1?fields=direccion,nombre`, { headers: bearer(key) })).text(),
        `{"ok":true,"item":{"id_erp":"C1","nombre":"Ferretería Ibáñez","direccion":"C/ Mayor","actualizado_at":"${time}"}}`,
      );
      assert.deepEqual((await get('/v1/clientes?fields=id_erp')).items, [{ id_erp: 'C1', actualizado_at: time }]);
      assert.deepEqual((await get('/v1/clientes?q=ferr%20IBA')).items.map((i: Item) => i.id_erp), ['C1']);
      assert.deepEqual((await get('/v1/clientes?q=ibanez')).total, 1);
      // Accents and capitals on the query's side too ("Ñ matches n"): the import folded the name on its bytes.
      assert.deepEqual((await get(`/v1/clientes?q=${encodeURIComponent('FERRETERÍA IBÁÑ')}`)).items.map((i: Item) => i.id_erp), ['C1']);
      assert.deepEqual((await get('/v1/clientes?q=b1')).total, 1, 'a prefix of the whole cif');
      assert.deepEqual((await get('/v1/clientes?q=mayor')).total, 0, 'direccion is not searched');
      const etag = async (qs: string) => (await request(`${server.baseUrl}/v1/clientes${qs}`, { headers: bearer(key) })).headers.etag;
      const tags = await Promise.all(['', '?fields=nombre', '?fields=cif', '?q=ferr', '?q=iba', '?nombre=x'].map(etag));
      assert.equal(new Set(tags).size, tags.length, 'each subset has its own ETag');
      assert.equal(await etag('?estado_x=1&fields=nombre'), tags[1], 'unknown parameters change nothing');
      assert.equal(await etag('?fields=nombre,id_erp'), tags[1], 'the ETag follows the normalised query');
      assert.notEqual(
        (await request(`${server.baseUrl}/v1/clientes/C1?fields=nombre`, { headers: bearer(key) })).headers.etag,
        (await request(`${server.baseUrl}/v1/clientes/C1`, { headers: bearer(key) })).headers.etag,
      );
    });

    test('thin chunks and indexes are written with each snapshot and swept with it', async () => {
      const { company } = await companyWithKey(store, `sweep`);
      const rows = (name: string) => [{ fields: ['C1', name, null, null, null, null], cells: ['C1'], line: 2 }];
      const first = await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: ['ID'], at: Date.UTC(2026, 1, 1) }, rows('Uno'));
      assert.ok(await store.readIndex(first.snapshotId, 'q'));
      assert.ok(await store.readIndex(first.snapshotId, 'eq:nombre'));
      assert.equal((await store.readThinChunks(first.snapshotId, 0, 0)).length, 1);
      assert.equal((await store.snapshotMeta(first.snapshotId))!.indexed, true);
      await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: ['ID'], at: Date.UTC(2026, 1, 2) }, rows('Dos'));
      await store.sweepSnapshots(Date.now() + 60_000);
      assert.equal(await store.readIndex(first.snapshotId, 'q'), null);
      assert.deepEqual(await store.readThinChunks(first.snapshotId, 0, 0), []);
    });

    test('bad subset parameters are 400 invalid_parameter naming them', async () => {
      const { company, key } = await companyWithKey(store, `bad`);
      await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns: ['ID'], at: Date.UTC(2026, 1, 1) }, [
        { fields: ['C1', 'Uno', null, null, null, null], cells: ['C1'], line: 2 },
      ]);
      const cases: [string, RegExp][] = [
        ['/v1/clientes?estado=abierto', /"estado".*clientes/],
        ['/v1/clientes?codigo=1', /"codigo"/],
        ['/v1/articulos?fecha_desde=2026-01-01', /"fecha_desde"/],
        ['/v1/avisos-correctivo?precio_min=1', /"precio_min"/],
        ['/v1/articulos?precio=1', /"precio"/],
        ['/v1/avisos-correctivo?fecha=2026-01-01', /"fecha"/],
        ['/v1/avisos-correctivo?fecha_desde=2026-02-30', /"fecha_desde".*YYYY-MM-DD/],
        ['/v1/avisos-correctivo?fecha_hasta=2026-1-1', /"fecha_hasta"/],
        ['/v1/articulos?precio_min=12,5', /"precio_min".*number/],
        ['/v1/articulos?precio_max=abc', /"precio_max"/],
        ['/v1/articulos?precio_max=1&precio_max=2', /"precio_max".*more than once/],
        ['/v1/clientes?q=', /"q"/],
        ['/v1/clientes?q=%20-%20', /"q"/],
        ['/v1/clientes?q=a&q=b', /"q".*more than once/],
        ['/v1/clientes?fields=nombre,precio', /"fields".*"precio"/],
        ['/v1/clientes?fields=', /"fields"/],
        ['/v1/clientes/C1?fields=nope', /"fields".*"nope"/],
        ['/v1/sandbox/clientes?estado=x', /"estado"/],
      ];
      for (const [path, message] of cases) {
        const res = await request(`${server.baseUrl}${path}`, { headers: bearer(key) });
        assert.equal(res.status, 400, path);
        assert.equal(res.json().error, 'invalid_parameter', path);
        assert.match(res.json().message, message, path);
      }
    });

    test('sandbox: the same filters over its fixed data, and its related paths', async () => {
      const get = getWith(null);
      for (const kind of ['clientes', 'avisos-correctivo', 'articulos', 'obras'] as const) {
        const all = await readAll(get, `/v1/sandbox/${kind}`);
        const sample = all[3]!;
        const field = KIND_SPECS[kind].fields.find((f) => f.type === 'string' && f.name !== 'id_erp')!.name;
        const value = (sample[field] as string | null) ?? '';
        const expected = all.filter((i) => referenceMatch(kind, i, { [field]: value }));
        const page = await get(`/v1/sandbox/${kind}?${queryString({ [field]: value, limit: 1000 })}`);
        assert.equal(page.sandbox, true);
        assert.deepEqual(page.items, expected);
        const word = words(String(sample.nombre ?? sample.id_erp))[0]!.slice(0, 3);
        const q = await get(`/v1/sandbox/${kind}?${queryString({ q: word, limit: 1000, fields: 'id_erp' })}`);
        assert.deepEqual(q.items.map((i: Item) => i.id_erp), all.filter((i) => referenceMatch(kind, i, { q: word })).map((i) => i.id_erp));
        assert.ok(q.total >= 1);
      }
      const works = await readAll(get, '/v1/sandbox/obras');
      const w = works[0]!;
      const related = await get(`/v1/sandbox/clientes/${encodeURIComponent(w.cliente_id_erp as string)}/obras`);
      assert.deepEqual(related.items, works.filter((x) => x.cliente_id_erp === w.cliente_id_erp));
      const missing = await request(`${server.baseUrl}/v1/sandbox/obras/NOPE/avisos-correctivo`);
      assert.equal(missing.status, 404);
    });
  });
}
