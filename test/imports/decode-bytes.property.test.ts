/**
 * Issue 18, point 2: decoding never garbles silently. Over random byte
 * strings (cells of ASCII, random high bytes, UTF-8 characters and the bytes
 * Windows-1252 leaves undefined), every file either reads with every cell's
 * text exactly as an independent decoder reads it (the platform's strict
 * UTF-8 TextDecoder when the file is valid UTF-8, its Windows-1252 table
 * otherwise), or fails naming the line that contract §2 says it must name.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { ImportError } from '../../src/imports/import-error.js';
import { readAll } from './read-helpers.js';

const ascii = (text: string) => [...Buffer.from(text, 'latin1')];
// No ; " CR LF (they would make cells of their own) and no NUL (tested on its own).
const SAFE_ASCII = fc.constantFrom(...ascii('aZ09 ,.-|\t'));
const UTF8_CHARS = fc.constantFrom(...['é', 'Ñ', '€', '–', 'ऄ', '🙂', '\uFFFD', '\u0081'].map((c) => [...Buffer.from(c, 'utf8')]));
const HIGH_BYTE = fc.integer({ min: 0x80, max: 0xff });
const UNDEFINED = fc.constantFrom(0x81, 0x8d, 0x8f, 0x90, 0x9d);
// Windows-1252 letters and symbols: with an ASCII byte between them no pair can be UTF-8.
const LATIN_PAIR = fc.tuple(SAFE_ASCII, fc.integer({ min: 0x80, max: 0xff }).filter((b) => ![0x81, 0x8d, 0x8f, 0x90, 0x9d].includes(b)));

/** The bytes of a cell, drawn the way one kind of file would hold them. */
const PIECES = {
  utf8: fc.oneof(SAFE_ASCII.map((b) => [b]), UTF8_CHARS),
  windows1252: fc.oneof(SAFE_ASCII.map((b) => [b]), LATIN_PAIR.map(([a, b]) => [a, b])),
  random: fc.oneof(SAFE_ASCII.map((b) => [b]), HIGH_BYTE.map((b) => [b]), UTF8_CHARS, UNDEFINED.map((b) => [b])),
  mostlyUtf8: fc.oneof({ weight: 8, arbitrary: fc.oneof(SAFE_ASCII.map((b) => [b]), UTF8_CHARS) }, { weight: 1, arbitrary: HIGH_BYTE.map((b) => [b]) }),
};
const cell = (pieces: fc.Arbitrary<number[]>) => fc.array(pieces, { maxLength: 6 }).map((parts) => Buffer.from(parts.flat()));

const fatalUtf8 = (bytes: Uint8Array) => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
/**
 * Windows-1252 from Unicode's own mapping table (cp1252.txt), not from a
 * library: Latin-1 but for 0x80–0x9F. (Node's TextDecoder('windows-1252')
 * decodes Latin-1, so 0x80 stays U+0080 instead of €.)
 */
const CP1252_HIGH: Record<number, number> = {
  0x80: 0x20ac, 0x82: 0x201a, 0x83: 0x0192, 0x84: 0x201e, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021, 0x88: 0x02c6,
  0x89: 0x2030, 0x8a: 0x0160, 0x8b: 0x2039, 0x8c: 0x0152, 0x8e: 0x017d, 0x91: 0x2018, 0x92: 0x2019, 0x93: 0x201c,
  0x94: 0x201d, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02dc, 0x99: 0x2122, 0x9a: 0x0161, 0x9b: 0x203a,
  0x9c: 0x0153, 0x9e: 0x017e, 0x9f: 0x0178,
};
const windows1252 = (bytes: Uint8Array) => String.fromCharCode(...[...bytes].map((b) => CP1252_HIGH[b] ?? b));

function isUtf8(bytes: Uint8Array): boolean {
  try {
    fatalUtf8(bytes);
    return true;
  } catch {
    return false;
  }
}

/** 1-based line of byte `offset`. */
const lineAt = (bytes: Buffer, offset: number) => 1 + [...bytes.subarray(0, offset)].filter((b) => b === 0x0a).length;

/**
 * Offset of the first byte that is not UTF-8: where the longest prefix a
 * strict streaming decoder accepts stops being whole characters (so, in
 * `E1 81 0D`, the E1 that begins a sequence never completed).
 */
function firstNonUtf8(bytes: Buffer): number {
  let ok = 0; // longest prefix a streaming decoder accepts
  let bad = bytes.length + 1;
  while (bad - ok > 1) {
    const mid = (ok + bad) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, mid), { stream: true });
      ok = mid;
    } catch {
      bad = mid;
    }
  }
  let whole = ok;
  while (!isUtf8(bytes.subarray(0, whole))) whole--;
  return whole;
}

/** Offset of the first multi-byte character that decodes alone (the file holds UTF-8 text there), or −1. */
function firstUtf8Text(bytes: Buffer): number {
  for (let at = 0; at < bytes.length; at++) {
    if ((bytes[at] as number) < 0xc2) continue;
    for (const length of [2, 3, 4]) if (at + length <= bytes.length && isUtf8(bytes.subarray(at, at + length))) return at;
  }
  return -1;
}

it('every file either keeps every cell exactly or fails naming the line the contract says', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...(Object.keys(PIECES) as (keyof typeof PIECES)[])).chain((kind) =>
        fc.array(fc.tuple(cell(PIECES[kind]), cell(PIECES[kind])), { minLength: 1, maxLength: 6 }),
      ),
      // Sometimes with a UTF-8 byte order mark, which declares the file UTF-8.
      fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 5 }),
      async (rows, bom, cuts) => {
        const lines = [Buffer.from('ID;A;B'), ...rows.map(([a, b], i) => Buffer.concat([Buffer.from(`R${i};`), a, Buffer.from(';'), b]))];
        const body = Buffer.concat(lines.flatMap((line) => [line, Buffer.from('\r\n')]));
        const bytes = bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : body;
        const utf8 = isUtf8(body);
        const decode = (b: Buffer) => (utf8 || bom ? fatalUtf8(b) : windows1252(b));

        // What contract §2 says of this file: read it, or refuse it naming which line. With both
        // faults, the one the file shows first: a mix shows once both UTF-8 text and a byte that is
        // not UTF-8 have been read.
        let expected: { error: string; line: number } | null = null;
        const undefinedAt = body.findIndex((b) => [0x81, 0x8d, 0x8f, 0x90, 0x9d].includes(b));
        const textAt = firstUtf8Text(body);
        const mixedAt = textAt === -1 ? Infinity : Math.max(textAt, firstNonUtf8(body));
        if (bom && !utf8) expected = { error: 'undecodable', line: lineAt(body, firstNonUtf8(body)) };
        else if (!utf8 && undefinedAt !== -1 && undefinedAt < mixedAt) expected = { error: 'undefined_byte', line: lineAt(body, undefinedAt) };
        else if (!utf8 && mixedAt !== Infinity) expected = { error: 'mixed_encodings', line: lineAt(body, firstNonUtf8(body)) };

        let result: Awaited<ReturnType<typeof readAll>> | null = null;
        let failure: unknown = null;
        try {
          result = await readAll(bytes, [...new Set(cuts)].sort((a, b) => a - b));
        } catch (error) {
          failure = error;
        }
        if (expected === null) {
          assert.equal(failure, null, 'a file in one encoding is read');
          assert.deepEqual(result!.rows.map((r) => r.cells), rows.map(([a, b], i) => [`R${i}`, decode(a), decode(b)]));
          return;
        }
        assert.ok(failure instanceof ImportError, `expected ${expected.error}, got ${String(failure)}`);
        assert.deepEqual({ error: failure.code, line: failure.line }, expected, failure.message);
        assert.match(failure.message, new RegExp(`^Line ${failure.line} `));
      },
    ),
    { numRuns: 1000 },
  );
});
