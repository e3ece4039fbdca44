/**
 * What only the PostgreSQL adapter has to get right: several instances
 * migrating one database at once, and losing the server — an unreachable or
 * silent server, or connections cut mid-work — surfacing as
 * StoreUnavailableError promptly, without a hang or a crash, and recovering
 * without a restart.
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/postgres-migrations.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { StoreUnavailableError, type StagedRecord, type Store } from '../../src/store/store.js';
import { freshPostgresDatabase, postgresFactory } from '../helpers/stores.js';
import { spec, staged } from '../suites/store-suite.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

const factory = await postgresFactory();

/** Resolves to how long `promise` took to reject with StoreUnavailableError. */
async function unavailableWithin(promise: Promise<unknown>): Promise<number> {
  const started = Date.now();
  await assert.rejects(promise, StoreUnavailableError);
  return Date.now() - started;
}

describe('PostgreSQL adapter', { skip: factory.skip }, () => {
  test('three instances migrating a fresh database at once apply the schema once', async () => {
    const db = await freshPostgresDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => PostgresStore.connect(db.url)));
    try {
      await Promise.all(stores.map((s) => s.migrate()));
      await stores[0]!.migrate();
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version');
      await client.end();
      // Each migration applied exactly once, however many instances raced.
      assert.deepEqual(rows, POSTGRES_MIGRATIONS.map((_, i) => ({ version: i + 1 })));
      assert.equal((await stores[1]!.createCompany('acme', 'Acme')).slug, 'acme');
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await db.drop();
    }
  });

  test('no server listening: StoreUnavailableError at once', async () => {
    const store = await PostgresStore.connect('postgres://postgres@127.0.0.1:1/mirador');
    try {
      assert.ok((await unavailableWithin(store.ping())) < 2500);
      await unavailableWithin(store.liveSnapshotId(1, 'clientes'));
      await unavailableWithin(store.migrate());
      await unavailableWithin(store.writeSnapshot(spec(1, Date.now()), (async function* () {})()));
      await unavailableWithin((async () => {
        for await (const piece of store.readImportFile(1)) assert.fail(`read ${piece.length} bytes from no server`);
      })());
    } finally {
      await store.close();
    }
  });

  test('uploads: blobs written two at a time land in order, and an upload refused midway leaves none behind', async () => {
    const db = await freshPostgresDatabase();
    const store = await PostgresStore.connect(db.url);
    const client = new pg.Client({ connectionString: db.url });
    try {
      await store.migrate();
      await client.connect();
      const { id: companyId } = await store.createCompany('acme', 'Acme');
      const MiB = 1024 * 1024;
      // Pieces of many sizes, so that blobs are cut mid-piece and several are written at once.
      const pieces = Array.from({ length: 40 }, (_, i) => Buffer.alloc(37_000 + i * 9_001, i));
      async function* parts(list: Buffer[]) {
        for (const p of list) yield p;
      }
      const job = await store.createImport({ companyId, kind: 'clientes', filename: 'c.csv', source: 'cli' }, parts(pieces), 64 * MiB);
      const back: Buffer[] = [];
      for await (const piece of store.readImportFile(job.id)) back.push(piece);
      assert.ok(Buffer.concat(back).equals(Buffer.concat(pieces)));
      const { rows } = await client.query('SELECT seq, length(bytes) AS n FROM import_blobs WHERE import_id = $1 ORDER BY seq', [job.id]);
      assert.deepEqual(rows.map((r) => r.seq), rows.map((_, i) => i));
      assert.ok(rows.length >= 3, `${rows.length} blobs`);

      const tooBig = store.createImport(
        { companyId, kind: 'clientes', filename: 'big.csv', source: 'cli' },
        parts([Buffer.alloc(MiB), Buffer.alloc(MiB), Buffer.alloc(MiB), Buffer.alloc(MiB)]),
        3 * MiB + 1,
      );
      await assert.rejects(tooBig, /3145729/);
      const left = await client.query('SELECT count(*)::int AS n FROM import_blobs WHERE import_id <> $1', [job.id]);
      assert.equal(left.rows[0].n, 0, 'blobs of the refused upload');
      assert.deepEqual((await store.listImports(companyId)).map((j) => j.id), [job.id]);
    } finally {
      await client.end().catch(() => {});
      await store.close();
      await db.drop();
    }
  });

  test('a server that accepts connections but never answers: StoreUnavailableError within the connect timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const store = await PostgresStore.connect(`postgres://postgres@127.0.0.1:${port}/mirador`);
    try {
      const ms = await unavailableWithin(store.credentialByPrefix('abcd1234'));
      // At the connect timeout (2 s), not never: the upper bound leaves room for a busy machine.
      assert.ok(ms >= 1500 && ms < 20_000, `${ms} ms`);
    } finally {
      await store.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  test('the listening connection cut: lookups go to the database, and a publication meanwhile is not missed', async () => {
    const db = await freshPostgresDatabase();
    const serving = await PostgresStore.connect(db.url, { servesRequests: true });
    const other = await PostgresStore.connect(db.url);
    const admin = new pg.Client({ connectionString: db.url });
    const listeners = async () =>
      Number(
        (await admin.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'mirador-listen'`))
          .rows[0].n,
      );
    const waitFor = async (what: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + HANG_GUARD_MS;
      while (!(await check())) {
        if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      await admin.connect();
      await serving.migrate();
      const company = await serving.createCompany('listen', 'Listen S.L.');
      const publish = async (store: Store, id: string) => {
        const s = await store.writeSnapshot(spec(company.id, Date.now()), (async function* () {
          yield [staged(id)];
        })());
        await store.publishSnapshot(s.snapshotId);
        return s.snapshotId;
      };
      const s1 = await publish(serving, 'A');
      await waitFor('the listener', async () => (await listeners()) === 1);
      assert.equal(await serving.liveSnapshotId(company.id, 'clientes'), s1);
      // Another instance publishes: the notification reaches the serving store.
      const s2 = await publish(other, 'B');
      await waitFor('the notification', async () => (await serving.liveSnapshotId(company.id, 'clientes')) === s2);
      // Cut the listening connection and publish before it can come back.
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'mirador-listen'`);
      const s3 = await publish(other, 'C');
      await waitFor('the publication made while not listening', async () => (await serving.liveSnapshotId(company.id, 'clientes')) === s3);
      assert.equal((await serving.findLiveRecord(company.id, 'clientes', 'C'))?.record?.pos, 0);
      // It listens again, and notifications flow again.
      await waitFor('the listener to come back', async () => (await listeners()) === 1);
      await new Promise((r) => setTimeout(r, 100));
      // Listening again must not bring back a pointer remembered before the cut.
      assert.equal(await serving.liveSnapshotId(company.id, 'clientes'), s3);
      const s4 = await publish(other, 'D');
      await waitFor('the next notification', async () => (await serving.liveSnapshotId(company.id, 'clientes')) === s4);
    } finally {
      await admin.end();
      await other.close();
      await serving.close();
      await db.drop();
    }
  });

  describe('connections cut by the server', () => {
    let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;
    let store: Store;
    before(async () => {
      db = await freshPostgresDatabase();
      store = await PostgresStore.connect(db.url);
      await store.migrate();
    });
    after(async () => {
      await store?.close();
      await db?.drop();
    });

    test('idle connections cut: the next request reconnects', async () => {
      await Promise.all([store.ping(), store.ping(), store.ping()]);
      await db.terminate();
      await new Promise((r) => setTimeout(r, 100));
      await store.ping();
      assert.equal(await store.liveSnapshotId(1, 'clientes'), null);
    });

    test('a snapshot write cut mid-COPY fails as unavailable, leaves nothing, and the store carries on', async () => {
      const company = await store.createCompany('cut', 'Cut S.L.');
      let release!: () => void;
      const paused = new Promise<void>((r) => (release = r));
      let reached!: () => void;
      const midway = new Promise<void>((r) => (reached = r));
      async function* records(): AsyncGenerator<StagedRecord[]> {
        yield Array.from({ length: 500 }, (_, i) => staged(`R${i}`));
        reached();
        await paused;
        yield [staged('LAST')];
      }
      // Handled from the start: it may reject as soon as the connection drops.
      const outcome = store.writeSnapshot(spec(company.id, Date.now()), records()).then(() => null, (e: unknown) => e);
      await midway;
      await db.terminate();
      release();
      assert.ok((await outcome) instanceof StoreUnavailableError, String(await outcome));
      await store.ping();
      assert.equal(await store.liveSnapshotId(company.id, 'clientes'), null);
      const s = await store.writeSnapshot(spec(company.id, Date.now()), (async function* () {
        yield [staged('A')];
      })());
      assert.equal(s.changes.total, 1);
    });
  });
});
