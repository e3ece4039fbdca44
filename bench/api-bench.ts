/**
 * Issue 4's read scenarios: Mirador and the reference server, both pinned to
 * core 0, measured in alternation (several rounds, medians) by a load
 * generator or a download client pinned to core 1. Details over the whole id
 * space, cold and warm, beside the plain Fastify + better-sqlite3 server,
 * are detail-scenarios.ts's (issue 23).
 */
import { join } from 'node:path';
import { CLIENT_CPU, SERVER_CPU, type BenchContext } from './bench-context.js';
import { code } from './clientes-fixture.js';
import type { BenchDatabase } from './databases.js';
import { COMPANY, reimportTime, waitForSegments, type Dataset } from './dataset.js';
import { wholeIdSpaceDetails } from './detail-scenarios.js';
import { allocatorLine, deploymentEnv } from './deployment-env.js';
import { runLoad, type LoadResult } from './load.js';
import { DIST, freePort, run, startMirador, startServer, type Server } from './processes.js';
import { fmt, median } from './report.js';

interface Scenario {
  name: string;
  paths: string[];
  /** Mirador gets these headers on top of the key. */
  headers?: Record<string, string>;
  /** The reference scenario to compare with, when not the same paths (the 304 compares with a detail). */
  reference?: { paths: string[] };
  target: string;
  /** The status every Mirador response must have (checked before the load runs). */
  status: 200 | 304;
  /** Also compare with Mirador's own offset-0 page (a page must cost the same at any offset). */
  vsOffset0?: boolean;
  isOffset0?: boolean;
  /** The reference server of notices rather than customers. */
  notices?: boolean;
  /** Mirador's unfiltered page of the same size, measured before: a subset must cost within 25% of it. */
  baseline?: string;
  /** Every request a filter never asked before (LoadSpec.uniqueSuffix): Mirador alone, as the reference scans for each. */
  uniqueSuffix?: string;
}

export async function startReference(db: BenchDatabase, env: Record<string, string>, kind = 'clientes'): Promise<Server> {
  const port = await freePort();
  const args = [join(DIST, 'bench', 'reference-server.js'), '--db', db.url, '--company', COMPANY, '--kind', kind, '--port', String(port)];
  return startServer({ name: 'reference', args, env, port, cpus: SERVER_CPU, readyPath: '/' });
}

export async function apiBench(ctx: BenchContext, db: BenchDatabase, data: Dataset): Promise<void> {
  const { report } = ctx;
  // Mirador runs as the shipped unit runs it (its allocator first); the anchors are plain node.
  const served = { ...data.env, ...deploymentEnv() };
  let mirador = await startMirador(served, { cpus: SERVER_CPU });
  process.stderr.write(allocatorLine(mirador.child.pid!));
  // The server's import process makes the gzip segments of what `mirador import` published.
  const waited = await waitForSegments(db.url);
  process.stderr.write(`gzip segments made by the server in ${(waited / 1000).toFixed(1)} s\n`);
  const reference = await startReference(db, data.env);
  const filtered = wanted(ctx, 'subset');
  const noticesReference = filtered ? await startReference(db, data.env, 'avisos-correctivo') : null;
  try {
    const since = await reimportTime(mirador.base, data.key, data.customers);
    const n = data.customers;
    // A working set of 1,000 ids, as before issue 23; the whole id space is detail-scenarios.ts's.
    const detailPaths = randomIds(n, 1000).map((i) => `/v1/clientes/${code('C', i)}`);
    const scenarios: Scenario[] = [
      { name: 'list limit=100, offset 0', paths: ['/v1/clientes?limit=100'], status: 200, target: '≥ 0.35', isOffset0: true },
      { name: 'list limit=1000', paths: ['/v1/clientes?limit=1000'], status: 200, target: '≥ 0.35' },
      { name: `list limit=100, offset ${n - 1000}`, paths: [`/v1/clientes?limit=100&offset=${n - 1000}`], status: 200, target: '≥ 0.35; within 10% of offset 0', vsOffset0: true },
      { name: 'list limit=100, updated_since (last 1%)', paths: [`/v1/clientes?limit=100&updated_since=${since}`], status: 200, target: 'within 10% of offset 0', vsOffset0: true },
      { name: 'detail, 1,000 ids', paths: detailPaths, status: 200, target: '≥ 0.50' },
      ...(filtered ? await subsetScenarios(mirador, data) : []),
    ];
    const section = report.section(
      `Reads, ${db.backend}: Mirador ÷ reference (${n.toLocaleString('en')} customers)`,
      ['scenario', 'Mirador req/s', 'p50 ms', 'p99 ms', 'reference req/s', 'p50 ms', 'p99 ms', 'ratio', 'target'],
      [
        `Servers pinned to core ${SERVER_CPU}, load generator to core ${CLIENT_CPU}; ${ctx.connections} connections, ` +
          `${ctx.rounds} alternating rounds of ${ctx.seconds} s per server, medians.`,
      ],
    );
    const offset0 = { rps: NaN };
    const measured = new Map<string, number>();
    for (const s of scenarios.filter((x) => wanted(ctx, x.name))) {
      const ref = s.notices ? noticesReference! : reference;
      const headers = { authorization: `Bearer ${data.key}`, ...s.headers };
      const refHeaders = { authorization: `Bearer ${data.key}` };
      const refPaths = s.reference?.paths ?? s.paths;
      const m: LoadResult[] = [];
      const r: LoadResult[] = [];
      const load = (server: Server, paths: string[], h: Record<string, string>, seconds: number) =>
        runLoad({ base: server.base, paths, headers: h, connections: ctx.connections, seconds, cpus: CLIENT_CPU, uniqueSuffix: server === mirador ? s.uniqueSuffix : undefined });
      const alone = s.uniqueSuffix !== undefined;
      // The load generator only counts errors: check that each path gets the status measured.
      for (const path of s.paths.slice(0, 20)) {
        const res = await fetch(mirador.base + path + (s.uniqueSuffix ?? ''), { headers: { 'accept-encoding': 'identity', ...headers } });
        await res.arrayBuffer();
        if (res.status !== s.status) throw new Error(`${s.name}: ${path} answered ${res.status}, not ${s.status}`);
      }
      // The reference computes a filter's positions on its first request (a scan): done here, before any timing.
      if (!alone) for (const path of refPaths.slice(0, 20)) await (await fetch(ref.base + path, { headers: { ...refHeaders, 'accept-encoding': 'identity' } })).arrayBuffer();
      // Warm-up: JIT, caches.
      await load(mirador, s.paths, headers, 1);
      if (!alone) await load(ref, refPaths, refHeaders, 1);
      for (let round = 0; round < ctx.rounds; round++) {
        const order = alone ? ['m'] : round % 2 === 0 ? ['m', 'r'] : ['r', 'm'];
        for (const who of order) {
          if (who === 'm') m.push(await load(mirador, s.paths, headers, ctx.seconds));
          else r.push(await load(ref, refPaths, refHeaders, ctx.seconds));
        }
      }
      const bad = [...m, ...r].reduce((a, x) => a + x.bad, 0);
      if (bad > 0) throw new Error(`${s.name}: ${bad} responses were errors`);
      const med = (xs: LoadResult[], k: 'rps' | 'p50Ms' | 'p99Ms') => (xs.length === 0 ? NaN : median(xs.map((x) => x[k])));
      const ratio = med(m, 'rps') / med(r, 'rps');
      if (s.isOffset0) offset0.rps = med(m, 'rps');
      measured.set(s.name, med(m, 'rps'));
      const base = s.baseline === undefined ? undefined : measured.get(s.baseline);
      const vsOffset0 =
        (s.vsOffset0 ? ` (${fmt.ratio(med(m, 'rps') / offset0.rps)} of offset 0)` : '') +
        (base === undefined ? '' : ` (${fmt.ratio(med(m, 'rps') / base)} of unfiltered)`);
      report.row(section, [
        s.name,
        fmt.int(med(m, 'rps')),
        fmt.ms(med(m, 'p50Ms')),
        fmt.ms(med(m, 'p99Ms')),
        alone ? '—' : fmt.int(med(r, 'rps')),
        alone ? '—' : fmt.ms(med(r, 'p50Ms')),
        alone ? '—' : fmt.ms(med(r, 'p99Ms')),
        (alone ? '—' : fmt.ratio(ratio)) + vsOffset0,
        s.target,
      ]);
      report.record(`${db.backend}:${s.name}`, { mirador: m, reference: r, tool: m[0]?.tool });
    }
    mirador = await wholeIdSpaceDetails(ctx, db, data, served, mirador, reference, (name) => wanted(ctx, name));
    if (wanted(ctx, 'page cost')) await pageCostByPosition(ctx, db, data, mirador, since);
    if (wanted(ctx, 'download')) mirador = await downloads(ctx, db, data, served, mirador, reference);
  } finally {
    await mirador.stop();
    await reference.stop();
    await noticesReference?.stop();
  }
}

/**
 * Issue 17's scenarios: filtered and thin pages on the customers and notices
 * of the dataset, each beside Mirador's unfiltered page of the same size. The
 * values filtered on are picked from the data: the `estado` nearest 10% of
 * notices, a customer with a few notices, words of a customer's name.
 */
async function subsetScenarios(mirador: Server, data: Dataset): Promise<Scenario[]> {
  const get = async (path: string) => {
    const res = await fetch(mirador.base + path, { headers: { authorization: `Bearer ${data.key}` } });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { total: number; items: Record<string, string | null>[] };
  };
  const notices = await get('/v1/avisos-correctivo?limit=1000');
  const all = notices.total;
  let estado = '';
  let best = Infinity;
  for (const value of new Set(notices.items.map((i) => i.estado).filter((e): e is string => e !== null))) {
    const { total } = await get(`/v1/avisos-correctivo?limit=1&estado=${encodeURIComponent(value)}`);
    if (Math.abs(total / all - 0.1) < best) [estado, best] = [value, Math.abs(total / all - 0.1)];
  }
  const e = encodeURIComponent(estado);
  const { total: estadoTotal } = await get(`/v1/avisos-correctivo?limit=1&estado=${e}`);
  const customer = notices.items[500]!.cliente_id_erp!;
  const { total: customerTotal } = await get(`/v1/avisos-correctivo?limit=1&cliente_id_erp=${customer}`);
  const since = notices.items[0]!.actualizado_at!;
  const name = (await get(`/v1/clientes/${code('C', 1234)}`.replace('/v1/clientes/', '/v1/clientes?limit=1&id_erp='))).items[0]!.nombre!;
  const words = name.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3);
  const q1 = encodeURIComponent(words[0]!.slice(0, 4));
  const q2 = encodeURIComponent(`${words[0]!.slice(0, 4)} ${(words[1] ?? words[0]!).slice(0, 3)}`);
  const { total: q1Total } = await get(`/v1/clientes?limit=1&q=${q1}`);
  const { total: q2Total } = await get(`/v1/clientes?limit=1&q=${q2}`);
  process.stderr.write(
    `subsets: estado=${estado} ${estadoTotal} of ${all} notices; cliente_id_erp=${customer} ${customerTotal}; q=${decodeURIComponent(q1)} ${q1Total}, q=${decodeURIComponent(q2)} ${q2Total} customers\n`,
  );
  const full = await fetch(`${mirador.base}/v1/clientes?limit=1000`, { headers: { authorization: `Bearer ${data.key}`, 'accept-encoding': 'identity' } });
  const thin = await fetch(`${mirador.base}/v1/clientes?limit=1000&fields=id_erp,nombre`, { headers: { authorization: `Bearer ${data.key}`, 'accept-encoding': 'identity' } });
  const [fullBytes, thinBytes] = [(await full.arrayBuffer()).byteLength, (await thin.arrayBuffer()).byteLength];
  process.stderr.write(`subsets: thin page of 1000 customers ${thinBytes} bytes, full page ${fullBytes} bytes (${(fullBytes / thinBytes).toFixed(1)}× fewer)\n`);
  const deep = Math.max(0, estadoTotal - 200);
  return [
    { name: 'subset: notices unfiltered limit=100', paths: ['/v1/avisos-correctivo?limit=100'], status: 200, target: '—', notices: true },
    { name: 'subset: notices unfiltered limit=1000', paths: ['/v1/avisos-correctivo?limit=1000'], status: 200, target: '—', notices: true },
    { name: `subset: estado (${estadoTotal}) limit=100`, paths: [`/v1/avisos-correctivo?limit=100&estado=${e}`], status: 200, target: '≥ 0.35; within 25%', notices: true, baseline: 'subset: notices unfiltered limit=100' },
    { name: `subset: estado (${estadoTotal}) limit=1000`, paths: [`/v1/avisos-correctivo?limit=1000&estado=${e}`], status: 200, target: '≥ 0.35; within 25%', notices: true, baseline: 'subset: notices unfiltered limit=1000' },
    // The scenarios above ask one filter again and again, and find its matches and gathered blocks
    // kept (gathered-page.ts). Here each request is a filter never asked before (a value no notice
    // has, added to the same estado), so it computes its matches and gathers its items: what the
    // first walk of a filter, or a filter asked once, costs.
    {
      name: `subset: estado (${estadoTotal}) limit=100, each request a new filter (first asks)`,
      paths: [`/v1/avisos-correctivo?limit=100&estado=${e}`],
      uniqueSuffix: '&estado=first-ask-',
      status: 200,
      target: 'reported',
      notices: true,
      baseline: 'subset: notices unfiltered limit=100',
    },
    { name: `subset: cliente_id_erp (${customerTotal})`, paths: [`/v1/avisos-correctivo?cliente_id_erp=${customer}`], status: 200, target: '≥ 0.35; within 25%', notices: true, baseline: 'subset: notices unfiltered limit=100' },
    {
      name: `subset: cliente_id_erp, 5,000 customers, each request a new filter (first asks)`,
      paths: randomIds(data.customers, 5000).map((i) => `/v1/avisos-correctivo?cliente_id_erp=${code('C', i)}`),
      uniqueSuffix: '&cliente_id_erp=first-ask-',
      status: 200,
      target: 'reported',
      notices: true,
      baseline: `subset: cliente_id_erp (${customerTotal})`,
    },
    { name: `subset: estado + updated_since limit=100`, paths: [`/v1/avisos-correctivo?limit=100&estado=${e}&updated_since=${since}`], status: 200, target: '≥ 0.35; within 25%', notices: true, baseline: 'subset: notices unfiltered limit=100' },
    { name: `subset: estado, deep page (offset ${deep})`, paths: [`/v1/avisos-correctivo?limit=100&estado=${e}&offset=${deep}`], status: 200, target: '≥ 0.35; within 25%', notices: true, baseline: 'subset: notices unfiltered limit=100' },
    { name: `subset: q one word (${q1Total})`, paths: [`/v1/clientes?limit=100&q=${q1}`], status: 200, target: '≥ 0.35; within 25%', baseline: 'list limit=100, offset 0' },
    { name: `subset: q two words (${q2Total})`, paths: [`/v1/clientes?limit=100&q=${q2}`], status: 200, target: '≥ 0.35; within 25%', baseline: 'list limit=100, offset 0' },
    // Pages at 50 offsets drawn over the whole list: thin pages are made from per-chunk projections
    // (kept, like chunks), so one page asked for again and again would measure only a few chunks'.
    {
      name: `subset: fields=id_erp,nombre limit=1000, 50 offsets (${(fullBytes / thinBytes).toFixed(1)}× fewer bytes)`,
      paths: randomIds(data.customers - 1000, 50).map((o) => `/v1/clientes?limit=1000&offset=${o}&fields=id_erp,nombre`),
      status: 200,
      target: '≥ 0.35; ≥ 10× fewer bytes',
    },
  ];
}

/**
 * A page must cost the same wherever it is (issue 4 target 1: the deep page and the
 * updated_since page within 10% of offset 0). Comparing scenarios measured minutes apart
 * mixes in the machine's drift, so these three are measured in interleaved rounds.
 */
async function pageCostByPosition(ctx: BenchContext, db: BenchDatabase, data: Dataset, mirador: Server, since: string) {
  const n = data.customers;
  const pages = [
    { name: 'offset 0', path: '/v1/clientes?limit=100' },
    { name: `offset ${n - 1000}`, path: `/v1/clientes?limit=100&offset=${n - 1000}` },
    { name: 'updated_since (last 1%)', path: `/v1/clientes?limit=100&updated_since=${since}` },
  ];
  const section = ctx.report.section(
    `Page cost by position, ${db.backend}: Mirador alone, limit=100, interleaved rounds`,
    ['page', 'req/s', 'p50 ms', 'p99 ms', '÷ offset 0', 'target'],
    [`The three pages in turn, ${ctx.rounds} rounds of ${ctx.seconds} s each, same load generator settings; medians.`],
  );
  const results: LoadResult[][] = pages.map(() => []);
  for (let round = 0; round < ctx.rounds; round++) {
    for (const [i, p] of pages.entries()) {
      results[i]!.push(
        await runLoad({ base: mirador.base, paths: [p.path], headers: { authorization: `Bearer ${data.key}` }, connections: ctx.connections, seconds: ctx.seconds, cpus: CLIENT_CPU }),
      );
    }
  }
  const rps = results.map((rs) => median(rs.map((r) => r.rps)));
  pages.forEach((p, i) => {
    const rs = results[i]!;
    ctx.report.row(section, [
      p.name,
      fmt.int(rps[i]!),
      fmt.ms(median(rs.map((r) => r.p50Ms))),
      fmt.ms(median(rs.map((r) => r.p99Ms))),
      fmt.ratio(rps[i]! / rps[0]!),
      i === 0 ? '—' : '≥ 0.90',
    ]);
  });
  ctx.report.record(`${db.backend}:page-cost`, results);
}

interface Download {
  ms: number;
  pages: number;
  bytes: number;
  total: number;
}

async function download(server: Server, key: string, gzip: boolean): Promise<Download> {
  const spec = { base: server.base, path: '/v1/clientes', key, limit: 1000, gzip };
  const r = await run(process.execPath, [join(DIST, 'bench', 'download-client.js'), JSON.stringify(spec)], { cpus: CLIENT_CPU });
  if (r.code !== 0) throw new Error(`download from ${server.name} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Download;
}

/** Full downloads; returns the Mirador server in use (it is restarted to empty its caches). */
async function downloads(ctx: BenchContext, db: BenchDatabase, data: Dataset, served: Record<string, string>, mirador: Server, reference: Server): Promise<Server> {
  const section = ctx.report.section(
    `Full download, ${db.backend}: every customer at limit=1000 following next_offset`,
    ['download', 'Mirador ms', 'MiB', 'reference ms', 'MiB', 'ratio', 'target'],
    [
      `One connection; client pinned to core ${CLIENT_CPU}. Medians of ${ctx.rounds} rounds. "First gzip" restarts Mirador before ` +
        'each round (empty compression cache) and downloads once without gzip (chunks cached, code warm); "second gzip" follows it at once. ' +
        'The reference compresses every page on the fly. Mirador assembles a first gzip page from the deflate segments that ' +
        'the server\'s import process made for each chunk after the snapshot was published (read from the database: none are in memory after the restart), ' +
        'compressing only the partial chunks at the page\'s edges.',
    ],
  );
  const plain = { m: [] as Download[], r: [] as Download[] };
  const gz = { first: [] as Download[], second: [] as Download[], r: [] as Download[] };
  await download(mirador, data.key, false); // warm-up
  await download(reference, data.key, false);
  for (let round = 0; round < ctx.rounds; round++) {
    plain.m.push(await download(mirador, data.key, false));
    plain.r.push(await download(reference, data.key, false));
  }
  for (let round = 0; round < ctx.rounds; round++) {
    await mirador.stop();
    mirador = await startMirador(served, { cpus: SERVER_CPU });
    // A plain download first: chunks in the cache and code warm, as for any snapshot clients read;
    // what is measured next is compressing on demand.
    await download(mirador, data.key, false);
    gz.first.push(await download(mirador, data.key, true));
    gz.second.push(await download(mirador, data.key, true));
    gz.r.push(await download(reference, data.key, true));
  }
  for (const d of [...plain.m, ...plain.r, ...gz.first, ...gz.second, ...gz.r]) {
    if (d.total !== data.customers || d.pages !== Math.ceil(data.customers / 1000)) throw new Error(`incomplete download: ${JSON.stringify(d)}`);
  }
  const ms = (xs: Download[]) => median(xs.map((x) => x.ms));
  const mib = (xs: Download[]) => fmt.mb(median(xs.map((x) => x.bytes)));
  const rows: [string, Download[], Download[], string][] = [
    ['plain', plain.m, plain.r, '≤ 1.30'],
    ['gzip, first (from segments made after publication)', gz.first, gz.r, '≤ 1.00'],
    ['gzip, second (cached)', gz.second, gz.r, '≤ 0.50'],
  ];
  for (const [name, m, r, target] of rows) {
    const extra = name.startsWith('gzip, second') ? ` (${fmt.ratio(ms(m) / ms(gz.first))} of the first)` : '';
    ctx.report.row(section, [name, fmt.ms(ms(m)), mib(m), fmt.ms(ms(r)), mib(r), fmt.ratio(ms(m) / ms(r)) + extra, target]);
  }
  ctx.report.record(`${db.backend}:downloads`, { plain, gz });
  return mirador;
}

/** With `--only a,b`, only the scenarios whose name contains one of those words run. */
function wanted(ctx: BenchContext, name: string): boolean {
  return ctx.only.length === 0 || ctx.only.some((w) => name.includes(w));
}

/** `count` distinct 0-based indexes below `n`, deterministic. */
function randomIds(n: number, count: number): number[] {
  let seed = 42;
  const out = new Set<number>();
  while (out.size < Math.min(count, n)) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    out.add(seed % n);
  }
  return [...out];
}
