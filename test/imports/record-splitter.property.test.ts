/**
 * RecordSplitter splits records without a quote itself and gives Papa Parse
 * only those that hold one (record-splitter.ts). Whatever the text — stray
 * and unclosed quotes, CR, LF and CRLF, cells of spaces — and however it is
 * cut, it must give exactly what Papa gives parsing all of it at once: the
 * same rows, the same line spans, the same first broken record and the same
 * kind of problem.
 */
import { firstQuoteProblem } from '../helpers/split-problems.js';
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { RecordSplitter, type Split } from '../../src/imports/record-splitter.js';

const CHAR = fc.constantFrom('a', 'é', '€', ' ', ';', ',', '"', '""', '\r', '\n', '\r\n', '\t');
const TEXT = fc.array(CHAR, { maxLength: 40 }).map((parts) => parts.join(''));

function splitInPieces(text: string, cuts: number[], delimiter: string, newline: '\n' | '\r', fastPath: boolean) {
  const splitter = new RecordSplitter(delimiter, newline, fastPath);
  const splits: Split[] = [];
  let from = 0;
  for (const cut of [...cuts.filter((c) => c < text.length), text.length]) {
    splits.push(splitter.push(text.slice(from, cut)));
    from = cut;
  }
  splits.push(splitter.end());
  return splits;
}

/** Rows, spans and the first quote problem, wherever the text was cut. */
function summary(splits: Split[]) {
  const { badQuoteRow, badQuote } = firstQuoteProblem(splits);
  return { rows: splits.flatMap((s) => s.rows), spans: splits.flatMap((s) => s.spans), badQuoteRow, badQuote };
}

it('splits any text exactly as Papa Parse does on its own (whole, in one piece), in any chunking', () => {
  fc.assert(
    fc.property(
      TEXT,
      fc.constantFrom(';', ','),
      fc.constantFrom<'\n' | '\r'>('\n', '\r'),
      fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 5 }).map((cuts) => cuts.sort((a, b) => a - b)),
      (text, delimiter, newline, cuts) => {
        const expected = summary(splitInPieces(text, [], delimiter, newline, false));
        const got = summary(splitInPieces(text, cuts, delimiter, newline, true));
        // Rows after the first broken one are never used (the import stops there).
        const upTo = (s: typeof got) => (s.badQuoteRow === -1 ? s : { ...s, rows: s.rows.slice(0, s.badQuoteRow + 1), spans: s.spans.slice(0, s.badQuoteRow) });
        assert.deepEqual(upTo(got), upTo(expected));
      },
    ),
    { numRuns: 3000 },
  );
});

it('still parses a quoted record with Papa Parse after unquoted ones (the fast path is taken per record)', () => {
  const splitter = new RecordSplitter(';', '\n');
  const split = splitter.push('a;b\r\n1;"x;\r\ny"\r\n2;z\r\n3;"open');
  assert.deepEqual(split.rows, [['a', 'b'], ['1', 'x;\r\ny'], ['2', 'z']]);
  assert.deepEqual(split.spans, [1, 2, 1]);
  assert.equal(splitter.pendingLength, '3;"open'.length);
});
