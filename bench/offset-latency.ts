/**
 * Issue 2, point 8: a list page costs the same at any offset. Loads 100,000
 * customers (150 columns) through the snapshot writer into a temporary SQLite
 * file, starts the server, and measures limit=100 at offset 0 and 99,900 (and
 * an updated_since page) in alternation, sequentially, reporting medians.
 *
 *   node dist/bench/offset-latency.js [records] [rounds]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest, Agent } from 'node:http';
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../src/config.js';
import { generateCredential } from '../src/domain/api-keys.js';
import { buildApp } from '../src/http/app.js';
import { replaceRecords, type RecordInput } from '../src/snapshots/write-records.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 2000);
const columns = ['CODIGO', ...Array.from({ length: 149 }, (_, i) => `${String(i + 1).padStart(2, '0')}_CAMPO_${i}`)];

const dir = mkdtempSync(join(tmpdir(), 'mirador-bench-'));
const store = new SqliteStore(join(dir, 'bench.db'));
await store.migrate();
const company = await store.createCompany('bench', 'Bench');
const cred = generateCredential('read');
await store.createCredential({ companyId: company.id, scope: 'read', prefix: cred.prefix, secretHash: cred.secretHash, label: null });

const rows: RecordInput[] = [];
for (let i = 0; i < N; i++) {
  const id = `C${String(i).padStart(7, '0')}`;
  const cells = columns.map((_, c) => (c === 0 ? id : c % 3 === 0 ? '' : `valor ${i} ${c}`));
  rows.push({ fields: [id, `Cliente ${i}`, 'B12345678', null, null, null], cells, line: i + 2 });
}
let t = Date.now();
await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns, at: Date.parse('2026-01-01T00:00:00Z') }, rows);
// A second import changing the last 1%, so updated_since selects a suffix.
for (let i = N - N / 100; i < N; i++) rows[i] = { ...rows[i]!, fields: [rows[i]!.fields[0]!, 'Cambiado', null, null, null, null] };
await replaceRecords(store, { companyId: company.id, kind: 'clientes', columns, at: Date.parse('2026-06-01T00:00:00Z') }, rows);
console.log(`loaded ${N} records twice in ${Date.now() - t} ms`);

const config = loadConfig({ LOG_LEVEL: 'silent' });
const app = await buildApp({ config, store, logger: pino({ level: 'silent' }) as unknown as FastifyBaseLogger });
const base = await app.fastify.listen({ port: 0, host: '127.0.0.1' });
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    httpRequest(`${base}${path}`, { agent, headers: { authorization: `Bearer ${cred.token}` } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(Number(process.hrtime.bigint() - start) / 1e6));
    }).on('error', reject).end();
  });
}

const scenarios = {
  'offset 0': '/v1/clientes?limit=100&offset=0',
  [`offset ${N - 100}`]: `/v1/clientes?limit=100&offset=${N - 100}`,
  'updated_since (last 1%)': '/v1/clientes?limit=100&updated_since=2026-06-01',
};
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(scenarios).map((k) => [k, []]));
for (const path of Object.values(scenarios)) for (let i = 0; i < 50; i++) await get(path); // warm-up
for (let r = 0; r < ROUNDS; r++) for (const [name, path] of Object.entries(scenarios)) samples[name]!.push(await get(path));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!;
t = 0;
console.log(`limit=100 pages over ${N} records, ${ROUNDS} alternating rounds, sequential requests:`);
for (const [name, xs] of Object.entries(samples)) console.log(`  ${name.padEnd(26)} median ${median(xs).toFixed(3)} ms   p99 ${p99(xs).toFixed(3)} ms`);
await app.fastify.close();
await app.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
