/**
 * Throughput of the upload decoder alone (decode-text.ts), as the CSV reader
 * drives it: 64 KiB pieces of a ~72 MB export (100,000 customers, 150
 * columns), once as written (Windows-1252) and once converted to UTF-8.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/decode-text-bench.js [--rows 100000] [--runs 7]
 *
 * Prints the median and the range of MB/s (of file bytes) per encoding.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import iconv from 'iconv-lite';
import { CsvTextDecoder } from '../src/imports/decode-text.js';
import { ensureClientesCsv } from './clientes-fixture.js';

const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, runs: { type: 'string', default: '7' } } });
const PIECE = 64 * 1024;

function decodeOnce(bytes: Buffer): number {
  const decoder = new CsvTextDecoder();
  let chars = 0;
  for (let at = 0; at < bytes.length; at += PIECE) chars += decoder.write(bytes.subarray(at, at + PIECE)).length;
  return chars + decoder.end().length;
}

const windows1252 = readFileSync(await ensureClientesCsv(Number(args.rows)));
const utf8 = Buffer.from(iconv.decode(windows1252, 'windows-1252'), 'utf8');
for (const [name, bytes] of [['windows-1252', windows1252], ['utf-8', utf8]] as const) {
  decodeOnce(bytes); // warm-up
  const rates: number[] = [];
  for (let run = 0; run < Number(args.runs); run++) {
    const started = process.hrtime.bigint();
    decodeOnce(bytes);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    rates.push(bytes.length / 1e6 / seconds);
  }
  rates.sort((a, b) => a - b);
  const f = (r: number) => r.toFixed(0);
  console.log(`${name}: ${(bytes.length / 1e6).toFixed(1)} MB, median ${f(rates[rates.length >> 1]!)} MB/s (${f(rates[0]!)}-${f(rates.at(-1)!)})`);
}
