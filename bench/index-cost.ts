/**
 * What the filter indexes and thin chunks (issue 17) add to an import's
 * writer: the same rendered customers laid out by ChunkBuilder without and
 * with its kind (which also indexes), in alternating rounds, CPU time of this
 * thread. Not a subcommand of `npm run bench`: run it by hand, after a bench
 * run wrote the fixture:
 *
 *   node dist/bench/index-cost.js /tmp/mirador-bench/clientes-100000.csv
 */
import { createReadStream } from 'node:fs';
import { openCsv } from '../src/imports/read-csv.js';
import { ItemRenderer } from '../src/domain/item-renderer.js';
import { ChunkBuilder } from '../src/store/chunk-builder.js';

const file = process.argv[2]!;
const csv = await openCsv(createReadStream(file));
const col = (name: string) => csv.columns.findIndex((c) => c.toUpperCase().includes(name));
const at = [0, col('NOMBRE_COMERCIAL'), col('CIF'), col('EMAIL'), col('TELEFONO'), col('DOMICILIO')];
const renderer = new ItemRenderer('clientes', csv.columns);
const bodies: Buffer[] = [];
for await (const batch of csv.batches()) {
  for (const row of batch) {
    const fields = at.map((i) => (i < 0 ? null : row.cells[i]!.trim() || null));
    bodies.push(renderer.body(fields, row.cells));
  }
}
const T = Date.UTC(2026, 10, 25);
function layOut(indexed: boolean): number {
  const start = process.cpuUsage();
  const builder = new ChunkBuilder({ views: true, ...(indexed ? { kind: 'clientes' as const } : {}) });
  for (const b of bodies) {
    if (builder.add(b, T)) builder.recycle();
  }
  builder.flush();
  const mid = process.cpuUsage(start);
  const blobs = [...builder.indexes()];
  const used = process.cpuUsage(start);
  if (indexed) finishMs.push((used.user + used.system - mid.user - mid.system) / 1000);
  void blobs;
  return (used.user + used.system) / 1000;
}
const finishMs: number[] = [];
const plain: number[] = [];
const indexed: number[] = [];
for (let round = 0; round < 5; round++) {
  plain.push(layOut(false));
  indexed.push(layOut(true));
}
const med = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rss = process.memoryUsage().rss / 2 ** 20;
console.log(`${bodies.length} items: lay-out ${med(plain).toFixed(0)} ms CPU, with indexes and thin chunks ${med(indexed).toFixed(0)} ms (+${(med(indexed) - med(plain)).toFixed(0)} ms, of which ${med(finishMs).toFixed(0)} ms making the index blobs at the end); rss ${rss.toFixed(0)} MiB`);
