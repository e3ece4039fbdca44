/**
 * Issue 22, point 1: HAProxy (deploy/haproxy.cfg, as written) in front of three
 * instances on one PostgreSQL. TLS ends at the proxy; X-Forwarded-For reaches
 * the instances (TRUST_PROXY) so per-address limits see the client. Restarting
 * the instances one at a time, as docs/operations.md says to, fails no request
 * of a client reading through the proxy, and an upload queued meanwhile is
 * applied exactly once.
 */
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { mirador, serveProcess, type ServeProcess } from '../helpers/cli.js';
import { customersCsv } from '../helpers/csv.js';
import { freePorts, haproxySkip, HaproxyProcess, selfSignedCertificate } from '../helpers/haproxy.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';
import { awayFromMinuteBoundary, HANG_GUARD_MS, sleep } from '../helpers/timing.js';
import { generateCredential } from '../../src/domain/api-keys.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const pg = await postgresFactory();
const skip = pg.skip || haproxySkip();
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

describe('HAProxy in front of three instances', { skip }, () => {
  const dir = tempDir('mirador-haproxy-');
  let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let env: Record<string, string>;
  let key: string;
  let uploadToken: string;
  let ports: number[];
  let proxy: HaproxyProcess;
  let cert: string;
  let agent: Agent;
  /** Every incarnation of every instance, for their logs. */
  const started: ServeProcess[] = [];
  const live: ServeProcess[] = [];

  /** One request through the proxy, over TLS checked against the test's certificate. */
  function viaProxy(path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer; localAddress?: string } = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest({
        host: '127.0.0.1', port: proxy.port, servername: 'localhost', path, method: options.method ?? 'GET',
        headers: { ...options.headers, ...(options.body ? { 'content-length': String(options.body.length) } : {}) },
        ca: cert, agent: options.localAddress ? false : agent, localAddress: options.localAddress,
      }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      });
      req.on('error', reject);
      req.end(options.body);
    });
  }

  const startInstance = async (i: number) => {
    const s = await serveProcess(env, ['--port', String(ports[i])]);
    started.push(s);
    live[i] = s;
    return s;
  };

  before(async () => {
    db = await freshPostgresDatabase();
    env = {
      DATABASE_URL: db.url, REDIS_URL, TRUST_PROXY: 'true',
      RATE_LIMIT_PER_MINUTE: '1000000000', SANDBOX_RATE_LIMIT_PER_MINUTE: '5',
    };
    assert.equal(mirador(['migrate'], env).code, 0);
    assert.equal(mirador(['company', 'create', 'lb', '--name', 'LB'], env).code, 0);
    ({ key } = mirador(['key', 'create', 'lb', '--json'], env).json());
    const store = await PostgresStore.connect(db.url);
    try {
        const company = (await store.companyBySlug('lb'))!;
        const fresh = generateCredential('upload');
        await store.createCredential({ companyId: company.id, scope: 'upload', prefix: fresh.prefix, secretHash: fresh.secretHash, label: 'erp' });
        uploadToken = fresh.token;
    } finally {
      await store.close();
    }
    const first = join(dir.path, 'v1.csv');
    writeFileSync(first, customersCsv(3000, () => 'v1'));
    assert.equal(mirador(['import', 'lb', 'clientes', first], env).code, 0);

    ports = await freePorts(4);
    for (let i = 0; i < 3; i++) await startInstance(i);
    let pemFile: string;
    ({ pemFile, cert } = selfSignedCertificate(dir.path));
    proxy = await HaproxyProcess.start({ dir: dir.path, port: ports[3]!, pemFile, servers: ports.slice(0, 3).map((p) => `127.0.0.1:${p}`) });
    agent = new Agent({ keepAlive: true, maxSockets: 4 });
    for (const name of ['s1', 's2', 's3']) await proxy.waitFor(name, (s) => s.status === 'UP', 'UP');
  });

  after(async () => {
    agent?.destroy();
    await proxy?.stop();
    await Promise.all(live.map((s) => s.stop()));
    await db?.drop();
    dir.remove();
  });

  test('rolling restart: no failed read, and an upload queued meanwhile is applied exactly once', async () => {
    // Readers: lists, details and conditional reads (304), over keep-alive TLS connections.
    const failures: string[] = [];
    const counts = { list: 0, detail: 0, notModified: 0 };
    let reading = true;
    const reader = async (n: number) => {
      let etag: string | undefined;
      for (let i = n; reading; i++) {
        const path = i % 3 === 0 ? `/v1/clientes/C${String((i % 3000) + 1).padStart(6, '0')}` : `/v1/clientes?limit=20&offset=${(i % 2) * 40}`;
        const conditional: Record<string, string> = i % 3 === 2 && etag ? { 'if-none-match': etag } : {};
        try {
          const res = await viaProxy(path, { headers: { authorization: `Bearer ${key}`, ...conditional } });
          if (res.status === 304) counts.notModified++;
          else if (res.status !== 200) failures.push(`${path}: ${res.status} ${res.body.toString().slice(0, 200)}`);
          else if (i % 3 === 0) counts.detail++;
          else {
            counts.list++;
            const total = JSON.parse(res.body.toString()).total;
            if (total !== 3000 && total !== 20000) failures.push(`${path}: total ${total}`);
            if (path.endsWith('offset=40')) etag = res.headers.etag as string;
          }
        } catch (err) {
          failures.push(`${path}: ${(err as Error).message}`);
        }
      }
    };
    const readers = [0, 1, 2, 3].map(reader);

    let status = 'queued';
    let importId = 0;
    try {
      // The upload, through the proxy like an ERP's, big enough to be running during a restart.
      const upload = await viaProxy('/panel/api/imports/clientes', {
        method: 'PUT',
        headers: { authorization: `Bearer ${uploadToken}`, 'content-type': 'text/csv' },
        body: customersCsv(20000, () => 'v2'),
      });
      assert.equal(upload.status, 202, upload.body.toString());
      importId = JSON.parse(upload.body.toString()).import_id;

      // The documented procedure, one instance at a time: drain it at the proxy, stop it
      // (SIGTERM: in-flight requests and a running import complete), start the new one,
      // put it back and wait until HAProxy's own /readyz check says UP.
      for (let i = 0; i < 3; i++) {
        const name = `s${i + 1}`;
        await proxy.command(`disable server mirador/${name}`);
        await proxy.waitFor(name, (s) => s.status === 'MAINT' && s.current === 0, 'idle in maintenance');
        assert.equal(await live[i]!.stop('SIGTERM'), 0, `${name} exits cleanly`);
        await startInstance(i);
        await proxy.command(`enable server mirador/${name}`);
        await proxy.waitFor(name, (s) => s.status === 'UP', 'UP');
      }

      for (const deadline = Date.now() + HANG_GUARD_MS; !['succeeded', 'failed'].includes(status) && Date.now() < deadline; ) {
        await sleep(200);
        status = mirador(['imports', 'lb', '--json'], env).json().find((j: { id: number }) => j.id === importId).status;
      }
    } finally {
      // Whatever happened above, the readers stop (a failed step must not leave them spinning).
      reading = false;
      await Promise.all(readers);
    }

    assert.deepEqual(failures.slice(0, 10), [], `no request failed (${failures.length} did)`);
    assert.ok(counts.list > 0 && counts.detail > 0 && counts.notModified > 0, JSON.stringify(counts));
    assert.equal(status, 'succeeded');
    const job = mirador(['imports', 'lb', '--json'], env).json().find((j: { id: number }) => j.id === importId);
    assert.equal(job.report.inserted, 17000);
    assert.equal(job.report.updated, 3000);
    const starts = started.flatMap((s) => s.logs.filter((l) => l.includes('"import started"') && l.includes(`"importId":${importId}`)));
    assert.equal(starts.length, 1, 'exactly one worker applied it, once');
    const after = await viaProxy('/v1/clientes?limit=1', { headers: { authorization: `Bearer ${key}` } });
    assert.equal(JSON.parse(after.body.toString()).total, 20000);
  });

  test('the sandbox limit counts the client behind the proxy, not the proxy, and a forged X-Forwarded-For changes nothing', async () => {
    await awayFromMinuteBoundary();
    // Two client addresses on the loopback network, unlikely to be shared with another test's counters in Redis.
    const octet = () => 2 + Math.floor(Math.random() * 250);
    const a = `127.${octet()}.${octet()}.${octet()}`;
    const b = `127.${octet()}.${octet()}.${octet()}`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await viaProxy('/v1/sandbox/clientes?limit=1', { localAddress: a })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    const forged = await viaProxy('/v1/sandbox/clientes?limit=1', { localAddress: a, headers: { 'x-forwarded-for': b } });
    assert.equal(forged.status, 429, 'the forged address is replaced by the real one');
    assert.equal((await viaProxy('/v1/sandbox/clientes?limit=1', { localAddress: b })).status, 200, 'another client has its own count');
  });
});
