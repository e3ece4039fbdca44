/**
 * CPU of the parsing half of an import (upload-rows.ts: decode, split, check,
 * map, normalise, render), alone, in this thread: what bounds `mirador
 * import` when the parsing thread is the busier one. The file is fed in
 * 1 MiB pieces, as the stores keep uploads. Prints, per round, the process's
 * CPU (user + sys, which includes V8's helper threads: their garbage
 * collection is the parser's cost too) and a SHA-256 of everything the
 * parser hands on (head, rendered bytes, ends, ids, lines, warnings), so that
 * two versions of the parser can be shown to give the same bytes.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/parse-cpu.js [--file F.csv] [--rows 100000] [--rounds 5] [--hash]
 *
 * `--hash` also hashes each body (SHA-256), as the parsing thread does when
 * the writer is the slower (PostgreSQL).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { hashBatch } from '../src/snapshots/write-records.js';
import { openUploadRows } from '../src/imports/upload-rows.js';
import { ensureClientesCsv } from './clientes-fixture.js';

const { values: args } = parseArgs({
  options: {
    file: { type: 'string' },
    rows: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '5' },
    hash: { type: 'boolean', default: false },
    digest: { type: 'boolean', default: false },
  },
});
const PIECE = 1024 * 1024;

async function* pieces(bytes: Buffer): AsyncGenerator<Uint8Array> {
  // Fresh copies, as a store hands them out (the parser may keep views of them).
  for (let at = 0; at < bytes.length; at += PIECE) yield Buffer.from(bytes.subarray(at, at + PIECE));
}

async function once(bytes: Buffer): Promise<{ cpuMs: number; wallMs: number; rows: number; digest: string }> {
  const digest = createHash('sha256');
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const rows = await openUploadRows(pieces(bytes), { kind: 'clientes', override: {} });
  digest.update(JSON.stringify(rows.head));
  let count = 0;
  for await (const batch of rows.batches()) {
    if (args.hash) batch.hashes = hashBatch(batch, 'sha256');
    count += batch.ids.length;
    if (!args.digest) continue;
    digest.update(batch.bytes).update(new Uint8Array(batch.ends.buffer)).update(new Uint8Array(batch.lines.buffer));
    digest.update(batch.ids.join('\n')).update(JSON.stringify(batch.newWarnings)).update(String(batch.warningsTotal));
  }
  digest.update(rows.encoding());
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - wall, rows: count, digest: args.digest ? digest.digest('hex').slice(0, 16) : '-' };
}

const bytes = readFileSync(args.file ?? (await ensureClientesCsv(Number(args.rows))));
const results = [];
for (let round = 0; round < Number(args.rounds); round++) {
  const r = await once(bytes);
  results.push(r);
  console.log(`round ${round + 1}: cpu ${r.cpuMs.toFixed(0)} ms, wall ${r.wallMs.toFixed(0)} ms, ${r.rows} rows, output ${r.digest}`);
}
const cpu = results.map((r) => r.cpuMs).sort((a, b) => a - b);
console.log(`median cpu ${cpu[cpu.length >> 1]!.toFixed(0)} ms (min ${cpu[0]!.toFixed(0)}), ${(bytes.length / 2 ** 20).toFixed(1)} MiB`);
