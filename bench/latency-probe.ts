/**
 * Sends one request every `intervalMs` to one path and records each
 * latency from the moment the request was due (so a stalled server is not
 * hidden by requests that were never sent: no coordinated omission). Runs
 * until SIGTERM, then prints one JSON line: the latencies in ms, and errors.
 *
 *   node dist/bench/latency-probe.js '{"url": "...", "key": "...", "intervalMs": 10}'
 */
import { Agent, request } from 'node:http';

const spec = JSON.parse(process.argv[2]!) as { url: string; key: string; intervalMs: number };
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
const latencies: number[] = [];
/** When each request was due, in ms from the start: to tell when slow ones happened. */
const dues: number[] = [];
let errors = 0;
let stopping = false;

function get(due: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(spec.url, { agent, headers: { authorization: `Bearer ${spec.key}` } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) {
          latencies.push(performance.now() - due);
          dues.push(due - start);
        }
        else errors++;
        resolve();
      });
    });
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end();
  });
}

const start = performance.now();
const inFlight = new Set<Promise<void>>();
let n = 0;
const tick = () => {
  if (stopping) return;
  // Every request that fell due is sent now, timed from when it was due.
  const now = performance.now();
  while (start + n * spec.intervalMs <= now) {
    const p = get(start + n * spec.intervalMs);
    inFlight.add(p);
    void p.then(() => inFlight.delete(p));
    n++;
  }
  setTimeout(tick, Math.max(0, start + n * spec.intervalMs - performance.now()));
};
tick();

process.once('SIGTERM', async () => {
  stopping = true;
  await Promise.all(inFlight);
  const slowest = latencies.map((l, i) => ({ at: Math.round(dues[i]!), ms: Math.round(l) })).sort((a, b) => b.ms - a.ms).slice(0, 5);
  process.stdout.write(JSON.stringify({ latencies, errors, slowest }) + '\n');
  agent.destroy();
  process.exit(0);
});
