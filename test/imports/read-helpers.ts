/** Helpers for the CSV reading tests: byte sources cut as a test needs, and reading a whole file. */
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ImportError, type ImportErrorCode } from '../../src/imports/import-error.js';
import { openCsv, type CsvOptions, type CsvRow } from '../../src/imports/read-csv.js';

/** Path of a file under test/fixtures/csv/. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../../../test/fixtures/csv/${name}`, import.meta.url));
}

/** `bytes` as a source yielding pieces of `cut` bytes, or pieces ending at the given offsets. */
export async function* source(bytes: Buffer, cut: number | readonly number[] = bytes.length || 1): AsyncGenerator<Buffer> {
  const ends: number[] = [];
  if (typeof cut === 'number') for (let at = cut; at < bytes.length; at += cut) ends.push(at);
  else ends.push(...cut);
  ends.push(bytes.length);
  let from = 0;
  for (const to of ends) {
    if (to <= from) continue;
    yield bytes.subarray(from, to);
    from = to;
  }
}

export interface ReadResult {
  columns: string[];
  encoding: string;
  delimiter: string;
  rows: CsvRow[];
  batchSizes: number[];
  bytesRead: number;
}

/** Reads a whole file (bytes, or a fixture path) into memory. */
export async function readAll(input: Buffer | string, cut?: number | readonly number[], options?: CsvOptions): Promise<ReadResult> {
  const file = await openCsv(typeof input === 'string' ? createReadStream(input) : source(input, cut), options);
  const rows: CsvRow[] = [];
  const batchSizes: number[] = [];
  for await (const batch of file.batches()) {
    batchSizes.push(batch.length);
    rows.push(...batch);
  }
  return { columns: file.columns, encoding: file.encoding, delimiter: file.delimiter, rows, batchSizes, bytesRead: file.bytesRead() };
}

/** The cells of each row, for short assertions. */
export function cellsOf(result: ReadResult): string[][] {
  return result.rows.map((row) => row.cells);
}

/** Asserts that reading fails with an ImportError of `code` at `line`; returns it for message checks. */
export async function rejectsWith(
  reading: Promise<unknown>,
  code: ImportErrorCode,
  line: number | undefined,
  message?: RegExp,
): Promise<ImportError> {
  let caught: unknown;
  try {
    await reading;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ImportError, `expected an ImportError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.line, line, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}

export const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');
