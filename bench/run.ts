/**
 * `npm run bench [-- <subcommand>] [options]`: Mirador's benchmarks (issue 4,
 * and the measurements issues 2, 3 and 5 ask for). Each subcommand is an
 * entry of SUBCOMMANDS; a new one (a soak test, say) is one more entry.
 *
 *   npm run bench                      every subcommand below but quick
 *   npm run bench -- api               reads: Mirador ÷ reference server, full downloads
 *   npm run bench -- import            mirador import beside sqlite3 .import
 *   npm run bench -- workers           serve --workers 2 vs 1
 *   npm run bench -- gzip-import       mirador import of a .csv.gz vs the plain file
 *   npm run bench -- import-latency    list p99 during a 500,000-row import vs none
 *   npm run bench -- memory            peak RSS importing a 1 GiB file
 *   npm run bench -- soak              10 minutes of mixed load while imports land (--minutes N)
 *   npm run bench -- soak-cluster      the same on 3 instances behind HAProxy on PostgreSQL, 100 companies (--minutes N)
 *   npm run bench -- storage           database size over 30 nightly re-imports (--nights N --changes N --retention-days D --no-pack)
 *   npm run bench -- offset-latency    median latency of limit=100 at offset 0 and at the end (issue 2)
 *   npm run bench -- webhooks          events delivered per second, import end → delivery delay (issue 19)
 *   npm run bench -- tenants           1,000 companies (~3 million records) loaded through the import pipeline, then a
 *                                      mixed load over them (Zipf) against the largest alone, CHUNK_CACHE_MB default
 *                                      and 32 (--companies N --scale F --seconds N --warmup N --cache-mb N --profile)
 *   npm run bench -- quick             api, import and workers on 10,000 customers, short rounds
 *
 * Options: --customers N, --rounds N, --seconds N, --connections N,
 * --backend sqlite|postgres|all (default all: PostgreSQL when a local server
 * answers), --quick (the quick scale for any subcommand), --only word,word (api: only
 * the scenarios whose name contains one of the words, e.g. --only detail,304,download).
 */
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { apiBench } from './api-bench.js';
import { OUT_DIR, type BenchContext } from './bench-context.js';
import { freshDatabase, postgresAvailable, type Backend, type BenchDatabase } from './databases.js';
import { loadDataset, type Dataset } from './dataset.js';
import { gzipImportBench } from './gzip-import-bench.js';
import { importBench } from './import-bench.js';
import { importLatencyBench } from './import-latency-bench.js';
import { loadTool } from './load.js';
import { DIST, run } from './processes.js';
import { memoryBench } from './memory-bench.js';
import { soak } from './soak.js';
import { soakCluster } from './soak-cluster.js';
import { storageBench } from './storage-bench.js';
import { Report } from './report.js';
import { workersBench } from './workers-bench.js';
import { webhooksBench } from './webhooks-bench.js';
import { tenantsBench } from './tenants-bench.js';

interface Subcommand {
  describe: string;
  run(ctx: BenchContext, datasets: Datasets): Promise<void>;
}

/** One loaded dataset per backend, shared by the subcommands of a run. */
class Datasets {
  private readonly loaded = new Map<Backend, Promise<{ db: BenchDatabase; data: Dataset }>>();

  constructor(private readonly ctx: BenchContext) {}

  get(backend: Backend) {
    let p = this.loaded.get(backend);
    if (!p) {
      p = (async () => {
        const db = await freshDatabase(backend, this.ctx.outDir);
        process.stdout.write(`loading ${this.ctx.customers.toLocaleString('en')} customers and the other kinds into ${backend}…\n`);
        const data = await loadDataset(db.url, this.ctx.customers, this.ctx.fixtureDir);
        await db.settle();
        return { db, data };
      })();
      this.loaded.set(backend, p);
    }
    return p;
  }

  async dropAll() {
    for (const p of this.loaded.values()) await (await p.catch(() => null))?.db.drop();
  }
}

const perBackend = (fn: (ctx: BenchContext, db: BenchDatabase, data: Dataset) => Promise<void>) =>
  async (ctx: BenchContext, datasets: Datasets) => {
    for (const backend of ctx.backends) {
      const { db, data } = await datasets.get(backend);
      await fn(ctx, db, data);
    }
  };

const SUBCOMMANDS: Record<string, Subcommand> = {
  api: { describe: 'reads: Mirador ÷ reference server, full downloads', run: perBackend(apiBench) },
  import: { describe: 'mirador import beside sqlite3 .import', run: (ctx) => importBench(ctx) },
  workers: { describe: 'serve --workers 2 vs 1', run: perBackend(workersBench) },
  'gzip-import': { describe: 'mirador import of the customers file as .csv.gz vs plain', run: (ctx) => gzipImportBench(ctx) },
  'import-latency': { describe: 'list p99 during a 500,000-row import vs none', run: (ctx) => importLatencyBench(ctx) },
  memory: { describe: 'peak RSS importing a 1 GiB file', run: (ctx) => memoryBench(ctx) },
  // Not in "all": it runs for 10 minutes on its own.
  soak: { describe: 'mixed load for 10 minutes while imports land (--minutes N)', run: () => soak() },
  'soak-cluster': { describe: 'the soak on 3 instances behind HAProxy, PostgreSQL, 100 companies (--minutes N)', run: () => soakCluster() },
  // Not in "all": 30 imports of the full file take a while.
  storage: { describe: 'database size over nightly re-imports (--nights N)', run: (ctx) => storageBench(ctx) },
  'offset-latency': { describe: 'median latency of a page at offset 0 and at the end (issue 2)', run: (ctx) => offsetLatency(ctx) },
  webhooks: { describe: 'events delivered per second; import end → delivery delay (issue 19)', run: (ctx) => webhooksBench(ctx) },
  // Not in "all": loading 3 million records takes a while (--quick: 100 companies at a tenth).
  tenants: { describe: '1,000 companies, mixed load over them (Zipf) vs one alone (--companies N --scale F)', run: (ctx) => tenantsBench(ctx) },
};

/** bench/offset-latency.ts is a script of its own (in-process server, sequential requests): run it as one. */
async function offsetLatency(ctx: BenchContext) {
  const r = await run(process.execPath, [join(DIST, 'bench', 'offset-latency.js'), String(ctx.customers), ctx.quick ? '300' : '2000']);
  process.stdout.write(r.stdout);
  if (r.code !== 0) throw new Error(`offset-latency failed: ${r.stderr}`);
  ctx.report.record('offset-latency', r.stdout);
}
const GROUPS: Record<string, string[]> = {
  all: ['api', 'workers', 'import', 'import-latency', 'memory', 'offset-latency'],
  quick: ['api', 'workers', 'import'],
};

async function main() {
  const { values: opts, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      customers: { type: 'string' },
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      connections: { type: 'string' },
      backend: { type: 'string', default: 'all' },
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      // The soak's own (read by soak.ts).
      minutes: { type: 'string' },
      concurrency: { type: 'string' },
      records: { type: 'string' },
      companies: { type: 'string' },
      'cache-mb': { type: 'string' },
      'sample-seconds': { type: 'string' },
      'import-seconds': { type: 'string' },
      // The storage benchmark's (read by storage-bench.ts).
      nights: { type: 'string' },
      changes: { type: 'string' },
      'retention-days': { type: 'string' },
      spread: { type: 'boolean' },
      'no-pack': { type: 'boolean' },
      'no-deploy-env': { type: 'boolean' },
      // The tenants benchmark's (read by tenants-bench.ts).
      scale: { type: 'string' },
      warmup: { type: 'string' },
      lines: { type: 'string' },
      profile: { type: 'boolean' },
    },
  });
  const name = positionals[0] ?? 'all';
  const names = GROUPS[name] ?? (SUBCOMMANDS[name] ? [name] : null);
  if (!names) {
    const list = [...Object.entries(SUBCOMMANDS).map(([k, s]) => `  ${k.padEnd(16)}${s.describe}`), '  all / quick'];
    throw new Error(`unknown subcommand "${name}"; one of:\n${list.join('\n')}`);
  }
  const quick = opts.quick || name === 'quick';
  const backends: Backend[] = [];
  if (opts.backend !== 'postgres') backends.push('sqlite');
  if (opts.backend !== 'sqlite') {
    if (await postgresAvailable()) backends.push('postgres');
    else process.stdout.write('PostgreSQL: no server answers at 127.0.0.1:5432 (BENCH_POSTGRES_URL): skipped.\n');
  }
  const outDir = join(OUT_DIR, 'runs', String(process.pid));
  const fixtureDir = join(OUT_DIR, 'fixtures');
  mkdirSync(outDir, { recursive: true });
  const ctx: BenchContext = {
    quick,
    customers: Number(opts.customers ?? (quick ? 10_000 : 100_000)),
    rounds: Number(opts.rounds ?? (quick ? 2 : 5)),
    seconds: Number(opts.seconds ?? (quick ? 2 : 5)),
    connections: Number(opts.connections ?? 10),
    backends,
    only: opts.only ? opts.only.split(',').map((w) => w.trim()).filter(Boolean) : [],
    outDir,
    fixtureDir,
    report: new Report(OUT_DIR),
  };
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}, load generator ${loadTool()}`;
  const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
  process.stdout.write(`mirador bench ${names.join(', ')}: ${machine}; load average at start ${load()}\n`);
  const datasets = new Datasets(ctx);
  const started = new Date().toISOString();
  try {
    for (const n of names) {
      process.stdout.write(`\n== ${n} (load average ${load()})\n`);
      await SUBCOMMANDS[n]!.run(ctx, datasets);
    }
  } finally {
    await datasets.dropAll();
  }
  ctx.report.save(`bench-${name}`, { started, finished: new Date().toISOString(), machine, loadAverageAtEnd: load(), ctx: { ...ctx, report: undefined } });
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
