/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most
 * self time, and with the most inclusive time (idle left out of the latter),
 * as percentages. How the README's "what bounds it" figures were read.
 *
 *   LOG_LEVEL=silent RATE_LIMIT_PER_MINUTE=1000000000 taskset -c 0 \
 *     node --cpu-prof --cpu-prof-dir=prof dist/src/main.js serve --port 8080
 *   taskset -c 1 wrk -t1 -c10 -d10s -H "Authorization: Bearer $KEY" http://127.0.0.1:8080/v1/clientes/C0050001
 *   kill -INT <server pid>   # the profile is written on exit
 *   node dist/bench/cpuprofile-summary.js prof/<largest>.cpuprofile [rows]
 *
 * The import child process writes a profile of its own into the same folder:
 * the server's is the largest.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, rowsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: cpuprofile-summary <file.cpuprofile> [rows]');
const rows = Number(rowsArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const timeOf = new Map<number, number>();
profile.samples.forEach((id, i) => timeOf.set(id, (timeOf.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const label = (n: ProfileNode) => {
  const f = n.callFrame;
  const where = f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist\/)/, '$1');
  return `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
};

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
let busy = 0;
for (const [id, t] of timeOf) {
  const node = byId.get(id)!;
  total += t;
  self.set(label(node), (self.get(label(node)) ?? 0) + t);
  if (node.callFrame.functionName === '(idle)') continue;
  busy += t;
  // Each function once per sample, however deep the recursion.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const key = label(byId.get(cur)!);
    if (key.startsWith('(root)') || seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + t);
  }
}

const print = (title: string, values: Map<string, number>, of: number) => {
  process.stdout.write(`\n${title}\n`);
  for (const [key, t] of [...values].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    process.stdout.write(`${((100 * t) / of).toFixed(1).padStart(6)}%  ${key}\n`);
  }
};
process.stdout.write(`${(total / 1e6).toFixed(2)} s sampled, ${((100 * (total - busy)) / total).toFixed(1)}% idle\n`);
print('self time, % of all samples', self, total);
print('inclusive time, % of busy samples', inclusive, busy);
