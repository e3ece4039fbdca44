/**
 * `npm run bench -- tenants` (issue 23, point 5): a thousand companies on one
 * server. Loads them through the import pipeline (tenants-load.ts: sizes
 * skewed, ~3 million records at full scale), then drives the same request mix
 * (tenants-requests.ts) with wrk at the companies drawn from a Zipf
 * distribution, and at the largest company alone (the baseline), with
 * CHUNK_CACHE_MB at its default and at 32. Each measurement is a fresh
 * `mirador serve` pinned to one core (wrk on the other), warmed up with the
 * same mix from another point of the lines, then measured; the chunk cache's
 * hit rate and the statuses come from the server's GET /metrics before and
 * after, its RSS from /proc every second.
 *
 *   npm run bench -- tenants [--backend sqlite|postgres|all] [--companies 1000] [--scale 1]
 *     [--seconds 30] [--warmup 20] [--connections 10] [--cache-mb 32] [--profile]
 *
 * --quick: 100 companies at scale 0.1, 10 s measured after 5 s of warm-up.
 * --profile: the servers run with `node --cpu-prof`; the summary of each
 * profile is printed (bench/cpuprofile-summary.ts).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { CLIENT_CPU, SERVER_CPU, type BenchContext } from './bench-context.js';
import { freshDatabase, type Backend, type BenchDatabase } from './databases.js';
import { benchNodeArgs, DIST, MIRADOR, freePort, miradorEnv, run, startServer, type Env, type Server } from './processes.js';
import { arg, sampleMemory, type MemorySample } from './soak.js';
import { FULL_COMPANIES, planTenants, totalRecords } from './tenants-plan.js';
import { databaseBreakdown, databaseBytes, loadTenants, type LoadFigures, type Tenant } from './tenants-load.js';
import { filterValues, MIX, WRK_SCRIPT, writeRequestLines } from './tenants-requests.js';
import { deploymentEnv } from './deployment-env.js';

const WRK = '/usr/bin/wrk';
const DEFAULT_CACHE_MB = 512; // src/config.ts's default for CHUNK_CACHE_MB

interface Measured {
  backend: Backend;
  mix: 'single' | 'mixed';
  cacheMb: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  bad: number;
  statuses: Record<string, number>;
  hitRate: number;
  metaHitRate: number;
  maxRssMb: number;
  cacheBytesMb: number;
  /** What each read cache holds at the end (MB), against CHUNK_CACHE_MB's shares (read-cache-budget.ts). */
  readCachesMb: Record<string, number>;
  /** The server's memory at the end of the measurement: what its RSS is made of. */
  memory: MemorySample;
  profile?: string;
}

export async function tenantsBench(ctx: BenchContext): Promise<void> {
  const flag = (name: string) => process.argv.includes(`--${name}`);
  const companies = arg('companies', ctx.quick ? 100 : FULL_COMPANIES);
  const scale = arg('scale', ctx.quick ? 0.1 : 1);
  const seconds = arg('seconds', ctx.quick ? 10 : 30);
  const warmup = arg('warmup', ctx.quick ? 5 : 20);
  const lowCacheMb = arg('cache-mb', 32);
  const lineCount = arg('lines', 200_000);
  const profile = flag('profile');
  const plans = planTenants(companies, scale);
  const say = (s: string) => process.stdout.write(`${s}\n`);
  say(`tenants: ${companies} companies at scale ${scale}: ${plans[0]!.customers.toLocaleString('en')} customers in the largest, ${totalRecords(plans).toLocaleString('en')} records in all; ${warmup} s warm-up, ${seconds} s measured, ${ctx.connections} connections`);

  for (const backend of ctx.backends) {
    const db = await freshDatabase(backend, ctx.outDir);
    try {
      say(`\n-- ${backend}: loading through the import pipeline (in-process queueLocalFile + ImportWorker.runOnce, load average ${load()})`);
      const { tenants, figures } = await loadTenants(db.url, plans, ctx.fixtureDir, (l) => say(l));
      await db.settle();
      const dbBytes = await databaseBytes(db.url);
      say(describeLoad(figures, dbBytes));
      const breakdown = await databaseBreakdown(db);
      say(`  largest tables (MiB, with their indexes${db.backend === 'postgres' ? ' and TOAST' : ''}): ${breakdown.map(([n, m]) => `${n} ${m}`).join(', ')}`);
      const rows = await measureAll(ctx, db, tenants, { seconds, warmup, lowCacheMb, lineCount, profile }, say);
      const table = resultTable(rows);
      say(table);
      ctx.report.record(`tenants-${backend}`, { companies, scale, seconds, warmup, connections: ctx.connections, load: figures, databaseBytes: dbBytes, breakdown, rows, table });
    } finally {
      await db.drop();
    }
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function describeLoad(f: LoadFigures, dbBytes: number): string {
  const mib = f.bytes / 1024 / 1024;
  return [
    `  loaded ${f.imports} imports, ${f.records.toLocaleString('en')} records, ${mib.toFixed(0)} MiB of CSV in ${s1(f.importMs)}`,
    `    (${(f.records / (f.importMs / 1000)).toFixed(0)} records/s, ${(mib / (f.importMs / 1000)).toFixed(1)} MiB/s, ${(f.importMs / f.imports).toFixed(0)} ms an import on average;`,
    `    slowest ${s1(f.slowest.ms)}: ${f.slowest.kind} of ${f.slowest.slug}, ${f.slowest.rows.toLocaleString('en')} rows)`,
    `  gzip segments of every live snapshot afterwards: ${f.segmentPasses} passes in ${s1(f.segmentsMs)}`,
    `  CSV files generated (or reused): ${f.files} in ${s1(f.generateMs)}`,
    `  database size: ${(dbBytes / 1024 / 1024).toFixed(0)} MiB (load average ${load()})`,
  ].join('\n');
}

async function measureAll(
  ctx: BenchContext,
  db: BenchDatabase,
  tenants: Tenant[],
  o: { seconds: number; warmup: number; lowCacheMb: number; lineCount: number; profile: boolean },
  say: (s: string) => void,
): Promise<Measured[]> {
  const largest = tenants[0]!;
  const files = { single: join(ctx.outDir, `tenants-${db.backend}-single.lines`), mixed: join(ctx.outDir, `tenants-${db.backend}-mixed.lines`) };
  // The lines (and the ETags revalidations need) are made against a server of their own, stopped before measuring.
  const prep = await startMirador(miradorEnv(db.url), null, false, ctx.outDir);
  try {
    const values = await filterValues(prep.base, largest);
    const made = { single: 0, mixed: 0 };
    for (const mix of ['single', 'mixed'] as const) {
      const r = await writeRequestLines({ base: prep.base, tenants: mix === 'single' ? [largest] : tenants, values, count: o.lineCount, file: files[mix], seed: 20261127 });
      made[mix] = r.lines;
    }
    say(`  request lines: ${o.lineCount.toLocaleString('en')} per mix (${MIX.map((m) => `${m.name} ${m.weight}%`).join(', ')}); estado values ${values.estado.obras.length + values.estado['avisos-correctivo'].length}, q words ${values.words.length}`);
  } finally {
    await prep.stop();
  }
  const script = join(ctx.outDir, 'tenants.lua');
  writeFileSync(script, WRK_SCRIPT);
  const rows: Measured[] = [];
  for (const cacheMb of [DEFAULT_CACHE_MB, o.lowCacheMb]) {
    for (const mix of ['single', 'mixed'] as const) {
      // The deployment's malloc settings (deploy/mirador.service): RSS is judged as a server would run.
      const env = miradorEnv(db.url, { ...deploymentEnv(), ...(cacheMb === DEFAULT_CACHE_MB ? {} : { CHUNK_CACHE_MB: String(cacheMb) }) });
      if (cacheMb === DEFAULT_CACHE_MB) delete env.CHUNK_CACHE_MB;
      const profDir = o.profile ? join(ctx.outDir, `prof-${db.backend}-${mix}-${cacheMb}`) : null;
      const server = await startMirador(env, SERVER_CPU, o.profile, profDir ?? ctx.outDir);
      let m: Measured;
      try {
        const warm = await wrk(server.base, script, files[mix], 0, o.warmup, ctx.connections);
        // The measurement starts at the middle of the lines: a warm-up past it would replay them warm.
        if (warm.requests > o.lineCount / 2) say(`  warning: the warm-up sent ${warm.requests} requests, past the measurement's first line: use --lines ${4 * warm.requests}`);
        const before = await scrape(server.base);
        const rss = sampleRss(server.child.pid!);
        const r = await wrk(server.base, script, files[mix], Math.floor(o.lineCount / 2), o.seconds, ctx.connections);
        const maxRss = rss.stop();
        const memory = await sampleMemory(server.base, server.child.pid!, o.seconds);
        const after = await scrape(server.base);
        const d = (name: string) => (after.values[name] ?? 0) - (before.values[name] ?? 0);
        const statuses: Record<string, number> = {};
        for (const [s, n] of Object.entries(after.statuses)) if (n - (before.statuses[s] ?? 0) > 0) statuses[s] = n - (before.statuses[s] ?? 0);
        m = {
          backend: db.backend,
          mix,
          cacheMb,
          ...r,
          statuses,
          hitRate: d('mirador_chunk_cache_hits_total') / Math.max(1, d('mirador_chunk_cache_hits_total') + d('mirador_chunk_cache_misses_total')),
          metaHitRate: d('mirador_snapshot_meta_cache_hits_total') / Math.max(1, d('mirador_snapshot_meta_cache_hits_total') + d('mirador_snapshot_meta_cache_misses_total')),
          maxRssMb: maxRss / 1024 / 1024,
          cacheBytesMb: (after.values.mirador_chunk_cache_bytes ?? 0) / 1024 / 1024,
          readCachesMb: Object.fromEntries(Object.entries(after.readCaches).map(([c, b]) => [c, b / 1024 / 1024])),
          memory,
        };
      } finally {
        await server.stop();
      }
      if (profDir) m.profile = await summariseProfile(profDir);
      rows.push(m);
      say(
        `  ${mix.padEnd(6)} CHUNK_CACHE_MB=${String(cacheMb).padEnd(4)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms  ` +
          `hit rate ${(m.hitRate * 100).toFixed(1)}% (metas ${(m.metaHitRate * 100).toFixed(1)}%)  RSS ≤ ${m.maxRssMb.toFixed(0)} MB  ` +
          `statuses ${JSON.stringify(m.statuses)}  bad ${m.bad}  (load average ${load()})`,
      );
      const mb = (b: number) => (b / 1024 / 1024).toFixed(0);
      const other = m.memory.rssAnon - m.memory.heapTotal - m.memory.external;
      say(
        `         memory at the end: RSS ${mb(m.memory.rss)} MB = heap ${mb(m.memory.heapUsed)}/${mb(m.memory.heapTotal)} (used/total) + external (Buffers) ${mb(m.memory.external)}` +
          ` + other anon ${mb(other)} (SQLite, malloc, threads) + file/shm ${mb(m.memory.rssFileShmem)}; read caches hold ${Object.entries(m.readCachesMb).map(([c, v]) => `${c} ${v.toFixed(1)}`).join(', ')} MB`,
      );
      if (m.profile) say(m.profile);
    }
  }
  return rows;
}

async function startMirador(env: Env, cpus: string | null, profile: boolean, profDir: string): Promise<Server> {
  const port = await freePort();
  const prof = profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  return startServer({ name: 'mirador', args: [...benchNodeArgs(), ...prof, MIRADOR, 'serve', '--port', String(port), '--host', '127.0.0.1', '--workers', '1'], env, port, cpus });
}

async function wrk(base: string, script: string, lines: string, start: number, seconds: number, connections: number) {
  const r = await run(WRK, ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, base + '/', '--', lines, String(start)], { cpus: CLIENT_CPU });
  const json = r.stdout.split('\n').find((l) => l.startsWith('{"requests"'));
  if (r.code !== 0 || !json) throw new Error(`wrk failed (${r.code}): ${r.stderr || r.stdout}`);
  const o = JSON.parse(json) as { requests: number; duration_us: number; p50_us: number; p99_us: number; bad: number };
  return { rps: o.requests / (o.duration_us / 1e6), p50Ms: o.p50_us / 1000, p99Ms: o.p99_us / 1000, requests: o.requests, bad: o.bad };
}

/** The server's counters: unlabelled series by name, /v1 requests by status, and each read cache's bytes. */
async function scrape(base: string): Promise<{ values: Record<string, number>; statuses: Record<string, number>; readCaches: Record<string, number> }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const values: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  const readCaches: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const plain = /^(mirador_[a-z_]+) (\S+)$/.exec(line);
    if (plain) values[plain[1]!] = Number(plain[2]);
    const req = /^mirador_http_requests_total\{route="\/v1[^"]*",method="GET",status="(\d+)"\} (\S+)$/.exec(line);
    if (req) statuses[req[1]!] = (statuses[req[1]!] ?? 0) + Number(req[2]);
    const cache = /^mirador_read_cache_bytes\{cache="(\w+)"\} (\S+)$/.exec(line);
    if (cache) readCaches[cache[1]!] = Number(cache[2]);
  }
  return { values, statuses, readCaches };
}

/** The highest VmRSS of `pid`, sampled every second until stopped. */
function sampleRss(pid: number): { stop(): number } {
  let max = 0;
  const sample = () => {
    try {
      const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      max = Math.max(max, kb * 1024);
    } catch {
      // exited
    }
  };
  sample();
  const timer = setInterval(sample, 1000);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return max;
    },
  };
}

async function summariseProfile(dir: string): Promise<string> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
  if (files.length === 0) return '  (no profile written)';
  const largest = files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
  const r = await run(process.execPath, [join(DIST, 'bench', 'cpuprofile-summary.js'), largest, '25']);
  return `  profile ${largest}:\n${r.stdout.replace(/^/gm, '    ')}`;
}

export function resultTable(rows: readonly Measured[]): string {
  const single = (cacheMb: number) => rows.find((r) => r.mix === 'single' && r.cacheMb === cacheMb);
  const baseline = single(DEFAULT_CACHE_MB);
  const lines = [
    '| store | requests to | CHUNK_CACHE_MB | req/s | ÷ single (default cache) | p50 ms | p99 ms | chunk-cache hit rate | meta hit rate | max RSS MB | RSS target | statuses |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of rows) {
    const ratio = baseline ? r.rps / baseline.rps : NaN;
    const target = r.mix === 'mixed' ? (r.cacheMb === DEFAULT_CACHE_MB ? 0.5 : 0.25) : null;
    const verdict = target === null ? '' : ` (target ≥ ${target}: ${ratio >= target ? 'met' : 'missed'})`;
    const rssOk = r.maxRssMb <= r.cacheMb + 200 ? 'met' : 'missed';
    lines.push(
      `| ${r.backend} | ${r.mix === 'single' ? 'largest company alone' : 'Zipf over all'} | ${r.cacheMb}${r.cacheMb === DEFAULT_CACHE_MB ? ' (default)' : ''} | ${r.rps.toFixed(0)} | ${ratio.toFixed(2)}${verdict} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${(r.hitRate * 100).toFixed(1)}% | ${(r.metaHitRate * 100).toFixed(1)}% | ${r.maxRssMb.toFixed(0)} | ≤ ${r.cacheMb + 200}: ${rssOk} | ${Object.entries(r.statuses).map(([s, n]) => `${s}: ${n}`).join(', ')} |`,
    );
  }
  return lines.join('\n');
}
