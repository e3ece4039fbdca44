/**
 * What a chunk read costs the process that keeps it, against one that does
 * not: random chunks of a Mirador SQLite file read with better-sqlite3, as a
 * detail's miss reads them, first kept (a cache filling: every Buffer is
 * memory new to the process) and then dropped (a full cache: the allocator
 * reuses what the collector freed), with a turn of the event loop every ten
 * reads, as requests give one. Prints microseconds and page faults a read.
 * The gap between the two rows is what memory new to the process costs on
 * the machine: on a virtual machine whose page faults are dear it is most of
 * a cold detail (performance.md, "Where a cold detail's time goes").
 *
 *   node dist/bench/chunk-read-cost.js <mirador.db> [--reads N]
 *
 * Run it under the unit's allocator to measure what a server gets:
 * `LD_PRELOAD=libjemalloc.so.2 taskset -c 0 node dist/bench/chunk-read-cost.js …`.
 */
import { readFileSync } from 'node:fs';
import { setImmediate as turn } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';

const { values: args, positionals } = parseArgs({ options: { reads: { type: 'string', default: '5000' } }, allowPositionals: true });
const file = positionals[0];
if (!file) throw new Error('usage: chunk-read-cost <mirador sqlite file> [--reads N]');
const reads = Number(args.reads);

const db = new Database(file, { readonly: true });
const ids = db.prepare('SELECT id FROM chunks').pluck().all() as number[];
if (ids.length === 0) throw new Error(`${file} holds no chunks`);
const read = db.prepare('SELECT bytes FROM chunks WHERE id = ?').pluck();

/** Minor page faults of this process so far (/proc/self/stat, field 10). */
const minorFaults = () => Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[7]);

async function measure(label: string, keep: Buffer[] | null) {
  const faults = minorFaults();
  const start = process.hrtime.bigint();
  let bytes = 0;
  for (let i = 0; i < reads; i++) {
    const chunk = read.get(ids[Math.floor(Math.random() * ids.length)]) as Buffer;
    bytes += chunk.length;
    keep?.push(chunk);
    if (i % 10 === 9) await turn();
  }
  const us = Number(process.hrtime.bigint() - start) / 1e3 / reads;
  const perRead = (minorFaults() - faults) / reads;
  const rss = process.memoryUsage().rss / 1024 / 1024;
  console.log(`${label.padEnd(10)} ${us.toFixed(1).padStart(7)} µs a read  ${perRead.toFixed(1).padStart(5)} page faults a read  ${(bytes / reads / 1024).toFixed(1)} KiB a chunk  RSS ${rss.toFixed(0)} MB`);
}

console.log(`${ids.length} chunks in ${file}; ${reads} random reads a row`);
await measure('warm-up', null);
const kept: Buffer[] = [];
await measure('kept', kept);
await measure('not kept', null);
console.log(`(${kept.length} chunks held)`);
