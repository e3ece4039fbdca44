/**
 * What a warm detail leaves to V8's old generation: the bytes promoted by
 * young collections and those allocated there directly, from the collector's
 * own statistics (node's GCProfiler: each space's size before and after each
 * collection), with the collections meanwhile. What the old generation takes
 * in is garbage a full collection must free, and a full collection's pauses
 * are what a warm detail's p99 is made of.
 *
 * Each server (Mirador as `serve` runs it under the unit's environment, and
 * the plain Fastify + better-sqlite3 server) starts with
 * bench/heap-sampling-preload.ts. `--connections` keep-alive connections ask
 * one pass over every id (every chunk cached, the RecordIndex loaded, the code
 * compiled), then `--warm` more details, uniform over all ids; the next
 * `--requests` are measured. `--top N` also samples where such bytes are
 * allocated and lists the N largest sites (V8's sampling heap profiler).
 *
 *   node dist/bench/promoted-bytes.js --db sqlite:///path/bench.db --key api_… [--server mirador,plain] [--top 12]
 *
 * The database and key are those of bench/instructions.ts.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SERVER_CPU } from './bench-context.js';
import { mulberry32 } from './clientes-fixture.js';
import { askDetails } from './detail-requests.js';
import { deploymentEnv } from './deployment-env.js';
import { plainServerArgs } from './detail-scenarios.js';
import { DIST, freePort, miradorEnv, MIRADOR, startServer, type Server } from './processes.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    key: { type: 'string' },
    server: { type: 'string', default: 'mirador,plain' },
    ids: { type: 'string', default: '100000' },
    connections: { type: 'string', default: '10' },
    warm: { type: 'string', default: '50000' },
    requests: { type: 'string', default: '50000' },
    top: { type: 'string', default: '0' },
  },
});
if (!args.db || !args.key) throw new Error('usage: promoted-bytes --db <sqlite url> --key <read key> [--server mirador,plain] [--ids N] [--connections N] [--warm N] [--requests N] [--top N]');
const ids = Number(args.ids);
const connections = Number(args.connections);
const counted = Number(args.requests);
const top = Number(args.top);

const work = mkdtempSync(join(tmpdir(), 'mirador-promoted-'));
const PRELOAD = join(DIST, 'bench', 'heap-sampling-preload.js');

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

interface SpaceSizes {
  beforeGC: { heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] };
  afterGC: { heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] };
}

interface Sampled {
  gcs: { statistics: (SpaceSizes & { gcType: string; cost: number })[] };
  profile: { head: ProfileNode } | null;
}

/** Spaces of the young generation (and the read-only one), left out of the old generation's size. */
const NOT_OLD = new Set(['new_space', 'new_large_object_space', 'read_only_space']);

function oldBytes(spaces: { spaceName: string; spaceUsedSize: number }[]): number {
  return spaces.reduce((sum, s) => (NOT_OLD.has(s.spaceName) ? sum : sum + s.spaceUsedSize), 0);
}

/**
 * What the old generation took in over the collections of a window: promoted
 * by the young collections (its growth across each), and allocated in it
 * directly between collections (its growth from the end of one to the start
 * of the next: large objects, and tables rehashed for Maps that live there).
 */
function oldGenerationIntake(statistics: Sampled['gcs']['statistics']) {
  let promoted = 0;
  let direct = 0;
  const count = { young: 0, full: 0 };
  const longestMs = { young: 0, full: 0 };
  statistics.forEach((gc, i) => {
    const before = oldBytes(gc.beforeGC.heapSpaceStatistics);
    if (i > 0) direct += Math.max(0, before - oldBytes(statistics[i - 1]!.afterGC.heapSpaceStatistics));
    // GCProfiler gives each collection's cost in microseconds.
    const ms = gc.cost / 1000;
    if (gc.gcType === 'Scavenge' || gc.gcType.startsWith('Minor')) {
      promoted += Math.max(0, oldBytes(gc.afterGC.heapSpaceStatistics) - before);
      count.young++;
      longestMs.young = Math.max(longestMs.young, ms);
    } else if (gc.gcType === 'MarkSweepCompact') {
      count.full++;
      longestMs.full = Math.max(longestMs.full, ms);
    }
  });
  return { promoted, direct, count, longestMs };
}

/** `count` details over `connections` keep-alive connections; ids in the order `next` draws them. */
async function details(base: string, count: number, next: () => number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  try {
    await askDetails(agent, base, args.key!, count, next, connections);
  } finally {
    agent.destroy();
  }
}

/** Sends SIGUSR2 and waits for the preload to write `file` (when it is given). */
async function signal(server: Server, file?: string): Promise<void> {
  process.kill(server.pid, 'SIGUSR2');
  while (file && !existsSync(file)) await new Promise((r) => setTimeout(r, 50));
  // The file is written in one call; a moment more lets it finish on a slow disk.
  if (file) await new Promise((r) => setTimeout(r, 200));
}

async function measure(name: string): Promise<Sampled> {
  const port = await freePort();
  const out = join(work, `${name}.json`);
  const node = ['--import', PRELOAD];
  const target = name === 'mirador' ? [...node, MIRADOR, 'serve'] : [...node, ...plainServerArgs(args.db!, join(work, 'plain.db'), port)];
  const server = await startServer({
    name,
    args: target,
    // Mirador as the unit runs it (jemalloc, the young generation's size); the plain server the same.
    env: miradorEnv(args.db!, { ...deploymentEnv(), PORT: String(port), HEAP_SAMPLING_OUT: out, HEAP_SAMPLING_SITES: top > 0 ? '1' : '0' }),
    port,
    cpus: SERVER_CPU,
    readyPath: name === 'mirador' ? '/health' : '/',
    startTimeoutMs: 600_000,
  });
  try {
    let pass = 0;
    await details(server.base, ids, () => pass++ % ids);
    const random = mulberry32(11);
    await details(server.base, Number(args.warm), () => Math.floor(random() * ids));
    await signal(server);
    await details(server.base, counted, () => Math.floor(random() * ids));
    await signal(server, out);
  } finally {
    await server.stop();
  }
  return JSON.parse(readFileSync(out, 'utf8')) as Sampled;
}

/** Sampled bytes by allocating site (function, file and line), largest first. */
function bySite(head: ProfileNode): [string, number][] {
  const sites = new Map<string, number>();
  const walk = (node: ProfileNode, caller: string) => {
    const f = node.callFrame;
    const here = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}`;
    // A builtin (Map's set, String()) is named with the function that called it.
    const site = f.url ? here : `${here.trim()} in ${caller}`;
    if (node.selfSize > 0) sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child, f.url ? here : caller);
  };
  walk(head, '(root)');
  return [...sites].sort((a, b) => b[1] - a[1]);
}

try {
  for (const name of args.server!.split(',')) {
    if (name !== 'mirador' && name !== 'plain') throw new Error(`--server: mirador or plain, not ${name}`);
    const { gcs, profile } = await measure(name);
    const { promoted, direct, count, longestMs } = oldGenerationIntake(gcs.statistics);
    const perDetail = (bytes: number) => Math.round(bytes / counted).toLocaleString('en');
    const perThousand = (n: number) => ((n * 1000) / counted).toFixed(2);
    console.log(
      `${name}: the old generation took in ${perDetail(promoted + direct)} bytes a detail ` +
        `(${perDetail(promoted)} promoted, ${perDetail(direct)} allocated there; ` +
        `${counted.toLocaleString('en')} details over ${connections} connections, ids uniform over ${ids.toLocaleString('en')}); ` +
        `a thousand details: ${perThousand(count.young)} young collections (longest ${longestMs.young.toFixed(1)} ms), ` +
        `${perThousand(count.full)} full (longest pause ${longestMs.full.toFixed(1)} ms)`,
    );
    if (!profile) continue;
    const sites = bySite(profile.head);
    const sampled = sites.reduce((sum, [, bytes]) => sum + bytes, 0);
    console.log(`  where (sampled, ${perDetail(sampled)} bytes a detail; see heap-sampling-preload.ts on its totals):`);
    for (const [site, bytes] of sites.slice(0, top)) {
      console.log(`  ${((100 * bytes) / sampled).toFixed(1).padStart(5)}%  ${site}`);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
