/**
 * Issue 24, point 2: the failed-sign-in count is shared by every instance, so
 * two instances do not allow twice the attempts. Two servers, each with its
 * own connection to one PostgreSQL database, take failed sign-ins in turn:
 * the lock comes after 5 in all, and holds on both — counted in the database
 * without Redis, and in Redis (only) with REDIS_URL.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { companyWithAdmin, PanelClient, startPanelServer, type PanelServer } from '../helpers/panel.js';
import { freshPostgresDatabase, postgresFactory } from '../helpers/stores.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function redisAnswers(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
const redisSkip = (await redisAnswers()) || process.env.CI === 'true' ? false : `Redis suite skipped: nothing answers at ${REDIS_URL}`;
const postgres = await postgresFactory();

for (const shared of ['database', 'redis'] as const) {
  describe(`sign-in throttle across two instances on one PostgreSQL (${shared})`, { skip: postgres.skip || (shared === 'redis' && redisSkip) }, () => {
    let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
    const stores: Store[] = [];
    const servers: PanelServer[] = [];

    before(async () => {
      database = await freshPostgresDatabase();
      const env = shared === 'redis' ? { REDIS_URL } : ({} as Record<string, string>);
      for (let i = 0; i < 2; i++) {
        const store = await PostgresStore.connect(database.url, { servesRequests: true });
        await store.migrate();
        stores.push(store);
        servers.push(await startPanelServer(store, env));
      }
    });
    after(async () => {
      for (const s of servers) await s.close();
      for (const s of stores) await s.close();
      await database?.drop();
    });

    test('5 failures spread over both instances lock the email on both, even for the right password', async () => {
      // A new email each run: Redis outlives the test's database.
      const admin = await companyWithAdmin(stores[0]!, `lock-${randomBytes(4).toString('hex')}`);
      const clients = servers.map((s) => new PanelClient(s.baseUrl));
      for (const c of clients) await c.get('/panel/sign-in');
      for (let i = 0; i < 5; i++) {
        const res = await clients[i % 2]!.post('/panel/sign-in', { email: admin.email, password: `wrong password ${i}` });
        assert.equal(res.status, 401, `failure ${i + 1}, on instance ${i % 2}`);
      }
      for (const [i, client] of clients.entries()) {
        const locked = await client.post('/panel/sign-in', { email: admin.email, password: admin.password });
        assert.equal(locked.status, 429, `instance ${i} refuses the right password`);
        assert.ok(Number(locked.headers.get('retry-after')) > 800, locked.headers.get('retry-after') ?? '');
      }
      const other = await companyWithAdmin(stores[1]!, `free-${randomBytes(4).toString('hex')}`);
      assert.equal((await clients[1]!.signIn(other.email, other.password)).status, 303, 'another email is free');

      // Where the count lives: the database's table without Redis; only Redis with it.
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const rows = (await client.query('SELECT email, locked_until FROM sign_in_failures')).rows as { email: string }[];
      await client.end();
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      if (shared === 'redis') {
        assert.deepEqual(rows, []);
        await redis.connect();
        assert.ok(Number(await redis.hget(`mirador:signin:${admin.email}`, 'locked_until')) > Date.now());
        await redis.del(`mirador:signin:${admin.email}`);
        redis.disconnect();
      } else {
        assert.deepEqual(rows.map((r) => r.email), [admin.email]);
      }
    });
  });
}
