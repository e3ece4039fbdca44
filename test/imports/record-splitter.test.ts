import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordSplitter, type Split } from '../../src/imports/record-splitter.js';
import { CSV_CASES, pieces, withoutBlankLines } from './csv-cases.js';

function splitAll(input: readonly string[], delimiter: string, newline: '\n' | '\r' = '\n'): Split[] {
  const splitter = new RecordSplitter(delimiter, newline);
  return [...input.map((text) => splitter.push(text)), splitter.end()];
}

const rowsOf = (splits: Split[]): string[][] => splits.flatMap((s) => s.rows);

describe('RecordSplitter (Papa Parse)', () => {
  for (const testCase of CSV_CASES) {
    it(`${testCase.name}: whole, and in pieces of 1, 2, 3 and 7 characters`, () => {
      for (const size of [Infinity, 1, 2, 3, 7]) {
        const input = size === Infinity ? [testCase.text] : pieces(testCase.text, size);
        assert.deepEqual(withoutBlankLines(rowsOf(splitAll(input, testCase.delimiter))), testCase.rows, `pieces of ${size}`);
      }
    });
  }

  it('counts the physical lines each record spans', () => {
    const text = 'a;b\r\n1;"x\r\ny\r\nz"\r\n2;\n3;"\n"\r\n4;4';
    for (const size of [Infinity, 1, 4]) {
      const splits = splitAll(size === Infinity ? [text] : pieces(text, size), ';');
      assert.deepEqual(splits.flatMap((s) => s.spans), [1, 3, 1, 2, 0], `pieces of ${size}`);
    }
  });

  it('holds an incomplete record back until its end arrives', () => {
    const splitter = new RecordSplitter(';', '\n');
    assert.deepEqual(splitter.push('a;b\r\n1;"open').rows, [['a', 'b']]);
    assert.equal(splitter.pendingLength, 7);
    assert.deepEqual(splitter.push(' quote"\r').rows, []);
    assert.deepEqual(splitter.push('\n').rows, [['1', 'open quote']]);
    assert.equal(splitter.pendingLength, 0);
  });

  it('reports a quoted cell that is never closed, at its record', () => {
    const splits = splitAll(pieces('a;b\r\n1;2\r\n3;"never closed\r\n4;4\r\n', 5), ';');
    const last = splits.at(-1) as Split;
    assert.equal(last.badQuote, 'unclosed');
    assert.deepEqual(last.rows[last.badQuoteRow]?.[0], '3');
  });

  it('reports text after a closing quote, at its record', () => {
    for (const text of ['a;b\r\n1;2\r\n"x"y;2\r\n3;3\r\n', 'a;b\r\n1;2\r\n"x"y;2\r\n"3";3\r\n']) {
      const split = splitAll([text], ';').find((s) => s.badQuote !== null) as Split;
      assert.equal(split.badQuote, 'stray');
      assert.match(split.rows[split.badQuoteRow]?.[0] ?? '', /^x"y;2\r\n/, 'the record where the stray quote is');
    }
  });

  it('splits at a lone CR when asked to (old Mac files)', () => {
    assert.deepEqual(rowsOf(splitAll(['a;b\r1;2\r"x\ry";3\r'], ';', '\r')), [['a', 'b'], ['1', '2'], ['x\ry', '3']]);
  });
});
