/**
 * Issue 22, point 4: the soak on the several-machine setup. Three `mirador
 * serve` instances on one PostgreSQL (and Redis), behind HAProxy with
 * deploy/haproxy.cfg (TLS), 100 companies; mixed reads of random companies
 * through the proxy while imports keep landing through it. Reports requests,
 * statuses, errors other than the deliberate ones (must be 0), p50/p99, and
 * each instance's RSS verdict (medians of the first and last thirds of its
 * series after the warm-up, rss-verdict.ts; must stay under 10%).
 *
 *   npm run bench -- soak-cluster [--minutes 10] [--companies 100] [--records 2000] [--concurrency 16] [--sample-seconds 20] [--import-seconds 5]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCredential } from '../src/domain/api-keys.js';
import { readGuard, writeGuard } from '../src/imports/deletion-guard.js';
import { openStore } from '../src/store/open-store.js';
import { freePorts, HaproxyProcess, selfSignedCertificate } from '../test/helpers/haproxy.js';
import { freshDatabase } from './databases.js';
import { OUT_DIR } from './bench-context.js';
import { MIRADOR } from './processes.js';
import { allocatorOf, deploymentEnv } from './deployment-env.js';
import { rssVerdict } from './rss-verdict.js';
import { arg, customersCsv, memoryTable, sampleMemory, waitReady, type MemorySample } from './soak.js';

interface Tenant {
  id: number;
  key: string;
  upload: string;
  etag: string;
}

export async function soakCluster(): Promise<void> {
  const minutes = arg('minutes', 10);
  const companies = arg('companies', 100);
  const records = arg('records', 2000);
  const concurrency = arg('concurrency', 16);
  const sampleSeconds = arg('sample-seconds', 20);
  const importSeconds = arg('import-seconds', 5);
  const dir = mkdtempSync(join(tmpdir(), 'mirador-soak-cluster-'));
  const db = await freshDatabase('postgres', join(OUT_DIR, 'runs'));
  const env = {
    ...process.env,
    ...deploymentEnv(),
    DATABASE_URL: db.url,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    TRUST_PROXY: 'true',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    SANDBOX_RATE_LIMIT_PER_MINUTE: '100000000',
    CHUNK_CACHE_MB: '64',
  };
  const instances: ChildProcess[] = [];
  let proxy: HaproxyProcess | undefined;
  try {
    // Companies, keys and upload tokens through the store, as `mirador` would make them (100 CLI runs take a minute).
    const store = await openStore(db.url);
    await store.migrate();
    const tenants: Tenant[] = [];
    for (let i = 0; i < companies; i++) {
      const company = await store.createCompany(`soak-${i}`, `Soak ${i}`);
      // Each version drops a few rows; the mass-deletion guard is not what is soaked.
      await writeGuard(store, company.id, { ...(await readGuard(store, company.id)), enabled: false });
      const read = generateCredential('read');
      const upload = generateCredential('upload');
      await store.createCredential({ companyId: company.id, scope: 'read', prefix: read.prefix, secretHash: read.secretHash, label: 'soak' });
      await store.createCredential({ companyId: company.id, scope: 'upload', prefix: upload.prefix, secretHash: upload.secretHash, label: 'soak' });
      tenants.push({ id: company.id, key: read.token, upload: upload.token, etag: '' });
    }

    const ports = await freePorts(4);
    for (const port of ports.slice(0, 3)) {
      instances.push(spawn(process.execPath, [MIRADOR, 'serve', '--port', String(port)], { env, stdio: ['ignore', 'inherit', 'inherit'] }));
    }
    for (const port of ports.slice(0, 3)) await waitReady(`http://127.0.0.1:${port}/readyz`);
    const allocators = instances.map((c) => allocatorOf(c.pid!));
    const { pemFile, cert } = selfSignedCertificate(dir);
    proxy = await HaproxyProcess.start({ dir, port: ports[3]!, pemFile, servers: ports.slice(0, 3).map((p) => `127.0.0.1:${p}`) });
    for (const name of ['s1', 's2', 's3']) await proxy.waitFor(name, (s) => s.status === 'UP', 'UP');

    const agent = new Agent({ keepAlive: true, maxSockets: concurrency + 2, ca: cert });
    // A 503 comes from an instance (JSON, `unavailable`) or from HAProxy itself (no instance UP): told apart by its body.
    const unavailable = { instance: 0, proxy: 0 };
    const send = (path: string, headers: Record<string, string>, body?: Buffer) =>
      new Promise<{ status: number; etag?: string }>((resolve) => {
        const req = request(
          { host: '127.0.0.1', port: ports[3], servername: 'localhost', path, method: body ? 'PUT' : 'GET', headers, agent },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => {
              if (res.statusCode === 503) text += d.toString();
            });
            res.on('end', () => {
              if (res.statusCode === 503) unavailable[text.includes('"unavailable"') ? 'instance' : 'proxy']++;
              resolve({ status: res.statusCode!, etag: res.headers.etag });
            });
          },
        );
        req.on('error', () => resolve({ status: 0 }));
        req.end(body);
      });
    const upload = (t: Tenant, version: number) => {
      const body = customersCsv(records, version);
      return send('/panel/api/imports/clientes', { authorization: `Bearer ${t.upload}`, 'content-length': String(body.length) }, body);
    };

    process.stderr.write(`soak-cluster: importing ${records} customers for each of ${companies} companies…\n`);
    for (const t of tenants) await upload(t, 0);
    for (const t of tenants) {
      for (;;) {
        const jobs = await store.listImports(t.id, 'clientes', 1);
        if (jobs[0] && ['succeeded', 'failed'].includes(jobs[0].status)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await store.close();

    const statuses = new Map<number, number>();
    const latencies: number[] = [];
    let served = 0;
    const pick = () => tenants[Math.floor(Math.random() * tenants.length)]!;
    const id = () => `C${String(Math.floor(Math.random() * records)).padStart(7, '0')}`;
    const kinds: ((t: Tenant) => { path: string; headers: Record<string, string> })[] = [
      (t) => ({ path: `/v1/clientes?limit=100&offset=${Math.floor(Math.random() * records)}`, headers: { authorization: `Bearer ${t.key}` } }),
      (t) => ({ path: '/v1/clientes?limit=1000', headers: { authorization: `Bearer ${t.key}`, 'accept-encoding': 'gzip' } }),
      (t) => ({ path: `/v1/clientes/${id()}`, headers: { 'x-api-key': t.key } }),
      (t) => ({ path: '/v1/clientes?limit=50', headers: { authorization: `Bearer ${t.key}`, 'if-none-match': t.etag } }),
      () => ({ path: '/v1/clientes', headers: { authorization: 'Bearer api_aaaaaaaa_notarealkeynotarealkeynotarealkey1' } }),
      () => ({ path: `/v1/sandbox/obras?limit=${1 + Math.floor(Math.random() * 15)}`, headers: {} }),
      (t) => ({ path: '/v1/clientes?limit=abc', headers: { authorization: `Bearer ${t.key}` } }),
    ];
    const startedAt = Date.now();
    const until = startedAt + minutes * 60_000;
    const warmUntil = startedAt + Math.min(90_000, (minutes * 60_000) / 6);
    let imports = 0;
    const importer = (async () => {
      for (let version = 1; importSeconds > 0 && Date.now() < until; version++) {
        await upload(pick(), version);
        imports++;
        await new Promise((r) => setTimeout(r, importSeconds * 1000));
      }
    })();
    const workers = Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const t = pick();
        const { path, headers } = kinds[Math.floor(Math.random() * kinds.length)]!(t);
        const started = process.hrtime.bigint();
        const res = await send(path, headers);
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (path === '/v1/clientes?limit=50' && res.etag) t.etag = res.etag;
        served++;
      }
    });
    const samples: MemorySample[][] = instances.map(() => []);
    const sample = async () => {
      const at = (Date.now() - startedAt) / 1000;
      await Promise.all(instances.map(async (child, i) => samples[i]!.push(await sampleMemory(`http://127.0.0.1:${ports[i]}`, child.pid!, at))));
      process.stderr.write(`soak-cluster: ${served} requests, RSS ${samples.map((s) => (s.at(-1)!.rss / 1024 / 1024).toFixed(0)).join(' / ')} MB\n`);
    };
    await sample();
    const sampler = setInterval(() => void sample().catch(() => {}), sampleSeconds * 1000);
    await Promise.all(workers);
    await importer;
    clearInterval(sampler);
    await sample();
    agent.destroy();

    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(2);
    const unexpected = [...statuses].filter(([s]) => ![200, 304, 400, 401, 404].includes(s)).reduce((n, [, c]) => n + c, 0);
    console.log(`soak-cluster: ${minutes} min, 3 instances behind HAProxy (TLS) on PostgreSQL, ${companies} companies × ${records} customers, ${concurrency} concurrent, ${imports} imports during the run`);
    console.log(`  requests served   ${served}`);
    console.log(`  statuses          ${[...statuses].sort().map(([s, c]) => `${s}: ${c}`).join(', ')}`);
    console.log(`  errors            ${unexpected}  (the 400s and 401s above are the deliberate bad parameters and keys)`);
    console.log(`  latency           p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms (through TLS and the proxy)`);
    console.log(`  allocator         ${instances.map((c, i) => `instance ${i + 1}: ${allocators[i]}`).join(', ')}`);
    if (unavailable.instance + unavailable.proxy > 0) {
      console.log(`  503s              ${unavailable.instance} from the instances (store unavailable: their log says why), ${unavailable.proxy} from HAProxy (no instance UP)`);
    }
    // Health checks that failed, and servers taken out of rotation, as HAProxy reports them.
    const changes = proxy.logs.join('').split('\n').filter((l) => /is (DOWN|UP)/.test(l));
    console.log(`  HAProxy           ${changes.filter((l) => /is DOWN/.test(l)).length} servers taken out (DOWN), ${changes.filter((l) => /is UP/.test(l)).length} back (UP)`);
    for (const l of changes.slice(0, 12)) console.log(`    ${l.trim().slice(0, 200)}`);
    let failed = unexpected > 0;
    samples.forEach((series, i) => {
      const after = series.filter((s) => s.at * 1000 >= warmUntil - startedAt).map((s) => s.rss);
      const v = rssVerdict(after);
      const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
      console.log(`  instance ${i + 1} RSS    median of the first third ${mb(v.first)} MB → of the last third ${mb(v.last)} MB (${v.growthPct >= 0 ? '+' : ''}${v.growthPct.toFixed(1)}%, ${v.samples} samples)`);
      for (const line of memoryTable(series, (warmUntil - startedAt) / 1000)) console.log(line);
      if (v.growthPct >= 10) failed = true;
    });
    if (failed) process.exitCode = 1;
  } finally {
    await proxy?.stop();
    await Promise.all(
      instances.map((child) => new Promise((r) => (child.exitCode !== null ? r(null) : (child.once('exit', r), child.kill('SIGTERM'))))),
    );
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
