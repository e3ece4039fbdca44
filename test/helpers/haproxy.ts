/**
 * HAProxy for tests: runs deploy/haproxy.cfg as written (its site values come
 * from the environment), with a self-signed certificate made by openssl, and
 * talks to its admin socket. Skipped without haproxy, required with CI=true
 * (as PostgreSQL is in stores.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HANG_GUARD_MS, sleep } from './timing.js';

export const HAPROXY_CFG = fileURLToPath(new URL('../../../deploy/haproxy.cfg', import.meta.url));
const HAPROXY = process.env.HAPROXY_BIN || '/usr/sbin/haproxy';

/** False when haproxy and openssl run, else why the suite is skipped (never skipped with CI=true). */
export function haproxySkip(): string | false {
  const runs = (bin: string, arg: string) => spawnSync(bin, [arg], { encoding: 'utf8' }).status === 0;
  const missing = [runs(HAPROXY, '-v') ? '' : HAPROXY, runs('openssl', 'version') ? '' : 'openssl'].filter(Boolean);
  if (missing.length === 0) return false;
  const message = `HAProxy suite skipped: ${missing.join(' and ')} not found (apt-get install haproxy openssl; required when CI=true)`;
  if (process.env.CI === 'true') return false; // the test then fails on spawning it, as it must in CI
  process.stderr.write(`${message}\n`);
  return message;
}

/**
 * Ports nobody listens on right now, below Linux's ephemeral range (32768 and
 * up): an instance is restarted on its port, and a port the kernel had picked
 * could meanwhile be taken as the source port of some outgoing connection
 * (seen once in CI: EADDRINUSE on a restart).
 */
export async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!ports.includes(port) && (await canListen(port))) ports.push(port);
  }
  return ports;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A self-signed certificate for localhost; returns the PEM HAProxy loads (chain + key) and the certificate. */
export function selfSignedCertificate(dir: string): { pemFile: string; cert: string } {
  const key = join(dir, 'tls.key');
  const crt = join(dir, 'tls.crt');
  const r = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', crt,
  ], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  const cert = readFileSync(crt, 'utf8');
  const pemFile = join(dir, 'tls.pem');
  writeFileSync(pemFile, cert + readFileSync(key, 'utf8'), { mode: 0o600 });
  return { pemFile, cert };
}

export interface ServerState {
  name: string;
  /** UP, DOWN, MAINT, DRAIN, … as HAProxy's `show stat` reports it. */
  status: string;
  /** Requests being served by it now. */
  current: number;
}

export class HaproxyProcess {
  readonly logs: string[] = [];
  private constructor(private readonly child: ChildProcess, readonly socket: string, readonly port: number) {}

  /** Starts haproxy in the foreground on deploy/haproxy.cfg; resolves once its admin socket answers. */
  static async start(opts: { dir: string; port: number; pemFile: string; servers: string[] }): Promise<HaproxyProcess> {
    const socket = join(opts.dir, 'haproxy.sock');
    const env: Record<string, string> = {
      ...process.env as Record<string, string>,
      MIRADOR_BIND: `127.0.0.1:${opts.port}`,
      MIRADOR_TLS_CERT: opts.pemFile,
      HAPROXY_SOCKET: socket,
    };
    opts.servers.forEach((address, i) => (env[`MIRADOR_S${i + 1}`] = address));
    const child = spawn(HAPROXY, ['-db', '-f', HAPROXY_CFG], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const proxy = new HaproxyProcess(child, socket, opts.port);
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (d: Buffer) => proxy.logs.push(d.toString()));
    for (let i = 0; i < 100; i++) {
      if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${proxy.logs.join('')}`);
      try {
        await proxy.command('show info');
        return proxy;
      } catch {
        await sleep(100);
      }
    }
    throw new Error(`haproxy's socket never answered:\n${proxy.logs.join('')}`);
  }

  /** One command on the admin socket; resolves to its whole answer. */
  command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const conn = createConnection(this.socket);
      let out = '';
      conn.on('connect', () => conn.end(`${line}\n`));
      conn.on('data', (d) => (out += d));
      conn.on('end', () => resolve(out));
      conn.on('error', reject);
    });
  }

  /** The backend's servers as HAProxy sees them now. */
  async servers(backend = 'mirador'): Promise<ServerState[]> {
    const [header, ...rows] = (await this.command('show stat')).trim().split('\n');
    const cols = header!.replace(/^# /, '').split(',');
    const at = (name: string) => cols.indexOf(name);
    return rows
      .map((r) => r.split(','))
      .filter((r) => r[at('pxname')] === backend && r[at('svname')] !== 'BACKEND')
      .map((r) => ({ name: r[at('svname')]!, status: r[at('status')]!, current: Number(r[at('scur')]) }));
  }

  /** Polls the admin socket until `ok` holds for server `name` (a generous limit: shared CI machines are slow). */
  async waitFor(name: string, ok: (s: ServerState) => boolean, what: string, limitMs = HANG_GUARD_MS): Promise<void> {
    for (const until = Date.now() + limitMs; Date.now() < until; ) {
      const s = (await this.servers()).find((x) => x.name === name);
      if (s && ok(s)) return;
      await sleep(50);
    }
    throw new Error(`haproxy: ${name} never became ${what}: ${JSON.stringify(await this.servers())}`);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}
