/**
 * The environment the shipped systemd unit (deploy/mirador.service) gives
 * Mirador, its `Environment=` lines: the soaks and the tenants bench run their
 * servers with it, so that they measure the memory behaviour the deployment
 * gets, not a bare process's. `--no-deploy-env` leaves it out, to compare.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIST } from './processes.js';

export const UNIT_FILE = join(DIST, '..', 'deploy', 'mirador.service');

/** `NAME=value` of each `Environment=` line of the unit (one assignment a line, unquoted). */
export function deploymentEnv(file = UNIT_FILE): Record<string, string> {
  if (process.argv.includes('--no-deploy-env')) return {};
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^Environment=([A-Za-z_][A-Za-z0-9_]*)=(\S*)\s*$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

/** The allocator a running process uses: jemalloc when the unit's LD_PRELOAD found it, else glibc's malloc. */
export function allocatorOf(pid: number): 'jemalloc' | 'glibc malloc' {
  return readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libjemalloc') ? 'jemalloc' : 'glibc malloc';
}

/** What a bench prints once its `mirador serve` is up: the allocator it runs on. */
export function allocatorLine(pid: number): string {
  return `mirador serve runs on ${allocatorOf(pid)} (deploy/mirador.service; --no-deploy-env for glibc)\n`;
}
