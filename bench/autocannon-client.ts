/**
 * The load generator when wrk is not installed: autocannon in its own process
 * (load.ts pins it to a core). Takes a LoadSpec as JSON in argv[2] and prints
 * one JSON result line.
 */
import autocannon from 'autocannon';
import type { LoadSpec } from './load.js';

const spec = JSON.parse(process.argv[2]!) as LoadSpec;
let seed = 20261121;
const random = () => {
  // A tiny LCG: the same sequence every run, like wrk's seeded Lua random.
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 4294967296;
};

const result = await autocannon({
  url: spec.base,
  connections: spec.connections,
  duration: spec.seconds,
  headers: spec.headers,
  requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: spec.paths[Math.floor(random() * spec.paths.length)] }) }],
});
process.stdout.write(
  JSON.stringify({
    rps: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    bad: result['4xx'] + result['5xx'] + result.errors + result.timeouts,
  }) + '\n',
);
