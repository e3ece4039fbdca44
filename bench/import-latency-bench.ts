/**
 * Issue 3 point 8: the import worker never blocks the HTTP thread. A server
 * (not pinned, as in production) answers list requests at a steady rate while
 * nothing happens, then while a 500,000-customer import is uploaded and
 * applied by its worker; p50/p99/max of both phases, same run.
 */
import { join } from 'node:path';
import { openStore } from '../src/store/open-store.js';
import type { BenchContext } from './bench-context.js';
import { ensureSampleCsv } from './clientes-fixture.js';
import { freshDatabase, type Backend } from './databases.js';
import { COMPANY, importFile } from './dataset.js';
import { DIST, mirador, miradorEnv, startMirador, type Env, type Server } from './processes.js';
import { fmt, median, percentile } from './report.js';
import { spawn } from 'node:child_process';

/** 100 requests per second: a busy integration, far below what the server can take. */
const INTERVAL_MS = 10;

interface ProbeResult {
  latencies: number[];
  errors: number;
  /** The slowest requests: when they were due (ms from the probe's start) and how long they took. */
  slowest: { at: number; ms: number }[];
}

interface Probe {
  stop(): Promise<ProbeResult>;
}

function startProbe(server: Server, key: string): Probe {
  const spec = { url: `${server.base}/v1/clientes?limit=100`, key, intervalMs: INTERVAL_MS };
  const child = spawn(process.execPath, [join(DIST, 'bench', 'latency-probe.js'), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await closed;
      return JSON.parse(out) as ProbeResult;
    },
  };
}

async function oneBackend(ctx: BenchContext, backend: Backend, rows: number) {
  const db = await freshDatabase(backend, ctx.outDir);
  const env: Env = miradorEnv(db.url);
  const big = await ensureSampleCsv({ kind: 'clientes', rows, dir: ctx.fixtureDir });
  const small = await ensureSampleCsv({ kind: 'clientes', rows: 10_000, dir: ctx.fixtureDir });
  await mirador(['company', 'create', COMPANY, '--name', 'Benchmark S.L.'], env);
  const { key } = JSON.parse((await mirador(['key', 'create', COMPANY, '--json'], env)).stdout) as { key: string };
  await importFile(env, 'clientes', small);
  const server = await startMirador(env, { cpus: null });
  const store = await openStore(db.url);
  try {
    const quietSeconds = ctx.quick ? 5 : 15;
    let probe = startProbe(server, key);
    await new Promise((r) => setTimeout(r, quietSeconds * 1000));
    const quiet = await probe.stop();

    probe = startProbe(server, key);
    const started = performance.now();
    const queued = JSON.parse((await mirador(['import', COMPANY, 'clientes', big, '--no-wait', '--json'], env)).stdout) as { id: number };
    const timeline: Record<string, number> = { queued: performance.now() - started };
    let status = 'queued';
    while (status === 'queued' || status === 'running') {
      await new Promise((r) => setTimeout(r, 100));
      status = (await store.importById(queued.id))!.status;
      if (status === 'running') timeline.running ??= performance.now() - started;
    }
    const importMs = performance.now() - started;
    timeline.done = importMs;
    const busy = await probe.stop();
    if (status !== 'succeeded') throw new Error(`the ${rows}-row import ${status}`);
    return { quiet, busy, importMs, timeline };
  } finally {
    await store.close();
    await server.stop();
    await db.drop();
  }
}

export async function importLatencyBench(ctx: BenchContext): Promise<void> {
  const rows = ctx.quick ? 50_000 : 500_000;
  const section = ctx.report.section(
    `List latency during a ${rows.toLocaleString('en')}-customer import (issue 3, point 8)`,
    ['backend', 'phase', 'requests', 'p50 ms', 'p99 ms', 'max ms', 'errors'],
    [
      `\`mirador serve\` (not pinned) answers GET /v1/clientes?limit=100 every ${INTERVAL_MS} ms (latency from when each request was due); ` +
        'first with nothing else running, then from the upload of the file (`mirador import --no-wait`) until its worker has published it.',
    ],
  );
  for (const backend of ctx.backends) {
    const { quiet, busy, importMs, timeline } = await oneBackend(ctx, backend, rows);
    for (const [phase, r] of [['no import', quiet], [`during the import (${(importMs / 1000).toFixed(1)} s)`, busy]] as const) {
      const l = r.latencies;
      ctx.report.row(section, [backend, phase, fmt.int(l.length), fmt.ms(median(l)), fmt.ms(percentile(l, 99)), fmt.ms(Math.max(...l)), String(r.errors)]);
    }
    const when = Object.entries(timeline).map(([k, v]) => `${k} at ${(v / 1000).toFixed(1)} s`).join(', ');
    const slow = busy.slowest.map((x) => `${x.ms} ms at ${(x.at / 1000).toFixed(1)} s`).join(', ');
    process.stdout.write(`  ${backend}: upload ${when}; slowest during the import: ${slow}\n`);
    ctx.report.record(`import-latency:${backend}`, { importMs, timeline, quiet: summary(quiet.latencies), busy: summary(busy.latencies), slowest: busy.slowest });
  }
}

function summary(l: number[]) {
  return { n: l.length, p50: median(l), p90: percentile(l, 90), p99: percentile(l, 99), max: Math.max(...l) };
}
