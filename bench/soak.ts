/**
 * Issue 8, point 7: a soak. `mirador serve` (SQLite) under mixed load for a
 * while — lists, details, 304s, bad keys, the sandbox — while imports keep
 * landing through the upload-token API. Reports requests served, statuses,
 * errors other than 429 (must be 0), p50/p99, and the server's RSS: the
 * median of the last third of its samples after the warm-up against the
 * median of the first third must grow less than 10% (rss-verdict.ts).
 *
 * RSS alone cannot tell a leak from a cache filling or from the allocator
 * keeping freed memory, so the server's memory is sampled all along and
 * printed as a series: its main JS heap and external memory (Buffers) from
 * its own GET /metrics, and what /proc says of the rest.
 *
 *   npm run bench -- soak [--minutes 10] [--concurrency 16] [--records 20000] [--cache-mb 64] [--sample-seconds 30]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { generateCredential } from '../src/domain/api-keys.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { childPids } from '../test/helpers/child-pids.js';
import { rssVerdict } from './rss-verdict.js';
import { allocatorOf, deploymentEnv } from './deployment-env.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

export function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

export function customersCsv(n: number, version: number): Buffer {
  const header = ['CODIGO', '01_NOMBRE_COMERCIAL', '06_CIF', 'EMAIL', 'TELEFONO', '07_DOMICILIO', ...Array.from({ length: 40 }, (_, i) => `CAMPO_${i}`)];
  const lines = [header.join(';')];
  for (let i = 0; i < n; i++) {
    // Each version changes a tenth of the rows and drops the last few, so imports do real work.
    const name = i % 10 === version % 10 ? `Cliente ${i} v${version}` : `Cliente ${i}`;
    const cells = [`C${String(i).padStart(7, '0')}`, name, 'B12345678', `c${i}@example.com`, '600000000', `Calle ${i}`];
    for (let c = 0; c < 40; c++) cells.push(c % 3 === 0 ? '' : `valor ${c} ${i}`);
    if (i < n - (version % 3) * 5) lines.push(cells.join(';'));
  }
  return Buffer.from(lines.join('\r\n') + '\r\n', 'latin1');
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      request(url, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      }).on('error', () => resolve(false)).end();
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** The server's memory at one moment, in bytes. */
export interface MemorySample {
  /** Seconds since the load started. */
  at: number;
  rss: number;
  /** The main thread's V8 heap: used, and reserved from the system. */
  heapUsed: number;
  heapTotal: number;
  /** Memory held by the main thread's JS objects outside its heap: Buffers, mostly. */
  external: number;
  /** RSS that is no mapped file and no shared memory: every thread's heaps, malloc, SQLite's caches. */
  rssAnon: number;
  /** Mapped files (the node binary, libraries) and shared memory (SQLite's WAL index). */
  rssFileShmem: number;
  /** The server's child processes (the import process, new for each import), apart: they come and go. */
  childrenRss: number;
  /** What the read caches hold (the sum of mirador_read_cache_bytes): bounded by CHUNK_CACHE_MB, inside "external" and the heap. */
  readCaches: number;
}

function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve(text));
    }).on('error', reject).end();
  });
}

function childrenRssBytes(pid: number): number {
  let sum = 0;
  for (const child of childPids(pid)) {
    try {
      sum += rssKb(child) * 1024;
    } catch {
      // exited meanwhile
    }
  }
  return sum;
}

export async function sampleMemory(base: string, pid: number, at: number): Promise<MemorySample> {
  const metrics = await get(`${base}/metrics`);
  const metric = (name: string) => Number(new RegExp(`^mirador_${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return {
    at,
    rss: kb('VmRSS'),
    heapUsed: metric('nodejs_heap_size_used_bytes'),
    heapTotal: metric('nodejs_heap_size_total_bytes'),
    external: metric('nodejs_external_memory_bytes'),
    rssAnon: kb('RssAnon'),
    rssFileShmem: kb('RssFile') + kb('RssShmem'),
    childrenRss: childrenRssBytes(pid),
    readCaches: [...metrics.matchAll(/^mirador_read_cache_bytes\{[^}]*\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0),
  };
}

export function memoryTable(samples: readonly MemorySample[], warmedAt: number): string[] {
  const mb = (b: number) => (b / 1024 / 1024).toFixed(1).padStart(9);
  const clock = (s: number) => `${Math.floor(s / 60)}:${String(Math.round(s % 60)).padStart(2, '0')}`.padStart(6);
  const lines = [
    '  server memory (MB; heap and external are the main thread\'s, from /metrics; "other anon" = anon RSS − heap total − external:',
    '  SQLite\'s caches, malloc\'s free and fragmented memory, threads\' heaps; "import proc" = RSS of the server\'s child, apart)',
    `  ${'time'.padStart(6)}${'RSS'.padStart(9)}${'heap used'.padStart(11)}${'heap total'.padStart(11)}${'external'.padStart(9)}${'other anon'.padStart(11)}${'file+shm'.padStart(9)}${'import proc'.padStart(12)}${'read caches'.padStart(12)}`,
  ];
  for (const s of samples) {
    const other = s.rssAnon - s.heapTotal - s.external;
    const mark = s.at >= warmedAt && samples.find((x) => x.at >= warmedAt) === s ? '  ← warm-up over' : '';
    lines.push(`  ${clock(s.at)}${mb(s.rss)}${mb(s.heapUsed).padStart(11)}${mb(s.heapTotal).padStart(11)}${mb(s.external)}${mb(other).padStart(11)}${mb(s.rssFileShmem)}${mb(s.childrenRss).padStart(12)}${mb(s.readCaches).padStart(12)}${mark}`);
  }
  return lines;
}

export async function soak(): Promise<void> {
  const minutes = arg('minutes', 10);
  const concurrency = arg('concurrency', 16);
  const records = arg('records', 20_000);
  // The chunk and compressed-body caches are bounded LRUs: RSS rises until they are full,
  // then stays. A small budget fills during the warm-up, so growth after it means a leak.
  const cacheMb = arg('cache-mb', 64);
  const sampleSeconds = arg('sample-seconds', 30);
  const importSeconds = arg('import-seconds', 15);
  const dir = mkdtempSync(join(tmpdir(), 'mirador-soak-'));
  const env = { ...process.env, ...deploymentEnv(), DATABASE_URL: `sqlite:${join(dir, 'soak.db')}`, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000', SANDBOX_RATE_LIMIT_PER_MINUTE: '100000000', CHUNK_CACHE_MB: String(cacheMb) };

  // Setup through the real CLI and store: a company, a key, an upload token, a first import.
  spawnSync(process.execPath, [MAIN, 'company', 'create', 'soak', '--name', 'Soak'], { env });
  spawnSync(process.execPath, [MAIN, 'company', 'guard', 'soak', '--off'], { env });
  const key = JSON.parse(spawnSync(process.execPath, [MAIN, 'key', 'create', 'soak', '--json'], { env, encoding: 'utf8' }).stdout).key as string;
  const store = new SqliteStore(join(dir, 'soak.db'));
  await store.migrate();
  const company = (await store.companyBySlug('soak'))!;
  const upload = generateCredential('upload');
  await store.createCredential({ companyId: company.id, scope: 'upload', prefix: upload.prefix, secretHash: upload.secretHash, label: 'soak' });
  await store.close();
  const first = join(dir, 'v0.csv');
  writeFileSync(first, customersCsv(records, 0));
  spawnSync(process.execPath, [MAIN, 'import', 'soak', 'clientes', first], { env });

  // Logs stay at warn (a line per request would be part of the load), so readiness is polled.
  const port = await freePort();
  const server = spawn('taskset', ['-c', '0', process.execPath, MAIN, 'serve', '--port', String(port)], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/readyz`);
  const allocator = allocatorOf(server.pid!);
  // taskset execs node in place, so the child's pid is the server's.
  const serverPid = server.pid!;

  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses = new Map<number, number>();
  const latencies: number[] = [];
  let served = 0;
  let etag = '';
  const ids = Array.from({ length: records }, (_, i) => `C${String(i).padStart(7, '0')}`);
  const kinds: (() => { path: string; headers: Record<string, string> })[] = [
    () => ({ path: `/v1/clientes?limit=100&offset=${Math.floor(Math.random() * records)}`, headers: { authorization: `Bearer ${key}` } }),
    () => ({ path: '/v1/clientes?limit=1000', headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' } }),
    () => ({ path: `/v1/clientes/${ids[Math.floor(Math.random() * records)]}`, headers: { 'x-api-key': key } }),
    () => ({ path: '/v1/clientes?limit=50', headers: { authorization: `Bearer ${key}`, 'if-none-match': etag } }),
    () => ({ path: '/v1/clientes', headers: { authorization: 'Bearer api_aaaaaaaa_notarealkeynotarealkeynotarealkey1' } }),
    () => ({ path: `/v1/sandbox/obras?limit=${1 + Math.floor(Math.random() * 15)}`, headers: {} }),
    () => ({ path: '/v1/clientes?limit=abc', headers: { authorization: `Bearer ${key}` } }),
  ];
  const one = () =>
    new Promise<void>((resolve) => {
      const { path, headers } = kinds[Math.floor(Math.random() * kinds.length)]!();
      const started = process.hrtime.bigint();
      const req = request(`${base}${path}`, { agent, headers }, (res) => {
        res.on('data', () => {});
        res.on('end', () => {
          latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
          statuses.set(res.statusCode!, (statuses.get(res.statusCode!) ?? 0) + 1);
          if (path === '/v1/clientes?limit=50' && res.headers.etag) etag = res.headers.etag;
          served++;
          resolve();
        });
      });
      req.on('error', () => {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
        resolve();
      });
      req.end();
    });

  const startedAt = Date.now();
  const until = startedAt + minutes * 60_000;
  const warmUntil = startedAt + Math.min(90_000, (minutes * 60_000) / 6);
  let imports = 0;
  const importer = (async () => {
    for (let version = 1; importSeconds > 0 && Date.now() < until; version++) {
      const body = customersCsv(records, version);
      await new Promise<void>((resolve) => {
        const req = request(`${base}/panel/api/imports/clientes`, { method: 'PUT', headers: { authorization: `Bearer ${upload.token}`, 'content-length': body.length } }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', () => resolve());
        req.end(body);
      });
      imports++;
      await new Promise((r) => setTimeout(r, importSeconds * 1000));
    }
  })();
  const workers = Array.from({ length: concurrency }, async () => {
    while (Date.now() < until) {
      await one();
    }
  });
  const samples: MemorySample[] = [];
  const sample = async () => {
    const s = await sampleMemory(base, serverPid, (Date.now() - startedAt) / 1000);
    samples.push(s);
    const mb = (b: number) => (b / 1024 / 1024).toFixed(0);
    process.stderr.write(`soak: ${served} requests, RSS ${mb(s.rss)} MB (heap ${mb(s.heapUsed)}/${mb(s.heapTotal)}, external ${mb(s.external)})\n`);
  };
  await sample();
  const sampler = setInterval(() => void sample().catch(() => {}), sampleSeconds * 1000);
  await Promise.all(workers);
  await importer;
  clearInterval(sampler);
  await sample();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });

  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(2);
  const unexpected = [...statuses].filter(([s]) => ![200, 304, 400, 401, 404, 429].includes(s)).reduce((n, [, c]) => n + c, 0);
  const verdict = rssVerdict(samples.filter((s) => s.at * 1000 >= warmUntil - startedAt).map((s) => s.rss));
  const growth = verdict.growthPct;
  console.log(`soak: ${minutes} min, ${concurrency} concurrent, ${records} customers, ${imports} imports during the run, CHUNK_CACHE_MB=${cacheMb}`);
  console.log(`  requests served   ${served}`);
  console.log(`  allocator         ${allocator}`);
  console.log(`  statuses          ${[...statuses].sort().map(([s, c]) => `${s}: ${c}`).join(', ')}`);
  console.log(`  errors (not 429)  ${unexpected}  (4xx above are the deliberate bad keys and parameters)`);
  console.log(`  latency           p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`);
  console.log(`  server RSS        median of the first third ${(verdict.first / 1024 / 1024).toFixed(1)} MB → of the last third ${(verdict.last / 1024 / 1024).toFixed(1)} MB (${growth >= 0 ? '+' : ''}${growth.toFixed(1)}%; ${verdict.samples} samples after the warm-up)`);
  for (const line of memoryTable(samples, (warmUntil - startedAt) / 1000)) console.log(line);
  if (unexpected > 0 || growth >= 10) process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) await soak();
