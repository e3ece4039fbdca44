/** Runs the built `mirador` command as a child process, as a user would. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { HANG_GUARD_MS } from './timing.js';

export const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json(): any;
}

export function mirador(args: string[], env: Record<string, string>, input?: string): CliResult {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    input,
    encoding: 'utf8',
    timeout: HANG_GUARD_MS,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
}

export interface ServeProcess {
  child: ChildProcess;
  baseUrl: string;
  logs: string[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `mirador serve` on a free port and resolves once it listens. */
export function serveProcess(env: Record<string, string>, args: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${logs.join('\n')}`)), HANG_GUARD_MS);
    const onLine = (line: string) => {
      logs.push(line);
      try {
        const entry = JSON.parse(line);
        if (entry.msg === 'mirador listening' && entry.address) {
          clearTimeout(timer);
          resolve({
            child,
            baseUrl: entry.address,
            logs,
            stop: (signal = 'SIGTERM') =>
              new Promise((done) => {
                if (child.exitCode !== null) return done(child.exitCode);
                child.once('exit', (code) => done(code));
                child.kill(signal);
              }),
          });
        }
      } catch {
        // not JSON: keep it for the error message
      }
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', (l) => logs.push(l));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${logs.join('\n')}`));
    });
  });
}

/** Like `mirador`, without blocking this process (needed when the test itself serves something, e.g. a proxy). */
export function miradorAsync(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) }));
  });
}
