/**
 * Instructions a warm detail costs, counted by valgrind's callgrind: a
 * figure that repeats to within a few per cent on a busy virtual machine,
 * where CPU time per request moves by a quarter between two windows of the
 * same server. For changes of a few per cent, which wrk cannot tell apart.
 *
 * Each server (Mirador as `serve` runs it, and the plain Fastify +
 * better-sqlite3 server) runs under callgrind. One keep-alive connection
 * asks `--warm` details (ids drawn from the first `--ids` customers, so every
 * chunk is cached, the snapshot's RecordIndex loaded and the code compiled;
 * after 3,000 a detail still counted 4.2 million instructions, the caches
 * loading), the counters are zeroed, then
 * `--requests` more details are counted and dumped. The main thread's count
 * is the request path; the other threads' are the JIT's compiler and the
 * collector's helpers. `--top N` lists the main thread's N costliest
 * functions, JavaScript ones named through node's `--perf-basic-prof` map.
 *
 *   node dist/bench/instructions.js --db sqlite:///path/bench.db --key api_… [--server mirador,plain] [--top 30]
 *
 * The database is one `npm run bench -- api` loads (bench/out/bench-sqlite.db)
 * or any with a company `bench`; the key is a read key of it
 * (`mirador key create bench`). Counts are not time: a cache miss costs one
 * instruction and a hundred cycles. Time is measured by `npm run bench`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { mulberry32 } from './clientes-fixture.js';
import { askDetails } from './detail-requests.js';
import { summarizeCallgrind, type CallgrindSummary } from './callgrind-summary.js';
import { plainServerArgs } from './detail-scenarios.js';
import { freePort, miradorEnv, MIRADOR, startServer } from './processes.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    key: { type: 'string' },
    server: { type: 'string', default: 'mirador,plain' },
    warm: { type: 'string', default: '30000' },
    requests: { type: 'string', default: '3000' },
    ids: { type: 'string', default: '2000' },
    top: { type: 'string', default: '0' },
  },
});
if (!args.db || !args.key) throw new Error('usage: instructions --db <sqlite url> --key <read key> [--server mirador,plain] [--warm N] [--requests N] [--ids N] [--top N]');
const warm = Number(args.warm);
const counted = Number(args.requests);
const ids = Number(args.ids);
const top = Number(args.top);

const work = mkdtempSync(join(tmpdir(), 'mirador-instructions-'));
const plainFile = join(work, 'plain.db');

/** `count` details on `agent`'s one connection, ids from a fixed sequence (the same for every server). */
function details(agent: Agent, base: string, count: number, seed: number): Promise<void> {
  const random = mulberry32(seed);
  return askDetails(agent, base, args.key!, count, () => Math.floor(random() * ids));
}

/** The plain server's copy of the items, made by the plain server itself at full speed (under valgrind it would take an hour). */
async function preparePlain(): Promise<void> {
  const port = await freePort();
  const plainArgs = plainServerArgs(args.db!, plainFile, port);
  const server = await startServer({ name: 'plain (copying the items)', args: plainArgs, env: miradorEnv(args.db!), port, cpus: null, readyPath: '/', startTimeoutMs: 600_000 });
  await server.stop();
}

async function measure(name: string): Promise<CallgrindSummary> {
  if (name === 'plain' && !existsSync(plainFile)) await preparePlain();
  const port = await freePort();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out = join(work, `${name}.%p`);
  const valgrind = ['--tool=callgrind', '--separate-threads=yes', '--smc-check=all-non-file', `--callgrind-out-file=${out}`];
  const node = [process.execPath, '--perf-basic-prof'];
  const target = name === 'mirador' ? [...node, MIRADOR, 'serve'] : [...node, ...plainServerArgs(args.db!, plainFile, port)];
  const env = miradorEnv(args.db!, { PORT: String(port) });
  // Under valgrind a start takes a minute or two; startServer waits for the ready path.
  const server = await startServer({
    name,
    cmd: 'valgrind',
    args: [...valgrind, ...target],
    env,
    port,
    cpus: null,
    readyPath: name === 'mirador' ? '/health' : '/',
    startTimeoutMs: 600_000,
    // --perf-basic-prof makes V8 write a log of its own into the working directory.
    cwd: work,
  });
  try {
    await details(agent, server.base, warm, 1);
    execFileSync('callgrind_control', ['--zero', String(server.pid)], { stdio: 'ignore' });
    await details(agent, server.base, counted, 7);
    execFileSync('callgrind_control', ['--dump', String(server.pid)], { stdio: 'ignore' });
  } finally {
    agent.destroy();
    await server.stop();
  }
  // The dump is part 1, one file per thread: thread 1 is the main thread.
  const files = readdirSync(work).filter((f) => f.startsWith(`${name}.${server.pid}.1-`)).sort();
  const map = `/tmp/perf-${server.pid}.map`;
  const summary = summarizeCallgrind(files.map((f) => readFileSync(join(work, f), 'utf8')), existsSync(map) ? readFileSync(map, 'utf8') : '');
  rmSync(map, { force: true });
  return summary;
}

try {
  for (const name of args.server!.split(',')) {
    if (name !== 'mirador' && name !== 'plain') throw new Error(`--server: mirador or plain, not ${name}`);
    const s = await measure(name);
    console.log(`${name}: ${Math.round(s.mainThread / counted).toLocaleString('en')} instructions a detail on the main thread, ${Math.round(s.allThreads / counted).toLocaleString('en')} on all threads (${counted.toLocaleString('en')} details after ${warm.toLocaleString('en')}, ids from the first ${ids.toLocaleString('en')})`);
    for (const [fn, ir] of s.topFunctions.slice(0, top)) console.log(`  ${Math.round(ir / counted).toLocaleString('en').padStart(8)}  ${fn}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
