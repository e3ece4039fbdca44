/**
 * The three CSV parsers we measured for imports, each used the way production
 * would use it: decoded text chunks in (after the same CsvTextDecoder), rows
 * out, streaming. Each gets its most favourable sound configuration.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse as csvParse, type Options as CsvParseOptions } from 'csv-parse';
import { inferSchema, initParser, type Parser as UdsvParser } from 'udsv';
import { CsvTextDecoder } from '../src/imports/decode-text.js';
import { RecordSplitter } from '../src/imports/record-splitter.js';

export interface Candidate {
  name: string;
  /** Rows of text given in pieces (the header row included). */
  split(pieces: readonly string[], delimiter: string): Promise<string[][]>;
  /** Streams a file from disk, calling `onRow` for each row (the header included). */
  readFile(path: string, delimiter: string, onRow: (row: string[]) => void): Promise<void>;
}

/** Decoded text of a file, chunk by chunk, as production reads it. */
export async function* decodedChunks(path: string): AsyncGenerator<string> {
  const decoder = new CsvTextDecoder();
  for await (const chunk of createReadStream(path)) {
    const text = decoder.write(chunk as Buffer);
    if (text.length > 0) yield text;
  }
  const rest = decoder.end();
  if (rest.length > 0) yield rest;
}

async function* fromArray(pieces: readonly string[]): AsyncGenerator<string> {
  yield* pieces;
}

// --- Papa Parse: its core Parser, through our RecordSplitter -------------------------------

async function papaRows(chunks: AsyncIterable<string>, delimiter: string, onRow: (row: string[]) => void): Promise<void> {
  const splitter = new RecordSplitter(delimiter, '\n');
  for await (const text of chunks) for (const row of splitter.push(text).rows) onRow(row);
  for (const row of splitter.end().rows) onRow(row);
}

const papaparse: Candidate = {
  name: 'papaparse 5.7 (Parser, chunked)',
  async split(pieces, delimiter) {
    const rows: string[][] = [];
    await papaRows(fromArray(pieces), delimiter, (row) => rows.push(row));
    return rows;
  },
  readFile: (path, delimiter, onRow) => papaRows(decodedChunks(path), delimiter, onRow),
};

// --- csv-parse: the stream API -------------------------------------------------------------

const csvParseOptions = (delimiter: string): CsvParseOptions => ({
  delimiter,
  record_delimiter: ['\r\n', '\n'],
  relax_column_count: true, // we check cell counts ourselves, naming the line
  relax_quotes: true, // `Tubo 1/2"` is text
});

async function csvParseRows(chunks: AsyncIterable<string>, delimiter: string, onRow: (row: string[]) => void): Promise<void> {
  const parser = csvParse(csvParseOptions(delimiter));
  const feeding = pipeline(Readable.from(chunks), parser);
  for await (const row of parser) onRow(row as string[]);
  await feeding;
}

const csvParseCandidate: Candidate = {
  name: 'csv-parse 7.0 (stream)',
  async split(pieces, delimiter) {
    const rows: string[][] = [];
    await csvParseRows(fromArray(pieces), delimiter, (row) => rows.push(row));
    return rows;
  },
  readFile: (path, delimiter, onRow) => csvParseRows(decodedChunks(path), delimiter, onRow),
};

// --- uDSV: inferSchema on the first chunk, then parser.chunk() ------------------------------

async function udsvRows(chunks: AsyncIterable<string>, delimiter: string, onRow: (row: string[]) => void): Promise<void> {
  let parser: UdsvParser | null = null;
  let head = '';
  const each = (row: string[]): void => void onRow(row);
  for await (const text of chunks) {
    if (parser !== null) {
      parser.chunk<string[]>(text, parser.stringArrs, each);
      continue;
    }
    head += text;
    if (!/\n|\r[^\n]/.test(head)) continue; // inferSchema needs a whole first line and its line break
    parser = initParser(inferSchema(head, { col: delimiter }));
    onRow(parser.schema.cols.map((col) => col.name));
    parser.chunk<string[]>(head, parser.stringArrs, each);
  }
  if (parser === null) {
    if (head !== '') onRow(head.split(delimiter));
    return;
  }
  parser.end();
}

const udsv: Candidate = {
  name: 'udsv 0.7 (chunk)',
  async split(pieces, delimiter) {
    const rows: string[][] = [];
    await udsvRows(fromArray(pieces), delimiter, (row) => rows.push(row));
    return rows;
  },
  readFile: (path, delimiter, onRow) => udsvRows(decodedChunks(path), delimiter, onRow),
};

export const CANDIDATES: readonly Candidate[] = [csvParseCandidate, papaparse, udsv];
