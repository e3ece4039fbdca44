/** Issue 9, point 3: the client's walks pin their snapshot and can carry deletions. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { replaceRecords } from '../../../src/snapshots/write-records.js';
import type { Store } from '../../../src/store/store.js';
import { customers, CUSTOMER_COLUMNS, range } from '../../../test/helpers/records.js';
import { sqliteFactory } from '../../../test/helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../../../test/helpers/test-server.js';
import { isTombstone, Mirador, SnapshotExpiredError, type Cliente, type Tombstone } from '../src/index.js';

describe('client: consistent walks and deletions', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let companyId: number;
  let client: Mirador;
  const load = (at: number, ids: string[], name: string) =>
    replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at }, customers(ids).map((r) => ({ ...r, fields: [r.fields[0]!, name, ...r.fields.slice(2)] })));

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    const acme = await companyWithKey(store, 'acme');
    companyId = acme.company.id;
    server = await startServer(store, { SNAPSHOT_RETENTION_SECONDS: '600' });
    client = new Mirador({ baseUrl: server.baseUrl, apiKey: acme.key });
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  test('all() reads the first page’s snapshot to the end, even as imports land between pages', async () => {
    await load(Date.now() - 60_000, range(50), 'v1');
    const seen: Cliente[] = [];
    let round = 0;
    for await (const c of client.clientes.all({ pageSize: 10 })) {
      seen.push(c);
      // After each full page, an import renames everything and removes a few records.
      if (seen.length % 10 === 0) await load(Date.now() - 30_000 + ++round, range(50 - round * 3), `v${round + 1}`);
    }
    assert.equal(seen.length, 50);
    assert.deepEqual(seen.map((c) => c.id_erp), range(50));
    assert.ok(seen.every((c) => c.nombre === 'v1'), 'one version throughout');
  });

  test('includeDeleted: tombstones among the records, told apart by isTombstone', async () => {
    const now = Date.now();
    await load(now - 2000, range(5), 'a');
    await load(now - 1000, range(3), 'b');
    const items: (Cliente | Tombstone)[] = [];
    for await (const item of client.clientes.all({ includeDeleted: true, updatedSince: new Date(now - 1000) })) items.push(item);
    assert.deepEqual(
      items.map((i) => (isTombstone(i) ? `${i.id_erp} x` : i.id_erp)),
      ['C000001', 'C000002', 'C000003', 'C000004 x', 'C000005 x'],
    );
    const page = await client.clientes.list({ includeDeleted: true, limit: 2 });
    assert.equal(typeof page.snapshot, 'string');
    const plain = await client.clientes.list({ limit: 100 });
    assert.equal(plain.items.length, 3);
  });

  test('a snapshot no longer kept is a SnapshotExpiredError', async () => {
    await assert.rejects(client.clientes.list({ snapshot: '0000000000000000' }), (err: unknown) => {
      assert.ok(err instanceof SnapshotExpiredError);
      assert.equal(err.status, 410);
      assert.equal(err.code, 'snapshot_expired');
      return true;
    });
  });
});
