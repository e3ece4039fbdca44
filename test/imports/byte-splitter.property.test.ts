/**
 * Issue 23, point 4: records are split on the file's bytes
 * (ByteRecordSplitter) and rendered from them (ItemRenderer.writeRaw), not
 * from decoded text. Over random CSV bytes — quotes, doubled quotes,
 * delimiters and CR/LF inside quotes, stray and unclosed quotes, high bytes
 * 0x80–0xFF, UTF-8 characters, lone surrogates of UTF-16 files — cut into
 * pieces anywhere, that must give exactly what the text path gives: Papa
 * Parse's full parse of the decoded text (the same cells, line spans, first
 * broken record and kind of problem), and for every record the same JSON
 * bytes as rendering its decoded cells.
 */
import { firstQuoteProblem } from '../helpers/split-problems.js';
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { ItemRenderer } from '../../src/domain/item-renderer.js';
import { ByteRecordSplitter, type ByteSplit } from '../../src/imports/byte-splitter.js';
import { bytesText, type ByteEncoding, recordCells, wtf8Bytes } from '../../src/imports/cell-bytes.js';
import { RecordSplitter, type Split } from '../../src/imports/record-splitter.js';
import { WINDOWS_1252_UTF8 } from '../../src/imports/windows-1252.js';

const bytesOf = (text: string) => [...Buffer.from(text, 'latin1')];
/** Windows-1252 files: structure, ASCII oddities, and any byte from 0x80 (undefined ones too: they read as C1 controls on both paths). */
const WINDOWS_1252_PIECE = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...['a', ' ', ';', ',', '"', '""', '\r', '\n', '\r\n', '\t', '\\', '\u0001', '/'].map(bytesOf)) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((b) => [b]) },
);
/** UTF-16 files reach the splitter as UTF-8 (wtf8Bytes); UTF-8 files are that without lone surrogates. */
const UTF16_PIECE = fc.constantFrom('a', ' ', ';', '"', '""', '\r', '\n', '\r\n', '\\', '\u0002', 'é', '€', '\u00a0', '\u3000', '\u0085', '😀', '\ud800', '\udfff', '\ued00');

/** Cut points, sorted, within `length`. */
const CUTS = fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 6 }).map((cuts) => cuts.sort((a, b) => a - b));

function splitBytes(bytes: Buffer, cuts: number[], delimiter: string, newline: '\n' | '\r', encoding: ByteEncoding): ByteSplit[] {
  const splitter = new ByteRecordSplitter(delimiter, newline, () => encoding);
  const splits: ByteSplit[] = [];
  let from = 0;
  for (const cut of [...cuts.filter((c) => c < bytes.length), bytes.length]) {
    splits.push(splitter.push(bytes.subarray(from, cut)));
    from = cut;
  }
  splits.push(splitter.end());
  return splits;
}

/** Rows (as text), spans and the first quote problem, up to the first broken record (the import stops there). */
function summary(splits: (Split | ByteSplit)[]) {
  const { badQuoteRow, badQuote } = firstQuoteProblem(splits);
  const rows = splits.flatMap((s) => s.rows.map((r) => recordCells(r)));
  const spans = splits.flatMap((s) => s.spans);
  if (badQuoteRow === -1) return { rows, spans, badQuoteRow, badQuote };
  return { rows: rows.slice(0, badQuoteRow + 1), spans: spans.slice(0, badQuoteRow), badQuoteRow, badQuote };
}

function reference(text: string, delimiter: string, newline: '\n' | '\r') {
  const papa = new RecordSplitter(delimiter, newline, false);
  return summary([papa.push(text), papa.end()]);
}

/** Every record split as bytes renders to the bytes its decoded cells render to. */
function assertRendersAsText(splits: ByteSplit[]): void {
  for (const split of splits) {
    for (const record of split.rows) {
      if (Array.isArray(record)) continue;
      const columns = Array.from({ length: record.n }, (_, i) => `C${i}`);
      const fields = ['id', null, 'x', null, null, null, null, null];
      const text = new ItemRenderer('clientes', columns).body(fields, recordCells(record));
      const renderer = new ItemRenderer('clientes', columns);
      renderer.writeRaw(fields, record.src, record.bounds, record.at, record.encoding === 'windows-1252' ? WINDOWS_1252_UTF8 : null);
      assert.deepEqual(renderer.take(), text);
    }
  }
}

it('splits Windows-1252 bytes as Papa Parse splits their text, in any chunking, and renders them as their text', () => {
  fc.assert(
    fc.property(
      fc.array(WINDOWS_1252_PIECE, { maxLength: 50 }).map((parts) => Buffer.from(parts.flat())),
      fc.constantFrom(';', ','),
      fc.constantFrom<'\n' | '\r'>('\n', '\r'),
      CUTS,
      (bytes, delimiter, newline, cuts) => {
        const splits = splitBytes(bytes, cuts, delimiter, newline, 'windows-1252');
        assert.deepEqual(summary(splits), reference(bytesText(bytes, 0, bytes.length, 'windows-1252'), delimiter, newline));
        assertRendersAsText(splits);
      },
    ),
    { numRuns: 4000 },
  );
});

it('splits UTF-8 bytes (UTF-16 text with lone surrogates too) as Papa Parse splits the text, cut anywhere, even inside a character', () => {
  fc.assert(
    fc.property(
      fc.array(UTF16_PIECE, { maxLength: 40 }).map((parts) => parts.join('')),
      fc.constantFrom(';', ','),
      fc.constantFrom<'\n' | '\r'>('\n', '\r'),
      CUTS,
      (text, delimiter, newline, cuts) => {
        const splits = splitBytes(wtf8Bytes(text), cuts, delimiter, newline, 'utf-8');
        assert.deepEqual(summary(splits), reference(text, delimiter, newline));
        assertRendersAsText(splits);
      },
    ),
    { numRuns: 4000 },
  );
});

it('reads a record with spaces after a closing quote, or a stray quote, through Papa Parse, and the records after it itself', () => {
  const bytes = Buffer.from('a;b\r\n"x" ;y\r\n1;2\r\n3;"z"w\r\n4;5\r\n', 'latin1');
  const splits = splitBytes(bytes, [], ';', '\n', 'windows-1252');
  const records = splits.flatMap((s) => s.rows);
  assert.deepEqual(records.slice(0, 3).map((r) => recordCells(r)), [['a', 'b'], ['x', 'y'], ['1', '2']]);
  // Papa Parse read the second; the third is back on bytes; the fourth's stray quote runs to the end of the file.
  assert.deepEqual(records.map((r) => Array.isArray(r)), [false, true, false, true]);
  assert.deepEqual(summary(splits).badQuoteRow, 3);
  assert.deepEqual(summary(splits).badQuote, 'stray');
});
