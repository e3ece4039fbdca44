/**
 * Child processes for benchmarks: the real `mirador` command, servers pinned
 * to a core with `taskset`, and measuring a command's wall time and peak RSS
 * with `/usr/bin/time`. Everything under test runs as its own process, as it
 * would in production.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/ (this file is dist/bench/processes.js once compiled). */
export const DIST = fileURLToPath(new URL('..', import.meta.url));
export const MIRADOR = join(DIST, 'src', 'main.js');

const TASKSET = '/usr/bin/taskset';
const TIME = '/usr/bin/time';

export type Env = Record<string, string>;

/** The environment every Mirador process of a benchmark gets, on top of `extra`. */
export function miradorEnv(databaseUrl: string, extra: Env = {}): Env {
  const env: Env = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return {
    ...env,
    DATABASE_URL: databaseUrl,
    // Request logging is measured apart (it is I/O, not the read path); the reference logs nothing either.
    LOG_LEVEL: 'silent',
    // A benchmark sends far more than a client's fair share per minute.
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...extra,
  };
}

/** `cmd args` prefixed with `taskset -c cpus` when taskset exists and cpus is given. */
export function pinned(cpus: string | null, cmd: string, args: string[]): [string, string[]] {
  if (cpus === null || !existsSync(TASKSET)) return [cmd, args];
  return [TASKSET, ['-c', cpus, cmd, ...args]];
}

export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
  wallMs: number;
  /** Peak resident set size in KiB (from /usr/bin/time), or null when not measured. */
  maxRssKb: number | null;
}

/** Runs a command to the end, collecting its output; `timed` measures peak RSS too. */
export function run(cmd: string, args: string[], options: { env?: Env; cwd?: string; timed?: boolean; cpus?: string | null } = {}): Promise<Finished> {
  const timeFile = options.timed && existsSync(TIME) ? join(DIST, `.time-${process.pid}-${Date.now()}`) : null;
  let [c, a] = pinned(options.cpus ?? null, cmd, args);
  if (timeFile) [c, a] = [TIME, ['-o', timeFile, '-f', '%M', c, ...a]];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(c, a, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      let maxRssKb: number | null = null;
      if (timeFile && existsSync(timeFile)) {
        const lines = readFileSync(timeFile, 'utf8').trim().split('\n');
        maxRssKb = Number(lines[lines.length - 1]) || null;
        rmSync(timeFile, { force: true });
      }
      resolve({ code: code ?? 1, stdout, stderr, wallMs, maxRssKb });
    });
  });
}

/** Runs `mirador …` and fails loudly when it does. */
export async function mirador(args: string[], env: Env, options: { timed?: boolean } = {}): Promise<Finished> {
  const r = await run(process.execPath, [MIRADOR, ...args], { env, timed: options.timed });
  if (r.code !== 0) throw new Error(`mirador ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r;
}

/** A port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface Server {
  name: string;
  /** The process's id (of valgrind's process, when it runs under valgrind: the same process). */
  pid: number;
  base: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a long-running server process and waits until `readyPath` answers
 * (any status below 500).
 */
export async function startServer(options: {
  name: string;
  args: string[];
  env: Env;
  port: number;
  cpus: string | null;
  readyPath?: string;
  cmd?: string;
  /** How long it may take to answer (a server under valgrind takes minutes). */
  startTimeoutMs?: number;
  /** Its working directory, where it writes files of its own (V8's logs); this process's by default. */
  cwd?: string;
}): Promise<Server> {
  const [cmd, args] = pinned(options.cpus, options.cmd ?? process.execPath, options.args);
  const child = spawn(cmd, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-4000)));
  const base = `http://127.0.0.1:${options.port}`;
  let stopping = false;
  const exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => {
      // A server dying mid-run is a finding: say so, with what it printed.
      if (!stopping) process.stderr.write(`${options.name} exited unexpectedly (${code ?? signal}): ${stderr.trim()}\n`);
      resolve(code ?? 1);
    }),
  );
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${options.name} exited ${child.exitCode} at start: ${stderr.trim()}`);
    try {
      const res = await fetch(base + (options.readyPath ?? '/v1/sandbox/clientes?limit=1'));
      await res.arrayBuffer();
      if (res.status < 500) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} did not answer within ${startTimeoutMs / 1000} s: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name: options.name,
    pid: child.pid!,
    base,
    port: options.port,
    child,
    stop: async () => {
      stopping = true;
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Node's own arguments for every `mirador serve` a bench starts, from
 * BENCH_NODE_ARGS (split on spaces): V8 flags node refuses in NODE_OPTIONS,
 * for an A/B without a rebuild, e.g. `BENCH_NODE_ARGS=--heap-growing-percent=0`.
 */
export function benchNodeArgs(): string[] {
  return (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
}

/** Starts `mirador serve` on a free port. */
export async function startMirador(env: Env, options: { cpus: string | null; workers?: number; name?: string }): Promise<Server> {
  const port = await freePort();
  const args = [...benchNodeArgs(), MIRADOR, 'serve', '--port', String(port), '--host', '127.0.0.1', '--workers', String(options.workers ?? 1)];
  return startServer({ name: options.name ?? 'mirador', args, env, port, cpus: options.cpus });
}
