/**
 * The Store contract below the API: snapshots (staging, change detection,
 * byte order, chunk layout, publish, discard, sweep), companies, users,
 * credentials, settings and mappings. Run once per store; the import queue
 * has its own suite (store-queue-suite.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateCredential } from '../../src/domain/api-keys.js';
import { compareUtf8, CURRENT_HASH, hashBody } from '../../src/domain/item-renderer.js';
import type { Kind } from '../../src/domain/kinds.js';
import { writeRecords } from '../../src/snapshots/write-records.js';
import { openStore } from '../../src/store/open-store.js';
import { ConflictError, DuplicateIdError, SEGMENT_CLAIM_EXPIRES_MS, type ChunkSegment, type SnapshotSpec, type StagedRecord, type Store } from '../../src/store/store.js';
import type { StoreFactory } from '../helpers/stores.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

const T1 = Date.parse('2026-01-10T08:00:00.000Z');
const T2 = Date.parse('2026-02-20T09:30:00.500Z');
const T3 = Date.parse('2026-03-01T00:00:00.001Z');

/** A staged record whose item is `{"id_erp":…,"v":…,"actualizado_at":"…"}`. */
export function staged(idErp: string, v = 'x', line = 2): StagedRecord {
  const body = Buffer.from(`{"id_erp":${JSON.stringify(idErp)},"v":${JSON.stringify(v)},"actualizado_at":"`);
  return { idErp, hash: hashBody(body), body, line };
}

export async function* batches(...parts: StagedRecord[][]): AsyncGenerator<StagedRecord[]> {
  for (const part of parts) yield part;
}

export const spec = (companyId: number, at: number, kind: Kind = 'clientes', importId: number | null = null): SnapshotSpec => ({
  companyId, kind, importId, at, columns: ['CODIGO', 'NOMBRE'], hashAlgorithm: CURRENT_HASH,
});

interface Item { id_erp: string; v: string; actualizado_at: string }

/** Every item of a snapshot, in list order, read through its chunks. */
async function items(store: Store, snapshotId: number): Promise<Item[]> {
  const meta = (await store.snapshotMeta(snapshotId))!;
  if (meta.chunkStarts.length === 0) return [];
  const chunks = await store.readChunks(snapshotId, 0, meta.chunkStarts.length - 1);
  return chunks.flatMap((c) =>
    Array.from({ length: c.offsets.length - 1 }, (_, k) =>
      JSON.parse(c.bytes.subarray(c.offsets[k]!, c.offsets[k + 1]! - 1).toString('utf8')),
    ),
  );
}

const at = (item: Item) => Date.parse(item.actualizado_at);

export function storeSuite(factory: StoreFactory) {
  describe(`Store contract (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let databaseUrl: string;
    let cleanup: () => Promise<void>;
    let slugs = 0;
    const company = async () => (await store.createCompany(`co-${++slugs}`, `Company ${slugs}`)).id;
    const publish = async (companyId: number, when: number, records: StagedRecord[], kind: Kind = 'clientes') => {
      const s = await store.writeSnapshot(spec(companyId, when, kind), batches(records));
      await store.publishSnapshot(s.snapshotId);
      return s;
    };
    /**
     * `findLiveRecord` once it names `snapshotId` (published through another connection):
     * SQLite reads data_version once per turn of the event loop, so any request that arrives
     * after the commit is handled in a later turn and sees it; PostgreSQL learns by a
     * notification, delivered at commit but read asynchronously: within moments.
     */
    const liveOnceSeen = async (companyId: number, idErp: string, snapshotId: number) => {
      await new Promise((r) => setImmediate(r));
      const deadline = Date.now() + (store.backend === 'sqlite' ? 0 : HANG_GUARD_MS);
      let live = await store.findLiveRecord(companyId, 'clientes', idErp);
      while (live?.snapshotId !== snapshotId && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
        live = await store.findLiveRecord(companyId, 'clientes', idErp);
      }
      return live;
    };

    before(async () => {
      ({ store, databaseUrl, cleanup } = await factory.create());
    });
    after(async () => {
      await cleanup?.();
    });

    test('migrate is idempotent; ping answers', async () => {
      await store.migrate();
      await store.ping();
    });

    test('companies: create, look up, list by slug, conflict on a repeated slug', async () => {
      const zeta = await store.createCompany('zeta', 'Zeta S.L.');
      const alpha = await store.createCompany('alpha', 'Alpha S.A.');
      assert.ok(zeta.createdAt instanceof Date && Math.abs(zeta.createdAt.getTime() - Date.now()) < 60_000);
      assert.deepEqual(await store.companyBySlug('zeta'), zeta);
      assert.deepEqual(await store.companyById(alpha.id), alpha);
      assert.equal(await store.companyBySlug('nope'), null);
      assert.equal(await store.companyById(999_999), null);
      await assert.rejects(store.createCompany('zeta', 'Again'), ConflictError);
      const listed = (await store.listCompanies()).map((c) => c.slug);
      assert.deepEqual(listed, [...listed].sort(compareUtf8));
      assert.ok(listed.includes('alpha') && listed.includes('zeta'));
    });

    test('users: create, look up by email and id, conflict on a repeated email', async () => {
      const companyId = await company();
      const user = await store.createUser({ companyId, email: 'ana@example.com', passwordHash: 'scrypt$x' });
      assert.deepEqual({ ...user, createdAt: null }, { id: user.id, companyId, email: 'ana@example.com', passwordHash: 'scrypt$x', createdAt: null });
      assert.deepEqual(await store.userByEmail('ana@example.com'), user);
      assert.deepEqual(await store.userById(user.id), user);
      assert.equal(await store.userByEmail('nobody@example.com'), null);
      await assert.rejects(store.createUser({ companyId, email: 'ana@example.com', passwordHash: 'y' }), ConflictError);
    });

    test('credentials: create, look up by prefix, list by scope, revoke idempotently', async () => {
      const companyId = await company();
      const read = generateCredential('read');
      const upload = generateCredential('upload');
      const a = await store.createCredential({ companyId, scope: 'read', prefix: read.prefix, secretHash: read.secretHash, label: 'BI' });
      await store.createCredential({ companyId, scope: 'upload', prefix: upload.prefix, secretHash: upload.secretHash, label: null });
      assert.equal(a.scope, 'read');
      assert.equal(a.label, 'BI');
      assert.equal(a.lastUsedAt, null);
      assert.equal(a.revokedAt, null);
      const found = (await store.credentialByPrefix(read.prefix))!;
      assert.deepEqual(found, a);
      assert.ok(Buffer.from(found.secretHash).equals(read.secretHash));
      assertOwnMemory(found.secretHash, 'a secret hash'); // kept by the credentials cache
      assert.equal(await store.credentialByPrefix('zzzzzzzz'), null);
      assert.deepEqual((await store.listCredentials(companyId, 'read')).map((c) => c.prefix), [read.prefix]);
      assert.deepEqual((await store.listCredentials(companyId, 'upload')).map((c) => c.prefix), [upload.prefix]);
      const revoked = (await store.revokeCredential(read.prefix))!;
      assert.ok(revoked.revokedAt instanceof Date);
      await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual((await store.revokeCredential(read.prefix))!.revokedAt, revoked.revokedAt, 'revoking again keeps the first time');
      assert.equal(await store.revokeCredential('zzzzzzzz'), null);
    });

    test('touchCredentials records last use in one batch and never moves it backwards', async () => {
      const companyId = await company();
      const k1 = generateCredential('read');
      const k2 = generateCredential('read');
      for (const k of [k1, k2]) {
        await store.createCredential({ companyId, scope: 'read', prefix: k.prefix, secretHash: k.secretHash, label: null });
      }
      const lastUsed = async (prefix: string) => (await store.credentialByPrefix(prefix))!.lastUsedAt?.getTime() ?? null;
      await store.touchCredentials(new Map());
      await store.touchCredentials(new Map([[k1.prefix, T2], [k2.prefix, T1], ['unknown1', T1]]));
      assert.equal(await lastUsed(k1.prefix), T2);
      assert.equal(await lastUsed(k2.prefix), T1);
      await store.touchCredentials(new Map([[k1.prefix, T1], [k2.prefix, T3]]));
      assert.equal(await lastUsed(k1.prefix), T2, 'an older time is ignored');
      assert.equal(await lastUsed(k2.prefix), T3);
    });

    test('settings: initSetting keeps the first value, also across connections', async () => {
      assert.equal(await store.getSetting('session_secret'), null);
      assert.equal(await store.initSetting('session_secret', 'first'), 'first');
      assert.equal(await store.initSetting('session_secret', 'second'), 'first');
      assert.equal(await store.getSetting('session_secret'), 'first');
      const other = await openStore(databaseUrl);
      try {
        const [a, b] = await Promise.all([store.initSetting('race', 'one'), other.initSetting('race', 'two')]);
        assert.equal(a, b);
        assert.ok(a === 'one' || a === 'two');
      } finally {
        await other.close();
      }
    });

    test('mappings: empty by default, replaced whole, per company and kind, key order kept', async () => {
      const companyId = await company();
      assert.deepEqual(await store.getMapping(companyId, 'clientes'), {});
      await store.setMapping(companyId, 'clientes', { nombre: 'RAZON', cif: 'NIF', email: 'CORREO' });
      const got = await store.getMapping(companyId, 'clientes');
      assert.deepEqual(Object.entries(got), [['nombre', 'RAZON'], ['cif', 'NIF'], ['email', 'CORREO']]);
      await store.setMapping(companyId, 'clientes', { cif: 'CIF' });
      assert.deepEqual(await store.getMapping(companyId, 'clientes'), { cif: 'CIF' });
      assert.deepEqual(await store.getMapping(companyId, 'articulos'), {});
    });

    test('a written snapshot is not live until published', async () => {
      const companyId = await company();
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), null);
      const s = await store.writeSnapshot(spec(companyId, T1), batches([staged('A'), staged('B')], [staged('C')]));
      assert.deepEqual(s.changes, { total: 3, inserted: 3, updated: 0, unchanged: 0, deleted: 0, deletedExamples: [] });
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), null);
      assert.equal((await store.snapshotMeta(s.snapshotId))!.count, 3, 'a staged snapshot is readable by id');
      await store.publishSnapshot(s.snapshotId);
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), s.snapshotId);
      assert.equal(await store.liveSnapshotId(companyId, 'articulos'), null);
      await assert.rejects(store.publishSnapshot(s.snapshotId), 'publishing twice is refused');
    });

    test('change detection: unchanged records keep actualizado_at, changed and new get `at`, missing ones go', async () => {
      const companyId = await company();
      const s1 = await publish(companyId, T1, [staged('A', '1'), staged('B', '1'), staged('C', '1'), staged('D', '1')]);
      const s2 = await store.writeSnapshot(spec(companyId, T2), batches([staged('E', '1'), staged('B', '2')], [staged('A', '1')]));
      assert.deepEqual(s2.changes, { total: 3, inserted: 1, updated: 1, unchanged: 1, deleted: 2, deletedExamples: ['C', 'D'] });
      await store.publishSnapshot(s2.snapshotId);
      const list = await items(store, s2.snapshotId);
      assert.deepEqual(list.map((i) => [i.id_erp, i.v, at(i)]), [['A', '1', T1], ['B', '2', T2], ['E', '1', T2]]);
      const a = (await store.findRecord(s2.snapshotId, 'A'))!;
      assert.deepEqual({ pos: a.pos, at: a.actualizadoAt }, { pos: 0, at: T1 });
      assert.ok(Buffer.from(a.hash).equals(staged('A', '1').hash));
      // Kept by the live record cache: a hash cut out of a shared buffer would keep all of it alive.
      assertOwnMemory(a.hash, 'a record hash');
      assert.equal(await store.findRecord(s2.snapshotId, 'C'), null);
      assert.equal((await store.findRecord(s1.snapshotId, 'C'))!.actualizadoAt, T1, 'the superseded snapshot stays readable');
      // The same content again changes nothing, and keeps every time.
      const s3 = await publish(companyId, T3, [staged('A', '1'), staged('B', '2'), staged('E', '1')]);
      assert.deepEqual(s3.changes, { total: 3, inserted: 0, updated: 0, unchanged: 3, deleted: 0, deletedExamples: [] });
      assert.deepEqual((await items(store, s3.snapshotId)).map(at), [T1, T2, T2]);
      // Another company's or kind's records are never compared.
      const other = await publish(await company(), T2, [staged('A', '1')]);
      assert.equal(other.changes.inserted, 1);
      assert.equal((await publish(companyId, T2, [staged('A', '1')], 'obras')).changes.inserted, 1);
    });

    test('record hashes follow the live snapshot: a chain begun with MD5 goes on with MD5, a new one is SHA-256', async () => {
      const companyId = await company();
      assert.equal(await store.nextHashAlgorithm(companyId, 'clientes'), 'sha256');
      // A chain as snapshots written before SHA-256 left it (the migration marks those 'md5').
      const md5 = (idErp: string, v: string): StagedRecord => {
        const r = staged(idErp, v);
        return { ...r, hash: hashBody(r.body, 'md5') };
      };
      const old = { ...spec(companyId, T1), hashAlgorithm: 'md5' as const };
      const s1 = await store.writeSnapshot(old, batches([md5('A', '1'), md5('B', '1')]));
      await store.publishSnapshot(s1.snapshotId);
      assert.equal(await store.nextHashAlgorithm(companyId, 'clientes'), 'md5');
      assert.equal(await store.nextHashAlgorithm(companyId, 'obras'), 'sha256', 'per company and kind');
      // Hashed the same way, unchanged records are found.
      const s2 = await store.writeSnapshot({ ...old, at: T2 }, batches([md5('A', '1'), md5('B', '2')]));
      assert.deepEqual(s2.changes, { total: 2, inserted: 0, updated: 1, unchanged: 1, deleted: 0, deletedExamples: [] });
      await store.discardSnapshot(s2.snapshotId);
      // Hashed another way, they could not be: refused, and nothing is left behind.
      await assert.rejects(
        store.writeSnapshot(spec(companyId, T2), batches([staged('A', '1')])),
        /hashed with sha256 cannot follow the live one, hashed with md5/,
      );
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), s1.snapshotId);
      const next = await store.writeSnapshot({ ...old, at: T3 }, batches([md5('A', '1')]));
      for (let id = s1.snapshotId + 1; id < next.snapshotId; id++) assert.equal(await store.snapshotMeta(id), null, `snapshot ${id}`);
      await store.discardSnapshot(next.snapshotId);
      // writeRecords (and so every import) asks the store first, and hashes as the chain does.
      const s3 = await writeRecords(store, { companyId, kind: 'clientes', columns: ['CODIGO'], at: T3 }, [[{ fields: ['A'], cells: ['A'], line: 2 }]]);
      assert.equal(s3.changes.total, 1);
      assert.deepEqual((await store.findRecord(s3.snapshotId, 'A'))!.hash.length, 16);
      await store.publishSnapshot(s3.snapshotId);
      assert.equal(await store.nextHashAlgorithm(companyId, 'clientes'), 'md5');
      // A new chain (another kind) is SHA-256 from its first snapshot.
      const o1 = await writeRecords(store, { companyId, kind: 'obras', columns: ['CODIGO'], at: T1 }, [[{ fields: ['O1'], cells: ['O1'], line: 2 }]]);
      await store.publishSnapshot(o1.snapshotId);
      assert.equal(await store.nextHashAlgorithm(companyId, 'obras'), 'sha256');
    });

    test('id_erp is in byte order (10, 9, B, Z-1, a, ä), after actualizado_at', async () => {
      const companyId = await company();
      const ids = ['a', 'B', 'ä', '10', '9', 'Z-1'];
      const s = await publish(companyId, T1, ids.map((id, i) => staged(id, 'v', i + 2)));
      assert.deepEqual((await items(store, s.snapshotId)).map((i) => i.id_erp), ['10', '9', 'B', 'Z-1', 'a', 'ä']);
      assert.equal((await store.findRecord(s.snapshotId, 'ä'))!.pos, 5);
      // Characters that need escaping in bulk loads, and ones beyond the BMP.
      const odd = ['tab\there', 'back\\slash', 'quote"d', 'line\nbreak', 'cr\rx', '😀', 'ÿ', '\u0001', ' lead', 'Ω'];
      const s2 = await publish(companyId, T2, [...ids, ...odd].map((id) => staged(id, id === 'a' ? 'changed' : 'v')));
      const order = (await items(store, s2.snapshotId)).map((i) => i.id_erp);
      const changed = [...odd, 'a'].sort(compareUtf8);
      assert.deepEqual(order, ['10', '9', 'B', 'Z-1', 'ä', ...changed]);
      for (const id of odd) assert.ok(await store.findRecord(s2.snapshotId, id), JSON.stringify(id));
      assert.equal(await store.findRecord(s2.snapshotId, 'nul\0'), null);
    });

    test('chunk layout: chunkStarts, offsets and the timeline describe the items', async () => {
      const companyId = await company();
      const ids = Array.from({ length: 700 }, (_, i) => `R${String(i).padStart(5, '0')}`);
      // Bodies of about 600 bytes: chunks close on bytes (64 KiB) before 256 items.
      const big = (id: string, v: string) => staged(id, v + 'é'.repeat(300));
      await publish(companyId, T1, ids.map((id) => big(id, '1')));
      const changedIds = new Set(ids.filter((_, i) => i % 7 === 0));
      const s = await publish(companyId, T2, ids.map((id) => big(id, changedIds.has(id) ? '2' : '1')));
      const meta = (await store.snapshotMeta(s.snapshotId))!;
      assert.equal(meta.id, s.snapshotId);
      assert.match(meta.publicId, /^[0-9a-f]{16}$/);
      assert.deepEqual([meta.companyId, meta.kind, meta.count], [companyId, 'clientes', 700]);
      assert.ok(Math.abs(meta.createdAt - Date.now()) < 60_000);
      assert.deepEqual(meta.columns, ['CODIGO', 'NOMBRE']);
      assert.deepEqual(meta.timeline, [{ at: T1, firstPos: 0 }, { at: T2, firstPos: 700 - changedIds.size }]);
      assert.ok(meta.chunkStarts.length > 3);
      assert.equal(meta.chunkStarts[0], 0);
      const chunks = await store.readChunks(s.snapshotId, 0, meta.chunkStarts.length - 1);
      assert.equal(chunks.length, meta.chunkStarts.length);
      let pos = 0;
      const seen: string[] = [];
      for (const [i, c] of chunks.entries()) {
        assert.equal(c.chunkNo, i);
        assert.equal(c.firstPos, meta.chunkStarts[i]);
        assert.equal(c.firstPos, pos);
        const n = c.offsets.length - 1;
        assert.ok(n >= 1 && n <= 256);
        assert.equal(c.offsets[0], 0);
        assert.equal(c.offsets[n], c.bytes.length + 1);
        const parsed = JSON.parse(`[${c.bytes.toString('utf8')}]`) as Item[];
        assert.equal(parsed.length, n, 'items are joined by commas');
        seen.push(...parsed.map((p) => p.id_erp));
        pos += n;
      }
      assert.equal(pos, 700);
      const unchanged = ids.filter((id) => !changedIds.has(id));
      assert.deepEqual(seen, [...unchanged, ...changedIds]);
      // Kept by the read cache one by one: a chunk cut out of a larger result would keep its neighbours alive.
      for (const c of chunks) assertOwnMemory(c.bytes, `chunk ${c.chunkNo}`);
      assert.deepEqual((await store.readChunks(s.snapshotId, 1, 2)).map((c) => c.chunkNo), [1, 2]);
      assert.deepEqual(await store.readChunks(s.snapshotId, meta.chunkStarts.length, meta.chunkStarts.length + 5), []);
      // One item without its chunk (a detail's miss), shared chunks of the first snapshot included: the very bytes.
      for (const c of chunks) {
        const n = c.offsets.length - 1;
        for (let k = 0; k < n; k++) {
          const expected = c.bytes.subarray(c.offsets[k]!, c.offsets[k + 1]! - 1);
          assert.deepEqual(await store.readItem(s.snapshotId, c.chunkNo, k), expected, `chunk ${c.chunkNo} item ${k}`);
          if (store.readItemNow) assert.deepEqual(store.readItemNow(s.snapshotId, c.chunkNo, k), expected);
        }
        assert.equal(await store.readItem(s.snapshotId, c.chunkNo, n), null, 'past the chunk');
      }
      assert.equal(await store.readItem(s.snapshotId, 0, -1), null);
      assert.equal(await store.readItem(s.snapshotId, meta.chunkStarts.length, 0), null);
      // Several items in one call (a filtered page's scattered matches), in the order asked for, absent ones null.
      const refs = chunks.flatMap((c) => Array.from({ length: c.offsets.length - 1 }, (_, k) => ({ chunkNo: c.chunkNo, index: k }))).reverse();
      const expected = refs.map((r) => {
        const c = chunks[r.chunkNo]!;
        return c.bytes.subarray(c.offsets[r.index]!, c.offsets[r.index + 1]! - 1);
      });
      const many = await store.readItems(s.snapshotId, refs);
      assert.deepEqual(many, expected);
      for (const item of many) assertOwnMemory(item!, 'an item read with others');
      const odd = [refs[3]!, { chunkNo: 0, index: -1 }, { chunkNo: meta.chunkStarts.length, index: 0 }, { chunkNo: 1, index: 10_000 }, refs[3]!];
      assert.deepEqual(await store.readItems(s.snapshotId, odd), [expected[3], null, null, null, expected[3]]);
      assert.deepEqual(await store.readItems(s.snapshotId, []), []);
    });

    test('an empty snapshot has no chunks and counts every live record as deleted', async () => {
      const companyId = await company();
      await publish(companyId, T1, [staged('A'), staged('B')]);
      const s = await publish(companyId, T2, []);
      assert.deepEqual(s.changes, { total: 0, inserted: 0, updated: 0, unchanged: 0, deleted: 2, deletedExamples: ['A', 'B'] });
      const meta = (await store.snapshotMeta(s.snapshotId))!;
      assert.deepEqual([meta.count, meta.chunkStarts.length, meta.timeline.length], [0, 0, 0]);
    });

    test('repeated id_erp: DuplicateIdError names ids and lines, and nothing is left behind', async () => {
      const companyId = await company();
      const before = await publish(companyId, T1, [staged('A')]);
      const failing = store.writeSnapshot(
        spec(companyId, T2),
        batches([staged('a', 'x', 2), staged('b', 'x', 3)], [staged('c', 'x', 4), staged('a', 'y', 5)], [staged('b', 'z', 6)]),
      );
      const err = await failing.then(() => null, (e: unknown) => e);
      assert.ok(err instanceof DuplicateIdError, String(err));
      assert.deepEqual(err.duplicates, [{ idErp: 'a', line: 5, firstLine: 2 }, { idErp: 'b', line: 6, firstLine: 3 }]);
      assert.match(err.message, /"a" on line 5 \(first on line 2\)/);
      assert.match(err.message, /"b" on line 6 \(first on line 3\)/);
      await assertNothingLeft(companyId, before.snapshotId);
    });

    test('findLiveRecord: the live snapshot and one of its records in one call', async () => {
      const companyId = await company();
      assert.equal(await store.findLiveRecord(companyId, 'clientes', 'A'), null);
      const s1 = await publish(companyId, T1, [staged('A'), staged('B')]);
      const b = await store.findRecord(s1.snapshotId, 'B');
      assert.ok(b);
      assert.deepEqual(await store.findLiveRecord(companyId, 'clientes', 'B'), { snapshotId: s1.snapshotId, record: b });
      assert.deepEqual(await store.findLiveRecord(companyId, 'clientes', 'Z'), { snapshotId: s1.snapshotId, record: null });
      assert.deepEqual(await store.findLiveRecord(companyId, 'clientes', 'nul\0'), { snapshotId: s1.snapshotId, record: null });
      assert.equal(await store.findLiveRecord(companyId, 'articulos', 'A'), null);
      const s2 = await publish(companyId, T2, [staged('B', 'changed')]);
      assert.deepEqual((await store.findLiveRecord(companyId, 'clientes', 'B'))?.snapshotId, s2.snapshotId);
      assert.deepEqual(await store.findLiveRecord(companyId, 'clientes', 'A'), { snapshotId: s2.snapshotId, record: null });
    });

    test('live pointers are kept in memory, yet a publication through another connection is seen', async () => {
      const companyId = await company();
      const s1 = await publish(companyId, T1, [staged('A')]);
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), s1.snapshotId);
      assert.equal((await store.findLiveRecord(companyId, 'clientes', 'A'))?.snapshotId, s1.snapshotId);
      const other = await openStore(databaseUrl);
      try {
        const s2 = await other.writeSnapshot(spec(companyId, T2), batches([staged('A', 'changed'), staged('B')]));
        await other.publishSnapshot(s2.snapshotId);
        const live = await liveOnceSeen(companyId, 'B', s2.snapshotId);
        assert.equal(live?.snapshotId, s2.snapshotId);
        assert.ok(live.record);
        assert.equal(await store.liveSnapshotId(companyId, 'clientes'), s2.snapshotId);
        // Positions are per snapshot: the old one's record is still its own.
        assert.notDeepEqual((await store.findRecord(s1.snapshotId, 'A'))?.hash, (await store.findRecord(s2.snapshotId, 'A'))?.hash);
        // The store's own publication is read at once, on both stores.
        const s3 = await publish(companyId, T3, [staged('C')]);
        assert.equal((await store.findLiveRecord(companyId, 'clientes', 'C'))?.snapshotId, s3.snapshotId);
      } finally {
        await other.close();
      }
    });

    test('claimSegmentPass: each live snapshot once, never a staged or superseded one, across connections', async () => {
      const companyId = await company();
      const drain = async (s: Store) => {
        const ids: number[] = [];
        for (let id = await s.claimSegmentPass(); id !== null; id = await s.claimSegmentPass()) ids.push(id);
        return ids;
      };
      await drain(store); // other tests' live snapshots
      const s1 = await publish(companyId, T1, [staged('A')]);
      const s2 = await publish(companyId, T2, [staged('A', 'changed')]); // s1 superseded before its pass
      const other = await store.writeSnapshot(spec(companyId, T3), batches([staged('B')])); // staged, never published
      const second = await openStore(databaseUrl);
      try {
        // Two connections claiming at once share the work and never take the same snapshot.
        const [mine, theirs] = await Promise.all([drain(store), drain(second)]);
        assert.deepEqual([...mine, ...theirs], [s2.snapshotId]);
        assert.equal(await second.claimSegmentPass(), null);
        // A new publication is a new pass.
        const s3 = await publish(companyId, T3, [staged('C')]);
        assert.deepEqual(await drain(second), [s3.snapshotId]);
        assert.ok(![s1.snapshotId, other.snapshotId].includes(s3.snapshotId));
      } finally {
        await second.close();
        await store.discardSnapshot(other.snapshotId);
      }
    });

    test('a segment pass claimed and never finished (its process died) is claimed again once the claim expires; a finished one never', async () => {
      const companyId = await company();
      const drain = async (now?: number) => {
        const ids: number[] = [];
        for (let id = await store.claimSegmentPass(now); id !== null; id = await store.claimSegmentPass(now)) ids.push(id);
        return ids;
      };
      const dead = await publish(companyId, T1, [staged('A')]);
      const done = await publish(companyId, T1, [staged('B')], 'obras');
      // Other tests' snapshots are claimed (and expire) along with these: only these are looked at.
      const ours = async (now: number) => (await drain(now)).filter((id) => id === dead.snapshotId || id === done.snapshotId);
      const later = Date.now() + 2 * SEGMENT_CLAIM_EXPIRES_MS;
      assert.deepEqual(await ours(later), [dead.snapshotId, done.snapshotId]);
      await store.finishSegmentPass(done.snapshotId);
      assert.deepEqual(await ours(later + SEGMENT_CLAIM_EXPIRES_MS - 1), [], 'claimed moments ago');
      assert.deepEqual(await ours(later + SEGMENT_CLAIM_EXPIRES_MS + 1), [dead.snapshotId], 'the dead pass, again; never the finished one');
      await store.finishSegmentPass(dead.snapshotId);
      assert.deepEqual(await ours(later + 10 * SEGMENT_CLAIM_EXPIRES_MS), []);
    });

    test('cachedLiveRecord agrees with findLiveRecord whenever it answers, and never answers stale after a publication', async () => {
      const companyId = await company();
      // Whatever it answers must be what findLiveRecord answers; undefined only means "ask findLiveRecord".
      const agrees = async (idErp: string) => {
        const cached = store.cachedLiveRecord(companyId, 'clientes', idErp);
        const found = await store.findLiveRecord(companyId, 'clientes', idErp);
        if (cached !== undefined) assert.deepEqual(cached, found, idErp);
        return { cached, found };
      };
      await agrees('A');
      const s1 = await publish(companyId, T1, [staged('A'), staged('B')]);
      await agrees('A');
      // Once findLiveRecord has found a record, its position is known to both stores without a query
      // (PostgreSQL: once the notification of its own publication has been read and the pointer re-read).
      const deadline = Date.now() + (store.backend === 'sqlite' ? 0 : HANG_GUARD_MS);
      let again = await agrees('A');
      while (again.cached === undefined && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
        again = await agrees('A');
      }
      assert.deepEqual(again.cached, { snapshotId: s1.snapshotId, record: again.found!.record });
      await agrees('Z');
      // The store's own publication: never the previous snapshot's position afterwards.
      const s2 = await publish(companyId, T2, [staged('A', 'changed')]);
      const afterOwn = store.cachedLiveRecord(companyId, 'clientes', 'A');
      assert.ok(afterOwn === undefined || afterOwn?.snapshotId === s2.snapshotId, JSON.stringify(afterOwn));
      assert.equal((await agrees('A')).found?.snapshotId, s2.snapshotId);
      assert.equal((await agrees('B')).found?.record, null);
      // Another connection's publication: SQLite sees it from the next turn of the event loop;
      // PostgreSQL answers undefined or the new snapshot once the notification is read, never
      // the old one after that.
      const other = await openStore(databaseUrl);
      try {
        const s3 = await other.writeSnapshot(spec(companyId, T3), batches([staged('A', 'again')]));
        await other.publishSnapshot(s3.snapshotId);
        const found = await liveOnceSeen(companyId, 'A', s3.snapshotId);
        assert.equal(found?.snapshotId, s3.snapshotId);
        const cached = store.cachedLiveRecord(companyId, 'clientes', 'A');
        assert.ok(cached === undefined || cached?.snapshotId === s3.snapshotId, JSON.stringify(cached));
        if (store.backend === 'sqlite') assert.equal(cached?.snapshotId, s3.snapshotId);
      } finally {
        await other.close();
      }
    });

    // A first import streams records in id order straight into chunks while it can (both stores); these
    // pin what happens when the order breaks after several chunks were written.
    test('a first import whose ids stop arriving in order midway is still laid out in list order', async () => {
      const companyId = await company();
      const id = (i: number) => `R${String(i).padStart(5, '0')}`;
      // ~4 KB items, 4.8 MB before the break: written as they come in several transactions (SQLite)
      // or COPYs (PostgreSQL), the builder's memory reused between them.
      const body = 'é'.repeat(2000);
      const big = (i: number, line: number) => staged(id(i), body, line);
      const first = Array.from({ length: 600 }, (_, i) => big(2 * i + 10, i + 2));
      const second = Array.from({ length: 600 }, (_, i) => big(2 * i + 1300, i + 602));
      const unordered = [big(3, 1202), big(5000, 1203), big(1, 1204)];
      const s = await store.writeSnapshot(spec(companyId, T1), batches(first, second, unordered));
      assert.equal(s.changes.total, 1203);
      assert.equal(s.changes.inserted, 1203);
      await store.publishSnapshot(s.snapshotId);
      const got = await items(store, s.snapshotId);
      const want = [...first, ...second, ...unordered].map((r) => r.idErp).sort(compareUtf8);
      assert.deepEqual(got.map((i) => i.id_erp), want);
      assert.ok(got.every((i) => i.v === body && at(i) === T1));
      const meta = (await store.snapshotMeta(s.snapshotId))!;
      assert.ok(meta.chunkStarts.length > 3, `${meta.chunkStarts.length} chunks`);
      assert.deepEqual(await store.findRecord(s.snapshotId, id(1)), { pos: 0, hash: staged(id(1), body).hash, actualizadoAt: T1 });
      assert.equal((await store.findRecord(s.snapshotId, id(5000)))!.pos, 1202);
    });

    test('a first import: a repeated id_erp after the order broke names the first line', async () => {
      const companyId = await company();
      const failing = store.writeSnapshot(
        spec(companyId, T1),
        batches([staged('a', 'x', 2), staged('b', 'x', 3), staged('c', 'x', 4)], [staged('d', 'x', 5), staged('b', 'y', 6)]),
      );
      const err = await failing.then(() => null, (e: unknown) => e);
      assert.ok(err instanceof DuplicateIdError, String(err));
      assert.deepEqual(err.duplicates, [{ idErp: 'b', line: 6, firstLine: 3 }]);
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), null);
    });

    test('an error from the records stream is rethrown as is, and nothing is left behind', async () => {
      const companyId = await company();
      const before = await publish(companyId, T1, [staged('A')]);
      const boom = new Error('the CSV broke on line 3');
      async function* broken() {
        yield [staged('X'), staged('Y')];
        throw boom;
      }
      await assert.rejects(store.writeSnapshot(spec(companyId, T2), broken()), (e) => e === boom);
      await assertNothingLeft(companyId, before.snapshotId);
    });

    test('an error from the records stream after megabytes written in order leaves nothing behind', async () => {
      const companyId = await company();
      const before = await publish(companyId, T1, [staged('A')]);
      const boom = new Error('the CSV broke on line 2,001');
      const body = 'x'.repeat(4000);
      async function* broken() {
        // 8 MB: with a live snapshot the records are staged; without one (a first import) they are
        // written in order, several COPYs of chunks deep when the stream breaks.
        for (let b = 0; b < 4; b++) yield Array.from({ length: 500 }, (_, i) => staged(`B${String(b * 500 + i).padStart(5, '0')}`, body, b * 500 + i + 2));
        throw boom;
      }
      await assert.rejects(store.writeSnapshot(spec(companyId, T2), broken()), (e) => e === boom);
      await assertNothingLeft(companyId, before.snapshotId);
      const fresh = await company();
      await assert.rejects(store.writeSnapshot(spec(fresh, T2), broken()), (e) => e === boom);
      assert.equal(await store.liveSnapshotId(fresh, 'clientes'), null);
      // The connection is usable afterwards: the same records, whole, publish.
      async function* whole() {
        for (let b = 0; b < 4; b++) yield Array.from({ length: 500 }, (_, i) => staged(`B${String(b * 500 + i).padStart(5, '0')}`, body, b * 500 + i + 2));
      }
      const s = await store.writeSnapshot(spec(fresh, T2), whole());
      assert.equal(s.changes.inserted, 2000);
      await store.publishSnapshot(s.snapshotId);
      const got = await items(store, s.snapshotId);
      assert.equal(got.length, 2000);
      assert.ok(got.every((i, k) => i.id_erp === `B${String(k).padStart(5, '0')}` && i.v === body));
    });

    /** The live snapshot is untouched, and no snapshot was kept between it and the next one written. */
    async function assertNothingLeft(companyId: number, liveId: number) {
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), liveId);
      assert.deepEqual((await items(store, liveId)).map((i) => i.id_erp), ['A']);
      const next = await store.writeSnapshot(spec(companyId, T3), batches([staged('A')]));
      for (let id = liveId + 1; id < next.snapshotId; id++) assert.equal(await store.snapshotMeta(id), null, `snapshot ${id}`);
      await store.discardSnapshot(next.snapshotId);
    }

    test('discardSnapshot removes a staged snapshot, and never the live one', async () => {
      const companyId = await company();
      const live = await publish(companyId, T1, [staged('A'), staged('B')]);
      const s = await store.writeSnapshot(spec(companyId, T2), batches([staged('A', 'new')]));
      await store.discardSnapshot(s.snapshotId);
      assert.equal(await store.snapshotMeta(s.snapshotId), null);
      assert.equal(await store.findRecord(s.snapshotId, 'A'), null);
      await assert.rejects(store.publishSnapshot(s.snapshotId));
      await store.discardSnapshot(live.snapshotId);
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), live.snapshotId);
      assert.deepEqual((await items(store, live.snapshotId)).map((i) => i.id_erp), ['A', 'B']);
      assert.ok(await store.findRecord(live.snapshotId, 'B'));
    });

    test('snapshot ids are never reused: the next snapshot after a discarded one gets a new id (issue 24)', async () => {
      const companyId = await company();
      const live = await publish(companyId, T1, [staged('A')]);
      // The newest snapshot of the store, so a reusing id allocator would hand its id out again.
      const dropped = await store.writeSnapshot(spec(companyId, T2), batches([staged('A', 'dropped')]));
      const droppedPublicId = (await store.snapshotMeta(dropped.snapshotId))!.publicId;
      await store.discardSnapshot(dropped.snapshotId);
      const next = await store.writeSnapshot(spec(companyId, T3), batches([staged('A', 'next')]));
      assert.ok(next.snapshotId > dropped.snapshotId, `next id ${next.snapshotId} after discarded ${dropped.snapshotId}`);
      assert.notEqual((await store.snapshotMeta(next.snapshotId))!.publicId, droppedPublicId);
      await store.discardSnapshot(next.snapshotId);
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), live.snapshotId);
    });

    test('sweepSnapshots removes superseded snapshots, never the live one', async () => {
      const companyId = await company();
      const s1 = await publish(companyId, T1, [staged('A', '1')]);
      const s2 = await publish(companyId, T2, [staged('A', '2')]);
      const staging = await store.writeSnapshot(spec(companyId, T3), batches([staged('A', '3')]));
      const s3 = await publish(companyId, T3, [staged('A', '4')]);
      assert.equal(await store.sweepSnapshots(0), 0, 'nothing was superseded before 1970');
      assert.ok((await store.sweepSnapshots(Date.now() + 1000)) >= 2);
      assert.equal(await store.snapshotMeta(s1.snapshotId), null);
      assert.equal(await store.snapshotMeta(s2.snapshotId), null);
      assert.deepEqual(await store.readChunks(s1.snapshotId, 0, 10), []);
      assert.ok(await store.snapshotMeta(staging.snapshotId), 'a fresh staged snapshot is not abandoned yet');
      assert.equal(await store.liveSnapshotId(companyId, 'clientes'), s3.snapshotId);
      assert.deepEqual((await items(store, s3.snapshotId)).map((i) => i.v), ['4']);
      assert.equal(await store.sweepSnapshots(Date.now() + 1000), 0);
      await store.discardSnapshot(staging.snapshotId);
    });

    const segment = (chunkNo: number, text: string): ChunkSegment => ({
      chunkNo,
      rawLength: text.length,
      contextLength: chunkNo === 0 ? 0 : 8192,
      crc32: 0xfedcba98 - chunkNo, // above 2^31: stored unsigned
      deflate: Buffer.from(`deflate of ${text}`),
    });

    test('gzip segments: written for a published snapshot, read back by chunk range, missing ones left out, rewritten in place', async () => {
      const companyId = await company();
      // Items over 64 KiB: one chunk each, six chunks.
      const s = await publish(companyId, T1, ['A', 'B', 'C', 'D', 'E', 'F'].map((id) => staged(id, 'x'.repeat(70_000))));
      assert.deepEqual(await store.readSegments(s.snapshotId, 0, 10), [], 'none before they are made');
      assert.deepEqual(await store.chunksWithoutSegments(s.snapshotId), [0, 1, 2, 3, 4, 5]);
      await store.writeSegments(s.snapshotId, [segment(0, 'zero'), segment(2, 'two'), segment(5, 'five')]);
      assert.deepEqual(await store.chunksWithoutSegments(s.snapshotId), [1, 3, 4]);
      assert.deepEqual(await store.readSegments(s.snapshotId, 0, 10), [segment(0, 'zero'), segment(2, 'two'), segment(5, 'five')]);
      assert.deepEqual(await store.readSegments(s.snapshotId, 1, 4), [segment(2, 'two')]);
      for (const g of await store.readSegments(s.snapshotId, 0, 10)) assertOwnMemory(g.deflate, `segment ${g.chunkNo}`);
      assert.deepEqual(await store.readSegments(s.snapshotId, 3, 4), []);
      // Written again (an import process retried): replaced, never doubled.
      await store.writeSegments(s.snapshotId, [segment(2, 'TWO'), segment(3, 'three')]);
      assert.deepEqual(await store.readSegments(s.snapshotId, 0, 10), [segment(0, 'zero'), segment(2, 'TWO'), segment(3, 'three'), segment(5, 'five')]);
      assert.deepEqual(await store.readSegments(s.snapshotId + 1000, 0, 10), [], 'per snapshot');
      await store.writeSegments(s.snapshotId, []);
    });

    test('the sweep removes segments with their snapshot; none are written for a snapshot already gone', async () => {
      const companyId = await company();
      const old = await publish(companyId, T1, [staged('A', '1')]);
      await store.writeSegments(old.snapshotId, [segment(0, 'old')]);
      const live = await publish(companyId, T2, [staged('A', '2')]);
      await store.writeSegments(live.snapshotId, [segment(0, 'live')]);
      assert.deepEqual(await store.readSegments(old.snapshotId, 0, 0), [segment(0, 'old')], 'a superseded snapshot keeps its segments');
      assert.ok((await store.sweepSnapshots(Date.now() + 1000)) >= 1);
      assert.deepEqual(await store.readSegments(old.snapshotId, 0, 0), []);
      assert.deepEqual(await store.readSegments(live.snapshotId, 0, 0), [segment(0, 'live')], 'the live snapshot keeps its segments');
      await store.writeSegments(old.snapshotId, [segment(0, 'late')]);
      assert.deepEqual(await store.readSegments(old.snapshotId, 0, 0), [], 'segments of a swept snapshot would never be removed');
    });
  });
}

/** A Buffer read from the store that holds only its own bytes, not a slice of Node's 8 KiB pool or of a larger result. */
function assertOwnMemory(b: Uint8Array, what: string) {
  assert.equal(b.buffer.byteLength, b.length, `${what} of ${b.length} bytes keeps ${b.buffer.byteLength} bytes alive`);
}
