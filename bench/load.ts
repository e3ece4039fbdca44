/**
 * Drives HTTP load at a server from a separate process pinned to another
 * core: wrk when it is installed (`apt-get install wrk`: written in C, it
 * never becomes the bottleneck), autocannon otherwise (bench/autocannon-client.ts).
 * Both report requests per second and latency percentiles, and count
 * responses that were not 2xx or 3xx, which make a run invalid.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST, run } from './processes.js';

const WRK = '/usr/bin/wrk';

export interface LoadSpec {
  base: string;
  /** Requests go to these paths, chosen at random (one path: always that one). */
  paths: string[];
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /** Cores for the load generator (taskset -c), or null for any. */
  cpus: string | null;
  /** A header whose value differs per path (`values[i]` goes with `paths[i]`): an If-None-Match per id. */
  perPath?: { header: string; values: string[] };
  /** Paths in order, round and round, instead of at random: a pass over them (a warm-up). */
  sequential?: boolean;
  /**
   * Appended to every path with a number no request of the run, nor of an
   * earlier run, had (`&estado=first-ask-` makes each request a filter never
   * asked before, matching what the path's own values match): what a first
   * ask costs, where a path asked again would find its work kept.
   */
  uniqueSuffix?: string;
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Responses other than 2xx/3xx, and socket errors. */
  bad: number;
  tool: 'wrk' | 'autocannon';
}

export function loadTool(): 'wrk' | 'autocannon' {
  return existsSync(WRK) ? 'wrk' : 'autocannon';
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return loadTool() === 'wrk' ? runWrk(spec) : runAutocannon(spec);
}

const lua = (s: string) => JSON.stringify(s); // a JSON string of ASCII is a valid Lua string literal

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mirador-wrk-'));
  const script = join(dir, 'load.lua');
  const pathsFile = join(dir, 'paths.txt');
  const valuesFile = join(dir, 'values.txt');
  writeFileSync(pathsFile, spec.paths.join('\n') + '\n');
  if (spec.perPath) writeFileSync(valuesFile, spec.perPath.values.join('\n') + '\n');
  const lines = [
    ...Object.entries(spec.headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`),
    // Read from files, one a line: LuaJIT refuses a chunk of more than 65,536 constants (100,000 ids).
    'local function lines(f) local t = {} for l in io.lines(f) do t[#t + 1] = l end return t end',
    `local paths = lines(${lua(pathsFile)})`,
    spec.perPath ? `local values = lines(${lua(valuesFile)})` : '',
    'math.randomseed(20261121)',
    'local n = 0',
    // Runs are seconds apart and send far fewer than 100,000 requests a second; below 10^10, formatted whole.
    spec.uniqueSuffix ? 'local unique = (os.time() % 100000) * 100000' : '',
    'request = function()',
    spec.sequential ? '  n = n % #paths + 1' : '  n = math.random(#paths)',
    // One thread: setting the shared header table before each format is safe.
    spec.perPath ? `  wrk.headers[${lua(spec.perPath.header)}] = values[n]` : '',
    spec.uniqueSuffix ? `  unique = unique + 1\n  return wrk.format("GET", paths[n] .. ${lua(spec.uniqueSuffix)} .. string.format("%d", unique))` : '  return wrk.format("GET", paths[n])',
    'end',
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"bad":%d}\\n\',',
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),',
    '    e.connect + e.read + e.write + e.timeout + e.status))',
    'end',
  ];
  writeFileSync(script, lines.join('\n'));
  try {
    const args = ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--timeout', '10s', '-s', script, spec.base + spec.paths[0]];
    const r = await run(WRK, args, { cpus: spec.cpus });
    const json = r.stdout.split('\n').find((l) => l.startsWith('{"requests"'));
    if (r.code !== 0 || !json) throw new Error(`wrk failed (${r.code}): ${r.stderr || r.stdout}`);
    const o = JSON.parse(json) as { requests: number; duration_us: number; p50_us: number; p99_us: number; bad: number };
    return { rps: o.requests / (o.duration_us / 1e6), p50Ms: o.p50_us / 1000, p99Ms: o.p99_us / 1000, requests: o.requests, bad: o.bad, tool: 'wrk' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  if (spec.perPath || spec.sequential || spec.uniqueSuffix) throw new Error('per-path headers, sequential passes and unique paths need wrk (apt-get install wrk)');
  const r = await run(process.execPath, [join(DIST, 'bench', 'autocannon-client.js'), JSON.stringify(spec)], { cpus: spec.cpus });
  if (r.code !== 0) throw new Error(`autocannon failed (${r.code}): ${r.stderr}`);
  return { ...(JSON.parse(r.stdout) as Omit<LoadResult, 'tool'>), tool: 'autocannon' };
}
