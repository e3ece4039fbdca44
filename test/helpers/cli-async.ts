/**
 * Runs the built `mirador` command as a child process without blocking this
 * one, so that a server started in this process (startServer) can answer it.
 */
import { spawn } from 'node:child_process';
import { MAIN, type CliResult } from './cli.js';
import { HANG_GUARD_MS } from './timing.js';

export function miradorAsync(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', MIRADOR_API_KEY: '', ...env },
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      resolve({ code: code ?? -1, stdout, stderr: Buffer.concat(err).toString('utf8'), json: () => JSON.parse(stdout) });
    });
  });
}
