/**
 * Issue 23's details: ids drawn from the whole id space of the customers
 * (uniform, and Zipf with s = 1 over a fixed shuffle of them, so that hot ids
 * are not neighbours in list order), measured cold and warm, beside the
 * in-memory reference server and the plain Fastify + better-sqlite3 server
 * (bench/plain-server.ts) in the same run.
 *
 * Each round starts Mirador and the plain server afresh (empty process
 * caches; the operating system's file cache stays warm, as on a server that
 * restarts) and measures the first `seconds` of uniform details on each:
 * the cold figure, which pays for the JIT compiling the code as well as for
 * the data not being in memory. So before it, each round also measures the
 * data cold alone: both servers started afresh, `seconds` of details over
 * the first 1,000 ids (about 1% of the chunks) to compile the code, then
 * `seconds` of uniform details. Then one pass over every id warms both, and
 * the warm scenarios run in alternation with the reference. Medians of the
 * rounds.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_CPU, SERVER_CPU, type BenchContext } from './bench-context.js';
import { code } from './clientes-fixture.js';
import type { BenchDatabase } from './databases.js';
import { COMPANY, type Dataset } from './dataset.js';
import { runLoad, type LoadResult, type LoadSpec } from './load.js';
import { benchNodeArgs, DIST, freePort, MIRADOR, startMirador, startServer, type Server } from './processes.js';
import { fmt, median } from './report.js';
import { openStore } from '../src/store/open-store.js';
import { timeAt } from '../src/http/api/snapshot-reader.js';

const ZIPF_S = 1;
/** Draws in the Zipf list: wrk picks among them uniformly, so each id comes up in proportion to its draws. */
const ZIPF_DRAWS = 200_000;
/** Ids the data-cold row's servers answer first, to compile their code. */
const JIT_IDS = 1_000;

/** node's arguments for the plain server of the benchmark's customers, its copy of the items in `file`. */
export function plainServerArgs(databaseUrl: string, file: string, port: number): string[] {
  return [join(DIST, 'bench', 'plain-server.js'), '--db', databaseUrl, '--file', file, '--company', COMPANY, '--kind', 'clientes', '--port', String(port)];
}

export async function startPlain(db: BenchDatabase, env: Record<string, string>, file: string): Promise<Server> {
  const port = await freePort();
  return startServer({ name: 'plain', args: plainServerArgs(db.url, file, port), env, port, cpus: SERVER_CPU, readyPath: '/' });
}

interface Row {
  name: string;
  target: string;
  mirador: LoadResult[];
  reference: LoadResult[];
  plain: LoadResult[];
}

/**
 * Runs the whole-id-space detail scenarios and reports them in a section of
 * their own. `mirador` is stopped and restarted each round; the server
 * running at the end is returned.
 */
export async function wholeIdSpaceDetails(
  ctx: BenchContext,
  db: BenchDatabase,
  data: Dataset,
  /** Mirador's environment: the dataset's and the unit's (api-bench.ts); the plain server gets the dataset's alone. */
  served: Record<string, string>,
  mirador: Server,
  reference: Server,
  wanted: (name: string) => boolean,
): Promise<Server> {
  const n = data.customers;
  const order = shuffled(n, 7);
  const uniform = order.map((i) => `/v1/clientes/${code('C', i)}`);
  const zipf = zipfDraws(n, ZIPF_DRAWS, ZIPF_S, 11).map((rank) => uniform[rank]!);
  // Neighbours in list order: the JIT's warm-up leaves ~1% of the chunks in memory, not 1,000 scattered ones.
  const jitPaths = Array.from({ length: Math.min(JIT_IDS, n) }, (_, i) => `/v1/clientes/${code('C', i)}`);
  const names = {
    cold: `detail cold (fresh process, first ${ctx.seconds} s), uniform over ${n.toLocaleString('en')} ids`,
    dataCold: `detail, data cold (fresh process after ${ctx.seconds} s on ${JIT_IDS.toLocaleString('en')} ids), uniform over ${n.toLocaleString('en')} ids`,
    uniform: `detail warm, uniform over ${n.toLocaleString('en')} ids`,
    zipf: `detail warm, Zipf s=${ZIPF_S} over ${n.toLocaleString('en')} ids`,
    notModified: `304 warm, uniform over ${n.toLocaleString('en')} ids, vs reference detail`,
  };
  if (!Object.values(names).some(wanted)) return mirador;
  const key = { authorization: `Bearer ${data.key}` };
  const plainFile = join(ctx.outDir, `plain-${db.backend}.db`);
  let plain = await startPlain(db, data.env, plainFile);
  try {
    // Every id's identity ETag, for the 304s (the load generator asks without Accept-Encoding).
    const etags = wanted(names.notModified) ? await identityEtags(db, mirador, key, uniform) : [];
    const rows: Record<keyof typeof names, Row> = {
      cold: { name: names.cold, target: '> plain', mirador: [], reference: [], plain: [] },
      dataCold: { name: names.dataCold, target: '> plain', mirador: [], reference: [], plain: [] },
      uniform: { name: names.uniform, target: '≥ 0.50; > plain', mirador: [], reference: [], plain: [] },
      zipf: { name: names.zipf, target: '≥ 0.50; > plain', mirador: [], reference: [], plain: [] },
      notModified: { name: names.notModified, target: '≥ 0.60', mirador: [], reference: [], plain: [] },
    };
    const load = (server: Server, paths: string[], extra: Partial<LoadSpec> = {}, seconds = ctx.seconds) =>
      runLoad({ base: server.base, paths, headers: key, connections: ctx.connections, seconds, cpus: CLIENT_CPU, ...extra });
    // The load generator only counts errors: check the statuses first.
    for (const path of uniform.slice(0, 20)) {
      const res = await fetch(mirador.base + path, { headers: { ...key, 'accept-encoding': 'identity' } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
      const p = await fetch(plain.base + path, { headers: key });
      if ((await p.text()) !== (await (await fetch(mirador.base + path, { headers: { ...key, 'accept-encoding': 'identity' } })).text())) {
        throw new Error(`${path}: the plain server's bytes differ from Mirador's`);
      }
    }
    const warmUp = async (server: Server, coldRps: number) => {
      // One pass over every id, in shuffled order, at about the cold rate (at least 2 s, at most 30 s).
      const seconds = Math.min(30, Math.max(2, Math.ceil((1.2 * n) / Math.max(coldRps, 1))));
      await load(server, uniform, { sequential: true }, seconds);
    };
    /** Both servers afresh: empty process caches, code not yet compiled. */
    const restartBoth = async () => {
      await mirador.stop();
      mirador = await startMiradorProfiled(served);
      await plain.stop();
      plain = await startPlain(db, data.env, plainFile);
    };
    // JIT of the reference, once.
    await load(reference, uniform, {}, 1);
    for (let round = 0; round < ctx.rounds; round++) {
      if (wanted(names.dataCold)) {
        await restartBoth();
        for (const [server, results] of [
          [mirador, rows.dataCold.mirador],
          [plain, rows.dataCold.plain],
        ] as const) {
          await load(server, jitPaths);
          results.push(await load(server, uniform));
        }
      }
      await restartBoth();
      const mCold = await load(mirador, uniform);
      const pCold = await load(plain, uniform);
      rows.cold.mirador.push(mCold);
      rows.cold.plain.push(pCold);
      await warmUp(mirador, mCold.rps);
      await warmUp(plain, pCold.rps);
      const alternate = round % 2 === 0;
      for (const [row, paths] of [
        [rows.uniform, uniform],
        [rows.zipf, zipf],
      ] as const) {
        if (!wanted(row.name) && row !== rows.uniform) continue;
        const m = () => load(mirador, paths).then((r) => void row.mirador.push(r));
        const r = () => load(reference, paths).then((x) => void row.reference.push(x));
        const p = () => load(plain, paths).then((x) => void row.plain.push(x));
        for (const step of alternate ? [m, r, p] : [p, r, m]) await step();
      }
      // The cold rows and the 304s compare with the reference's uniform figure of the same round.
      const referenceUniform = rows.uniform.reference[rows.uniform.reference.length - 1]!;
      rows.cold.reference.push(referenceUniform);
      if (wanted(names.dataCold)) rows.dataCold.reference.push(referenceUniform);
      if (wanted(names.notModified)) {
        rows.notModified.mirador.push(await load(mirador, uniform, { perPath: { header: 'If-None-Match', values: etags } }));
        rows.notModified.reference.push(referenceUniform);
      }
    }
    const section = ctx.report.section(
      `Details over the whole id space, ${db.backend}: Mirador ÷ reference, and the plain Fastify + better-sqlite3 server`,
      ['scenario', 'Mirador req/s', 'p50 ms', 'p99 ms', 'reference req/s', 'plain req/s', 'plain p99 ms', '÷ reference', '÷ plain', 'target'],
      [
        `Servers pinned to core ${SERVER_CPU}, load generator to core ${CLIENT_CPU}; ${ctx.connections} connections, ${ctx.rounds} rounds of ${ctx.seconds} s, medians. ` +
          `Each round restarts Mirador and the plain server (cold: their first ${ctx.seconds} s), then one pass over every id warms them. ` +
          `Data cold: both restarted once more before that, ${ctx.seconds} s over the first ${JIT_IDS.toLocaleString('en')} ids compile their code, then ${ctx.seconds} s uniform. ` +
          `Zipf: ${ZIPF_DRAWS.toLocaleString('en')} draws of ranks with s = ${ZIPF_S} over a fixed shuffle of the ids. The 304s compare with the reference's uniform detail.`,
      ],
    );
    const bad = Object.values(rows).flatMap((r) => [...r.mirador, ...r.plain]).reduce((a, x) => a + x.bad, 0);
    if (bad > 0) throw new Error(`whole-id-space details: ${bad} responses were errors`);
    for (const row of Object.values(rows)) {
      if (!wanted(row.name) || row.mirador.length === 0) continue;
      const med = (xs: LoadResult[], k: 'rps' | 'p50Ms' | 'p99Ms') => median(xs.map((x) => x[k]));
      const m = med(row.mirador, 'rps');
      const p = row.plain.length > 0 ? med(row.plain, 'rps') : NaN;
      ctx.report.row(section, [
        row.name,
        fmt.int(m),
        fmt.ms(med(row.mirador, 'p50Ms')),
        fmt.ms(med(row.mirador, 'p99Ms')),
        fmt.int(med(row.reference, 'rps')),
        fmt.int(p),
        row.plain.length > 0 ? fmt.ms(med(row.plain, 'p99Ms')) : '—',
        fmt.ratio(m / med(row.reference, 'rps')),
        fmt.ratio(m / p),
        row.target,
      ]);
      ctx.report.record(`${db.backend}:${row.name}`, { mirador: row.mirador, reference: row.reference, plain: row.plain });
    }
  } catch (err) {
    // The caller stops the server it passed in, not the one started here since.
    await mirador.stop();
    throw err;
  } finally {
    await plain.stop();
    // ~400 MB for 100,000 customers: not left behind in bench/out.
    rmSync(plainFile, { force: true });
  }
  return mirador;
}

/**
 * `mirador serve`, as startMirador starts it; with BENCH_CPU_PROF=<dir>, under
 * `node --cpu-prof` (Node 20 refuses it in NODE_OPTIONS), so that each round's
 * server writes a V8 profile there when it stops (bench/cpuprofile-summary.ts).
 */
async function startMiradorProfiled(env: Record<string, string>): Promise<Server> {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return startMirador(env, { cpus: SERVER_CPU });
  const port = await freePort();
  const args = [...benchNodeArgs(), `--cpu-prof`, `--cpu-prof-dir=${dir}`, MIRADOR, 'serve', '--port', String(port), '--host', '127.0.0.1', '--workers', '1'];
  return startServer({ name: 'mirador', args, env, port, cpus: SERVER_CPU });
}

/**
 * Each id's identity ETag (the load generator asks without Accept-Encoding),
 * made from the store's records as the detail route makes it (asking 100,000
 * details of a loaded machine took minutes); the first 20 are checked against
 * the server's own, so a change of the tag's format fails here, loudly.
 */
async function identityEtags(db: BenchDatabase, server: Server, headers: Record<string, string>, paths: string[]): Promise<string[]> {
  const store = await openStore(db.url);
  const tags = new Map<string, string>();
  try {
    const company = (await store.companyBySlug(COMPANY))!;
    const meta = (await store.snapshotMeta((await store.liveSnapshotId(company.id, 'clientes'))!))!;
    for (let after: string | null = null; ; ) {
      const page = await store.readRecordPage(meta.id, after, 10_000);
      for (const r of page) tags.set(r.idErp, `"i${r.hash.toString('hex', 0, 12)}.${timeAt(meta, r.pos).toString(36)}"`);
      if (page.length < 10_000) break;
      after = page[page.length - 1]!.idErp;
    }
  } finally {
    await store.close();
  }
  const out = paths.map((p) => tags.get(decodeURIComponent(p.slice(p.lastIndexOf('/') + 1)))!);
  for (const [i, path] of paths.slice(0, 20).entries()) {
    const res = await fetch(server.base + path, { method: 'HEAD', headers: { ...headers, 'accept-encoding': 'identity' } });
    if (res.headers.get('etag') !== out[i]) throw new Error(`${path}: ETag ${res.headers.get('etag')}, the bench made ${out[i]}`);
  }
  return out;
}

/** A deterministic permutation of 0..n-1. */
function shuffled(n: number, seed: number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const j = seed % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** `count` ranks in 0..n-1 drawn with P(rank k) ∝ 1 / (k + 1)^s, deterministic. */
function zipfDraws(n: number, count: number, s: number, seed: number): number[] {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1) ** s;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const u = (seed / 4294967296) * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    out.push(lo);
  }
  return out;
}
