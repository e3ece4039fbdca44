/**
 * What a chunk read costs the process that keeps it, against one that does
 * not: random chunks of a company's live snapshot read through the store's
 * synchronous read (`Store.readChunksNow`, SQLite), as a detail's miss reads
 * them, first kept (a cache filling: every Buffer is memory new to the
 * process) and then dropped (a full cache: the allocator reuses what the
 * collector freed), with a turn of the event loop every ten reads, as
 * requests give one. Prints microseconds and page faults a read. The gap
 * between the two rows is what memory new to the process costs on the
 * machine: on a virtual machine whose page faults are dear it is most of a
 * cold detail (performance.md, "Where a cold detail's time goes").
 *
 *   node dist/bench/chunk-read-cost.js --db sqlite:///path/mirador.db [--company bench] [--kind clientes] [--reads N]
 *
 * Run it under the unit's allocator to measure what a server gets:
 * `LD_PRELOAD=libjemalloc.so.2 taskset -c 0 node dist/bench/chunk-read-cost.js …`.
 */
import { readFileSync } from 'node:fs';
import { setImmediate as turn } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { isKind, type Kind } from '../src/domain/kinds.js';
import { openStore } from '../src/store/open-store.js';
import type { Chunk } from '../src/store/store.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    company: { type: 'string', default: 'bench' },
    kind: { type: 'string', default: 'clientes' },
    reads: { type: 'string', default: '5000' },
  },
});
if (!args.db || !isKind(args.kind!)) throw new Error('usage: chunk-read-cost --db <sqlite url> [--company slug] [--kind kind] [--reads N]');
const reads = Number(args.reads);

const store = await openStore(args.db);
if (!store.readChunksNow) throw new Error('the store does not read synchronously: this measures SQLite (readChunksNow)');
const company = await store.companyBySlug(args.company!);
if (!company) throw new Error(`no company ${args.company}`);
const snapshotId = await store.liveSnapshotId(company.id, args.kind as Kind);
const meta = snapshotId === null ? null : await store.snapshotMeta(snapshotId);
if (!meta) throw new Error(`${args.company} has no live snapshot of ${args.kind}`);
const chunkCount = meta.chunkStarts.length;
const readNow = store.readChunksNow.bind(store);

/** Minor page faults of this process so far (/proc/self/stat, field 10). */
const minorFaults = () => Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[7]);

async function measure(label: string, keep: Chunk[] | null) {
  const faults = minorFaults();
  const start = process.hrtime.bigint();
  let bytes = 0;
  for (let i = 0; i < reads; i++) {
    const no = Math.floor(Math.random() * chunkCount);
    const chunk = readNow(meta!.id, no, no)[0]!;
    bytes += chunk.bytes.length;
    keep?.push(chunk);
    if (i % 10 === 9) await turn();
  }
  const us = Number(process.hrtime.bigint() - start) / 1e3 / reads;
  const perRead = (minorFaults() - faults) / reads;
  const rss = process.memoryUsage().rss / 1024 / 1024;
  console.log(`${label.padEnd(10)} ${us.toFixed(1).padStart(7)} µs a read  ${perRead.toFixed(1).padStart(5)} page faults a read  ${(bytes / reads / 1024).toFixed(1)} KiB a chunk  RSS ${rss.toFixed(0)} MB`);
}

console.log(`${chunkCount} chunks in ${args.company}'s ${args.kind}; ${reads} random reads a row`);
await measure('warm-up', null);
const kept: Chunk[] = [];
await measure('kept', kept);
await measure('not kept', null);
console.log(`(${kept.length} chunks held)`);
await store.close();
