/**
 * Issue 19, points 3 and 6, with real `mirador serve` processes: a server
 * killed in the middle of a delivery delivers it after a restart (the
 * delivery is in the store), and three instances on one PostgreSQL deliver
 * each event exactly once.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { testEvent } from '../../src/webhooks/test-event.js';
import { serveProcess, type ServeProcess } from '../helpers/cli.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';
import { sleep, waitUntil } from '../helpers/timing.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const ALLOW = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };

/** Polls the store until `ready` holds: the servers work in their own time, and no margin is assumed. */
async function until<T>(read: () => Promise<T>, ready: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await read();
    if (ready(v)) return v;
    await sleep(50);
  }
}

describe('webhook delivery by mirador serve processes', () => {
  const servers: ServeProcess[] = [];
  after(async () => {
    // A process killed already has a signal and no exit code: stopping it again would wait forever.
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop('SIGKILL');
  });

  test('a server killed mid-delivery delivers after its restart; the secret never reaches the logs', async () => {
    const dir = tempDir();
    const env = { ...ALLOW, DATABASE_URL: `sqlite:${join(dir.path, 'mirador.db')}`, LOG_LEVEL: 'debug' };
    const store: Store = new SqliteStore(join(dir.path, 'mirador.db'));
    await store.migrate();
    let holding: () => void = () => {};
    const held = new Promise<void>((resolve) => (holding = resolve));
    // The first request is never answered: the server is killed while it waits.
    const r = await startReceiver((_req, n, res) => (n === 1 ? holding() : res.writeHead(204).end()));
    try {
      const company = await store.createCompany('killed', 'Killed');
      const secret = 'whsec_0123456789abcdefghijABCDEFGHIJxyz';
      const e = await store.createWebhookEndpoint({ companyId: company.id, url: r.url, eventTypes: [], secret });
      const first = await serveProcess(env);
      servers.push(first);
      const d = await store.queueDelivery(e.id, testEvent());
      await held;
      assert.equal(await first.stop('SIGKILL'), null);
      assert.equal(first.child.signalCode, 'SIGKILL');
      assert.equal((await store.deliveryById(d.id))!.status, 'pending', 'killed mid-attempt: nothing recorded, still pending');

      const second = await serveProcess(env);
      servers.push(second);
      const done = await until(() => store.deliveryById(d.id), (x) => x!.status === 'delivered');
      assert.equal(done!.lastStatusCode, 204);
      assert.equal(r.received.length, 2);
      assert.equal(r.received[0]!.headers['mirador-event-id'], r.received[1]!.headers['mirador-event-id']);
      await second.stop();
      const logs = [...first.logs, ...second.logs].join('\n');
      assert.ok(logs.includes('webhook delivered'), 'attempts are logged');
      assert.ok(!logs.includes(secret), 'the signing secret never is');
    } finally {
      await r.close();
      await store.close();
      dir.remove();
    }
  });

  test('a server with no enabled endpoint runs no delivery thread, and starts one when an endpoint appears elsewhere', async () => {
    const dir = tempDir();
    const env = { ...ALLOW, DATABASE_URL: `sqlite:${join(dir.path, 'mirador.db')}`, LOG_LEVEL: 'debug' };
    const store: Store = new SqliteStore(join(dir.path, 'mirador.db'));
    await store.migrate();
    const r = await startReceiver((_req, _n, res) => res.writeHead(204).end());
    try {
      const company = await store.createCompany('lazy', 'Lazy');
      // A disabled endpoint needs no thread either.
      const off = await store.createWebhookEndpoint({ companyId: company.id, url: r.url, eventTypes: [], secret: 'whsec_0123456789abcdefghijABCDEFGHIJxyz' });
      await store.setWebhookEndpointEnabled(off.id, false);
      const server = await serveProcess(env);
      servers.push(server);
      // The first check is made before the server listens.
      const started = () => server.logs.some((l) => l.includes('webhook delivery thread started'));
      assert.ok(server.logs.some((l) => l.includes('no enabled webhook endpoint')), server.logs.join('\n'));
      assert.equal(started(), false);

      // Added by another process (the CLI, another instance's panel): no import wakes this server.
      const e = await store.createWebhookEndpoint({ companyId: company.id, url: r.url, eventTypes: [], secret: 'whsec_abcdefghij0123456789ABCDEFGHIJxyz' });
      const d = await store.queueDelivery(e.id, testEvent());
      // Bounded (waitUntil): a thread that never starts would leave the delivery pending for ever.
      await waitUntil('the delivery', async () => (await store.deliveryById(d.id))!.status === 'delivered');
      assert.equal((await store.deliveryById(d.id))!.lastStatusCode, 204);
      assert.equal(started(), true);
      assert.equal(r.received.length, 1);
      await server.stop();
    } finally {
      await r.close();
      await store.close();
      dir.remove();
    }
  });

  test('three instances on one PostgreSQL deliver each event exactly once', async (t) => {
    const factory = await postgresFactory();
    if (factory.skip) return t.skip(factory.skip);
    const db = await freshPostgresDatabase();
    const store = await PostgresStore.connect(db.url);
    await store.migrate();
    const r = await startReceiver();
    try {
      const env = { ...ALLOW, DATABASE_URL: db.url, LOG_LEVEL: 'info' };
      const instances = await Promise.all([serveProcess(env), serveProcess(env), serveProcess(env)]);
      servers.push(...instances);
      const company = await store.createCompany('three', 'Three');
      const endpoints = await Promise.all(
        [1, 2].map(() => store.createWebhookEndpoint({ companyId: company.id, url: r.url, eventTypes: [], secret: 'whsec_three' })),
      );
      const queued = [];
      for (let i = 0; i < 60; i++) queued.push(await store.queueDelivery(endpoints[i % 2]!.id, testEvent()));
      await until(
        async () => [...(await store.listDeliveries(endpoints[0]!.id, 100)), ...(await store.listDeliveries(endpoints[1]!.id, 100))],
        (all) => all.length === 60 && all.every((d) => d.status === 'delivered'),
      );
      const ids = r.received.map((x) => String(x.headers['mirador-event-id']));
      assert.equal(ids.length, 60, 'no event was sent twice');
      assert.deepEqual([...new Set(ids)].sort(), queued.map((d) => d.eventId).sort());
      const attempts = [...(await store.listAttempts(endpoints[0]!.id, 100)), ...(await store.listAttempts(endpoints[1]!.id, 100))];
      assert.equal(attempts.length, 60, 'one attempt per delivery');
      for (const s of instances) await s.stop();
    } finally {
      await r.close();
      await store.close();
      await db.drop();
    }
  });
});
