/**
 * Imports in the field (issue 23): the file uploaded to a running
 * `mirador serve` with an upload token (`PUT /panel/api/imports/<kind>`, as
 * docs/nightly-export.md's script does, but plain rather than gzip so the
 * bytes are the same as sqlite3's), its status URL polled until the import
 * ends. Timed from the first byte sent to the status saying it ended; the
 * gzip segment pass that the server's import process runs after a
 * publication is waited for (and timed) apart, before the next upload, as
 * nightly imports a day apart would be.
 *
 * Peak RSS of every process: the server and each child it starts (the import
 * process is a fresh child per import) are sampled from /proc (VmHWM, the
 * kernel's own high-water mark) every PROC_SAMPLE_MS while they live; a child
 * is sampled until it exits, so its last ~PROC_SAMPLE_MS of growth may be missed.
 *
 * The server runs under the unit's environment (deploy/mirador.service: jemalloc,
 * the young generation's size), as the api and tenants benches run theirs, and
 * its import process under what the server gives it (glibc's malloc, see
 * imports/import-process.ts); `--no-deploy-env` runs both bare.
 */
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import type { Backend, BenchDatabase } from './databases.js';
import { COMPANY, waitForSegments } from './dataset.js';
import { childPids } from '../test/helpers/child-pids.js';
import { allocatorLine, deploymentEnv } from './deployment-env.js';
import { mirador, miradorEnv, startMirador, type Server } from './processes.js';

const PROC_SAMPLE_MS = 50;
const POLL_MS = 50;

/** One import through the server. */
export interface ServerImportRun {
  wallMs: number;
  /** The import's own duration_ms (from when the import process claimed it). */
  applyMs: number;
  /** Publication to the last gzip segment written (0 when nothing was published). */
  segmentsMs: number;
  /** Peak RSS (KiB) of the server process over the whole run so far, and of its children during this import. */
  serverRssKb: number;
  childRssKb: number;
  report: { status: string; inserted: number; updated: number; unchanged: number; deleted: number; unchanged_snapshot?: boolean };
}

/** The processes of a tree and the highest VmHWM seen of each. */
class RssSampler {
  private readonly peaks = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly root: number) {}

  start() {
    this.timer = setInterval(() => this.sample(), PROC_SAMPLE_MS);
    this.sample();
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
    this.sample();
  }

  /** Forgets the children seen so far (the server's own peak is kept: it is cumulative anyway). */
  resetChildren() {
    for (const pid of [...this.peaks.keys()]) if (pid !== this.root) this.peaks.delete(pid);
  }

  get serverKb(): number {
    return this.peaks.get(this.root) ?? 0;
  }

  get childrenKb(): number {
    let max = 0;
    for (const [pid, kb] of this.peaks) if (pid !== this.root) max = Math.max(max, kb);
    return max;
  }

  private sample() {
    for (const pid of descendants(this.root)) {
      const kb = vmHwmKb(pid);
      if (kb !== null) this.peaks.set(pid, Math.max(this.peaks.get(pid) ?? 0, kb));
    }
  }
}

function vmHwmKb(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null; // gone
  }
}

/** `pid` and every process below it. */
function descendants(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...childPids(out[i]!));
  return out;
}

function put(url: string, token: string, file: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv', 'content-length': String(statSync(file).size) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (s: string) => (body += s));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    createReadStream(file).on('error', reject).pipe(req);
  });
}

async function uploadAndWait(server: Server, token: string, file: string): Promise<{ wallMs: number; report: ServerImportRun['report'] & { duration_ms: number } }> {
  const started = performance.now();
  const name = file.split('/').pop()!;
  const up = await put(`${server.base}/panel/api/imports/clientes?filename=${encodeURIComponent(name)}`, token, file);
  if (up.status !== 202) throw new Error(`upload of ${name}: ${up.status} ${up.body}`);
  // The path only: the URL's origin is PUBLIC_BASE_URL, which the benchmark's server does not set.
  const statusUrl = server.base + new URL((JSON.parse(up.body) as { status_url: string }).status_url).pathname;
  for (;;) {
    const res = await fetch(statusUrl, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    if (!res.ok) throw new Error(`${statusUrl}: ${res.status} ${await res.text()}`);
    const { import: job } = (await res.json()) as { import: { done: boolean; status: string; report: ServerImportRun['report'] & { duration_ms: number } } };
    if (job.done) {
      const wallMs = performance.now() - started;
      if (job.status !== 'succeeded') throw new Error(`import of ${name} ${job.status}: ${JSON.stringify(job.report)}`);
      return { wallMs, report: job.report };
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * One round on a fresh database: a server started, then each file in
 * `files` uploaded in turn (first import, re-imports), each timed to its end
 * and then to its segments.
 */
export async function serverImports(db: BenchDatabase, backend: Backend, files: string[]): Promise<ServerImportRun[]> {
  const env = miradorEnv(db.url);
  await mirador(['company', 'create', COMPANY, '--name', 'Benchmark S.L.'], env);
  const { key: token } = JSON.parse((await mirador(['token', 'create', COMPANY, '--json'], env)).stdout) as { key: string };
  const server = await startMirador({ ...env, ...deploymentEnv() }, { cpus: null, name: `mirador serve (${backend})` });
  process.stderr.write(allocatorLine(server.child.pid!));
  const rss = new RssSampler(server.child.pid!);
  rss.start();
  const runs: ServerImportRun[] = [];
  try {
    for (const file of files) {
      rss.resetChildren();
      const { wallMs, report } = await uploadAndWait(server, token, file);
      const segmentsMs = report.unchanged_snapshot ? 0 : await waitForSegments(db.url);
      runs.push({ wallMs, applyMs: report.duration_ms, segmentsMs, serverRssKb: rss.serverKb, childRssKb: rss.childrenKb, report });
    }
  } finally {
    rss.stop();
    await server.stop();
  }
  return runs;
}
