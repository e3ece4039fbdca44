/** What every benchmark subcommand receives: its scale, where to write, and the report. */
import { join } from 'node:path';
import type { Backend } from './databases.js';
import { DIST } from './processes.js';
import type { Report } from './report.js';

export interface BenchContext {
  quick: boolean;
  /** Customers in the dataset (other kinds in proportion). */
  customers: number;
  /** Alternating Mirador/reference rounds per scenario; medians are reported. */
  rounds: number;
  /** Seconds of load per round. */
  seconds: number;
  /** Concurrent connections of the load generator. */
  connections: number;
  backends: Backend[];
  /** `--only`: words; a scenario runs when its name contains one (empty: every scenario). */
  only: string[];
  /** Scratch space: databases, generated files. Under bench/out/ (ignored by git). */
  outDir: string;
  fixtureDir: string;
  report: Report;
}

export const OUT_DIR = join(DIST, '..', 'bench', 'out');

/** Core the servers are pinned to, and the core of the load generator and clients. */
export const SERVER_CPU = '0';
export const CLIENT_CPU = '1';
