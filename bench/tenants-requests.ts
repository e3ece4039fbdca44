/**
 * The request mix of the tenants benchmark, written as a file of request
 * lines (path, API key, If-None-Match) that wrk replays in order through a
 * Lua script, each line with its own company's key:
 *
 *   20%  list, limit=100 at a random offset
 *   30%  detail of an id drawn uniformly from the company's whole id space
 *   10%  detail revalidated with If-None-Match (304)
 *    5%  list revalidated with If-None-Match (304)
 *   10%  updated_since list (the change feed from the company's import), random offset
 *   15%  filtered list: estado= on works or notices, limit=100
 *   10%  search: q= one word prefix on customers, limit=20
 *
 * The kind of lists and details is drawn uniformly from the four. The company
 * of each line is drawn from a Zipf distribution (tenants-plan.ts), or is the
 * one company of a single-company run. Revalidations come from a pool of
 * responses fetched beforehand (a client revalidates what it has read); their
 * ETags are fetched from the server while the lines are made.
 */
import { writeFileSync } from 'node:fs';
import { KINDS, type Kind } from '../src/domain/kinds.js';
import { code, mulberry32 } from './clientes-fixture.js';
import { zipfSampler } from './tenants-plan.js';
import type { Tenant } from './tenants-load.js';

const PREFIX: Record<Kind, string> = { clientes: 'C', articulos: 'A', obras: 'O', 'avisos-correctivo': 'V' };

export const MIX: readonly { name: string; weight: number }[] = [
  { name: 'list', weight: 20 },
  { name: 'detail', weight: 30 },
  { name: 'detail-304', weight: 10 },
  { name: 'list-304', weight: 5 },
  { name: 'updated_since', weight: 10 },
  { name: 'estado', weight: 15 },
  { name: 'q', weight: 10 },
];

interface Line {
  path: string;
  key: string;
  etag: string;
}

/** Values the filters use, read from the largest company (every company's rows come from the same sample rows). */
export interface FilterValues {
  estado: Record<'obras' | 'avisos-correctivo', string[]>;
  words: string[];
}

async function getJson(base: string, path: string, key: string): Promise<{ status: number; etag: string; body: unknown }> {
  // Identity, as wrk asks: each encoding has its own ETag, and fetch would ask for gzip.
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, etag: res.headers.get('etag') ?? '', body: JSON.parse(text) };
}

export async function filterValues(base: string, tenant: Tenant): Promise<FilterValues> {
  const items = async (path: string) => ((await getJson(base, path, tenant.key)).body as { items: Record<string, unknown>[] }).items;
  const estados = async (kind: 'obras' | 'avisos-correctivo') =>
    [...new Set((await items(`/v1/${kind}?limit=1000&fields=estado`)).map((i) => i.estado).filter((e): e is string => typeof e === 'string' && e !== ''))].sort();
  const words = new Set<string>();
  for (const i of await items('/v1/clientes?limit=1000&fields=nombre')) {
    const first = /^\p{L}{4,}/u.exec(String(i.nombre ?? ''));
    if (first) words.add(first[0].slice(0, 4).toLowerCase());
  }
  return { estado: { obras: await estados('obras'), 'avisos-correctivo': await estados('avisos-correctivo') }, words: [...words].sort() };
}

/** Every company's `actualizado_at` (one import each), read once. */
async function importedAt(base: string, tenant: Tenant): Promise<string> {
  if (tenant.importedAt) return tenant.importedAt;
  const body = (await getJson(base, '/v1/clientes?limit=1', tenant.key)).body as { items: { actualizado_at: string }[] };
  return (tenant.importedAt = body.items[0]!.actualizado_at);
}

/**
 * Writes `count` request lines for `tenants` (Zipf over them; one tenant: all
 * its own) to `file`, fetching what revalidations and change feeds need from
 * the server at `base`. Deterministic for the same tenants and seed.
 */
export async function writeRequestLines(options: {
  base: string;
  tenants: readonly Tenant[];
  values: FilterValues;
  count: number;
  file: string;
  seed: number;
  revalidationPool?: number;
}): Promise<{ lines: number; byName: Record<string, number> }> {
  const { base, tenants, values, count, file, seed } = options;
  const random = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const company = tenants.length === 1 ? () => tenants[0]! : zipfSampler(tenants, random);
  const total = MIX.reduce((n, m) => n + m.weight, 0);
  const choose = () => {
    let x = random() * total;
    for (const m of MIX) if ((x -= m.weight) < 0) return m.name;
    return MIX[MIX.length - 1]!.name;
  };
  const offset = (rows: number) => Math.floor(random() * rows);

  // The revalidation pool: paths read first, then revalidated with their ETags.
  const poolSize = options.revalidationPool ?? 2000;
  const detailPool: Line[] = [];
  const listPool: Line[] = [];
  for (let i = 0; i < poolSize; i++) {
    const t = company();
    const kind = pick(KINDS);
    if (i % 3 === 2) listPool.push({ path: `/v1/${kind}?limit=100`, key: t.key, etag: '' });
    else detailPool.push({ path: `/v1/${kind}/${code(PREFIX[kind], offset(t.rows[kind]))}`, key: t.key, etag: '' });
  }
  await inParallel([...detailPool, ...listPool], 8, async (l) => {
    l.etag = (await getJson(base, l.path, l.key)).etag;
    if (!l.etag) throw new Error(`no ETag on ${l.path}`);
  });

  const byName: Record<string, number> = {};
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = choose();
    byName[name] = (byName[name] ?? 0) + 1;
    let line: Line;
    if (name === 'detail-304') line = pick(detailPool);
    else if (name === 'list-304') line = pick(listPool);
    else {
      const t = company();
      const kind = pick(KINDS);
      let path: string;
      if (name === 'list') path = `/v1/${kind}?limit=100&offset=${offset(t.rows[kind])}`;
      else if (name === 'detail') path = `/v1/${kind}/${code(PREFIX[kind], offset(t.rows[kind]))}`;
      else if (name === 'updated_since') path = `/v1/${kind}?updated_since=${encodeURIComponent(await importedAt(base, t))}&limit=100&offset=${offset(t.rows[kind])}`;
      else if (name === 'estado') {
        const k = pick(['obras', 'avisos-correctivo'] as const);
        path = `/v1/${k}?estado=${encodeURIComponent(pick(values.estado[k]))}&limit=100`;
      } else path = `/v1/clientes?q=${encodeURIComponent(pick(values.words))}&limit=20`;
      line = { path, key: t.key, etag: '' };
    }
    out.push(`${line.path}\t${line.key}\t${line.etag}`);
  }
  writeFileSync(file, out.join('\n') + '\n');
  return { lines: out.length, byName };
}

async function inParallel<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * wrk's script: reads the request lines once per thread, builds each request
 * (with its own Authorization and If-None-Match), and sends them in order
 * from line `start` on, wrapping around.
 */
export const WRK_SCRIPT = `
local reqs = {}
local i = 0
init = function(args)
  local file = args[1]
  i = tonumber(args[2] or "0")
  for l in io.lines(file) do
    local path, key, etag = l:match("^([^\\t]*)\\t([^\\t]*)\\t(.*)$")
    local headers = { ["Authorization"] = "Bearer " .. key }
    if etag ~= "" then headers["If-None-Match"] = etag end
    reqs[#reqs + 1] = wrk.format("GET", path, headers)
  end
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"bad":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout + e.status))
end
`;
