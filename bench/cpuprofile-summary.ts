/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most
 * self time, and with the most inclusive time (idle left out of the latter),
 * as percentages. How the README's "what bounds it" figures were read.
 *
 *   LOG_LEVEL=silent RATE_LIMIT_PER_MINUTE=1000000000 taskset -c 0 \
 *     node --cpu-prof --cpu-prof-dir=prof dist/src/main.js serve --port 8080
 *   taskset -c 1 wrk -t1 -c10 -d10s -H "Authorization: Bearer $KEY" http://127.0.0.1:8080/v1/clientes/C0050001
 *   kill -INT <server pid>   # the profile is written on exit
 *   node dist/bench/cpuprofile-summary.js prof/<largest>.cpuprofile [rows] [--under <function>]
 *
 * `--under add` adds the milliseconds spent under the functions whose label
 * (`name file:line`) starts with it, and which functions took them.
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

const args = process.argv.slice(2);
const underAt = args.indexOf('--under');
/** With `--under <name>`: also the time spent under the functions whose label starts with it, and where. */
const under = underAt >= 0 ? args.splice(underAt, 2)[1] : undefined;
const [file, rowsArg] = args;
if (!file || (underAt >= 0 && !under)) throw new Error('usage: cpuprofile-summary <file.cpuprofile> [rows] [--under <function name>]');
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
const selfUnder = new Map<string, number>();
let total = 0;
let busy = 0;
let underTotal = 0;
for (const [id, t] of timeOf) {
  const node = byId.get(id)!;
  total += t;
  if (under !== undefined) {
    let cur: number | undefined = id;
    while (cur !== undefined && !label(byId.get(cur)!).startsWith(under)) cur = parent.get(cur);
    if (cur !== undefined) {
      underTotal += t;
      selfUnder.set(label(node), (selfUnder.get(label(node)) ?? 0) + t);
    }
  }
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
if (under !== undefined) print(`under ${under}: ${(underTotal / 1e3).toFixed(0)} ms, self time there, % of it`, selfUnder, underTotal);
