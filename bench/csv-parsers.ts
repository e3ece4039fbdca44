/**
 * Chooses the CSV parser for imports by measurement (issue 3, point 2).
 *
 *   npx tsc -p tsconfig.json && node dist/bench/csv-parsers.js [--rows 100000] [--runs 5] [--only NAME]
 *
 * 1. Correctness: every case of test/imports/csv-cases.ts, fed whole and in
 *    pieces of 1, 2, 3 and 7 characters, through each candidate.
 * 2. Speed: a deterministic Windows-1252 customers export (150 columns, see
 *    clientes-fixture.ts) streamed from disk, decoded and split, several runs
 *    in turn; the median MiB/s (of file bytes) is reported. For reference:
 *    decoding alone (ours, and iconv-lite's own Windows-1252 decoder), and
 *    the production reader (openCsv) with its checks.
 *
 * Every candidate uses the same decoder, so the differences are the parsers'.
 */
import { createReadStream, statSync } from 'node:fs';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import iconv from 'iconv-lite';
import { openCsv } from '../src/imports/read-csv.js';
import { CSV_CASES, pieces, withoutBlankLines } from '../test/imports/csv-cases.js';
import { ensureClientesCsv } from './clientes-fixture.js';
import { CANDIDATES, decodedChunks, type Candidate } from './csv-parser-candidates.js';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '5' },
    only: { type: 'string' },
  },
});
const ROWS = Number(args.rows);
const RUNS = Number(args.runs);
const PIECE_SIZES = [Infinity, 1, 2, 3, 7];

interface Measured {
  name: string;
  failures: string[];
  mibPerSecond: number[];
  rows: number;
}

async function failures(candidate: Candidate): Promise<string[]> {
  const failed: string[] = [];
  for (const testCase of CSV_CASES) {
    for (const size of PIECE_SIZES) {
      const input = size === Infinity ? [testCase.text] : pieces(testCase.text, size);
      let rows: string[][];
      try {
        rows = await candidate.split(input, testCase.delimiter);
      } catch (error) {
        failed.push(`${testCase.name} (pieces of ${size}): threw ${(error as Error).message}`);
        break;
      }
      if (!isDeepStrictEqual(withoutBlankLines(rows), testCase.rows)) {
        failed.push(`${testCase.name} (pieces of ${size}): got ${JSON.stringify(rows)}`);
        break;
      }
    }
  }
  return failed;
}

type Run = (path: string) => Promise<number>;

const runs: { name: string; run: Run; candidate?: Candidate }[] = [
  {
    name: "decode only, iconv-lite's windows-1252 decoder (reference)",
    run: async (path) => {
      const decoder = iconv.getDecoder('windows-1252');
      for await (const chunk of createReadStream(path)) decoder.write(chunk as Buffer);
      return 0;
    },
  },
  {
    name: 'decode only, CsvTextDecoder (what every reader below starts with)',
    run: async (path) => {
      for await (const _text of decodedChunks(path));
      return 0;
    },
  },
  ...CANDIDATES.map((candidate) => ({
    name: candidate.name,
    candidate,
    run: async (path: string) => {
      let rows = 0;
      await candidate.readFile(path, ';', () => rows++);
      return rows - 1; // without the header
    },
  })),
  {
    name: 'openCsv (production reader: papaparse + checks)',
    run: async (path) => {
      const file = await openCsv(createReadStream(path));
      let rows = 0;
      for await (const batch of file.batches()) rows += batch.length;
      return rows;
    },
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function main(): Promise<void> {
  const path = await ensureClientesCsv(ROWS);
  const bytes = statSync(path).size;
  const mib = bytes / 2 ** 20;
  console.log(`File: ${path}, ${mib.toFixed(1)} MiB, ${ROWS} rows × 150 columns; ${RUNS} runs each, in turn.`);
  console.log(`Node ${process.version}, ${process.platform}/${process.arch}\n`);

  const selected = runs.filter((r) => args.only === undefined || r.name.includes(args.only));
  const measured: Measured[] = [];
  for (const r of selected) {
    measured.push({ name: r.name, failures: r.candidate ? await failures(r.candidate) : [], mibPerSecond: [], rows: 0 });
  }
  for (let i = 0; i < RUNS; i++) {
    for (const [k, r] of selected.entries()) {
      const m = measured[k] as Measured;
      const start = process.hrtime.bigint();
      m.rows = await r.run(path);
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      m.mibPerSecond.push(mib / seconds);
    }
  }

  console.log('| reader | quoting cases | rows | median MiB/s | min–max MiB/s | rows/s |');
  console.log('|---|---|---|---|---|---|');
  for (const m of measured) {
    const med = median(m.mibPerSecond);
    const isCandidate = selected.some((r) => r.name === m.name && r.candidate !== undefined);
    const cases = isCandidate ? `${CSV_CASES.length - m.failures.length}/${CSV_CASES.length}` : '—';
    const range = `${Math.min(...m.mibPerSecond).toFixed(1)}–${Math.max(...m.mibPerSecond).toFixed(1)}`;
    const rowsPerSecond = m.rows > 0 ? Math.round((m.rows * med) / mib).toLocaleString('en') : '—';
    console.log(`| ${m.name} | ${cases} | ${m.rows > 0 ? m.rows : '—'} | ${med.toFixed(1)} | ${range} | ${rowsPerSecond} |`);
  }
  for (const m of measured.filter((x) => x.failures.length > 0)) {
    console.log(`\n${m.name} fails:`);
    for (const f of m.failures) console.log(`  - ${f.length > 300 ? `${f.slice(0, 300)}…` : f}`);
  }
  const correct = measured.filter((m) => selected.find((r) => r.name === m.name)?.candidate && m.failures.length === 0);
  const best = correct.sort((a, b) => median(b.mibPerSecond) - median(a.mibPerSecond))[0];
  if (best) console.log(`\nFastest correct parser: ${best.name}`);
}

await main();
