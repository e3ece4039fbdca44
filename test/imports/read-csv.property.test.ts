/**
 * Any table written as an ERP would (quoting only when needed, CRLF or LF,
 * with or without a final line break, in each supported encoding) reads back
 * exactly, however the bytes are cut into chunks.
 */
import assert from 'node:assert/strict';
import { isAscii, isUtf8 } from 'node:buffer';
import { it } from 'node:test';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { readAll } from './read-helpers.js';

// Characters that matter to CSV and to the encodings, plus a few plain ones.
const CHAR = fc.constantFrom('a', 'Z', '0', ' ', ';', ',', '"', '\r', '\n', '\t', 'é', 'Ñ', '€', '–', '1/2');
const CELL = fc.array(CHAR, { maxLength: 6 }).map((parts) => parts.join(''));

const ENCODE = {
  'windows-1252': (text: string) => iconv.encode(text, 'windows-1252'),
  'utf-8': (text: string) => Buffer.from(text, 'utf8'),
  'utf-16le': (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
};

/** Whether some 2 to 4 bytes are a whole multi-byte UTF-8 character (é€– is E9 80 96). */
const holdsUtf8Char = (bytes: Buffer) =>
  bytes.some((b, i) => b >= 0xc2 && [2, 3, 4].some((n) => i + n <= bytes.length && isUtf8(bytes.subarray(i, i + n))));

const quote = (cell: string): string => (/[;"\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

it('reads back any table exactly, in any chunking', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 2, max: 5 }).chain((width) =>
        fc.record({
          rows: fc.array(fc.array(CELL, { minLength: width, maxLength: width }), { maxLength: 8 }),
          width: fc.constant(width),
        }),
      ),
      fc.constantFrom('\r\n', '\n'),
      fc.boolean(),
      fc.constantFrom(...(Object.keys(ENCODE) as (keyof typeof ENCODE)[])),
      fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 6 }),
      async ({ rows, width }, eol, finalBreak, encoding, cuts) => {
        const columns = Array.from({ length: width }, (_, i) => `COL_${i}`);
        const text = [columns, ...rows].map((row) => row.map(quote).join(';')).join(eol) + (finalBreak ? eol : '');
        const bytes = ENCODE[encoding](text);
        // Windows-1252 text that happens to be valid UTF-8 (Ñ€ is D1 80, Cyrillic р) reads as UTF-8: a real ambiguity.
        // Holding such a pair and other accents, it mixes encodings and is refused (decode-bytes.property.test.ts).
        fc.pre(!(encoding === 'windows-1252' && !isAscii(bytes) && (isUtf8(bytes) || holdsUtf8Char(bytes))));
        const result = await readAll(bytes, [...new Set(cuts)].sort((a, b) => a - b));
        assert.deepEqual(result.columns, columns);
        assert.deepEqual(
          result.rows.map((row) => row.cells),
          rows,
        );
        // Each record starts on the line after the previous one's last line.
        let line = 2;
        for (const [i, row] of result.rows.entries()) {
          assert.equal(row.line, line, `row ${i}`);
          line += 1 + (rows[i] as string[]).join('').split('\n').length - 1;
        }
      },
    ),
    { numRuns: 300 },
  );
});
