import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CsvTextDecoder, SNIFF_BYTES, completeUtf8Length } from '../../src/imports/decode-text.js';
import { cellsOf, fixture, latin1, readAll, rejectsWith } from './read-helpers.js';

const EXPECTED = {
  columns: ['CODIGO', 'DESCRIPCIÓN', 'PRECIO_VENTA'],
  cells: [['ESP-1', 'ESPAÑA € más', '1.234,56']],
};

function decodeAll(bytes: Buffer, pieceSize = bytes.length): { text: string; encoding: string } {
  const decoder = new CsvTextDecoder();
  let text = '';
  for (let at = 0; at < bytes.length; at += pieceSize) text += decoder.write(bytes.subarray(at, at + pieceSize));
  return { text: text + decoder.end(), encoding: decoder.encoding };
}

describe('decoding', () => {
  const files = [
    ['windows-1252.csv', 'windows-1252'],
    ['utf-8.csv', 'utf-8'],
    ['utf-8-bom.csv', 'utf-8'],
    ['utf-16le-bom.csv', 'utf-16le'],
    ['utf-16be-bom.csv', 'utf-16be'],
  ] as const;
  for (const [name, encoding] of files) {
    it(`reads ${name} as ${encoding}, whole and one byte at a time`, async () => {
      for (const cut of [undefined, 1]) {
        const bytes = readFileSync(fixture(name));
        const result = await readAll(bytes, cut);
        assert.equal(result.encoding, encoding);
        assert.deepEqual(result.columns, EXPECTED.columns, 'the BOM is not part of the first column name');
        assert.deepEqual(cellsOf(result), EXPECTED.cells);
        assert.equal(result.bytesRead, bytes.length);
      }
    });
  }

  it('maps Windows-1252 bytes 0x80, 0xD1, 0xE1 to €, Ñ, á', () => {
    assert.deepEqual(decodeAll(Buffer.from([0x41, 0x80, 0xd1, 0xe1])), { text: 'A€Ñá', encoding: 'windows-1252' });
  });

  it('keeps the Windows-1252 bytes with no character (0x81, 0x8D, 0x8F, 0x90, 0x9D) as C1 controls, not U+FFFD', () => {
    const { text } = decodeAll(Buffer.from([0xe1, 0x81, 0x8d, 0x8f, 0x90, 0x9d, 0x93, 0x94]));
    assert.equal(text, 'á\u0081\u008d\u008f\u0090\u009d“”');
  });

  it('chooses Windows-1252 when the first accent comes after 64 KiB of ASCII', async () => {
    const ascii = `CODIGO;NOMBRE\r\n${'A1;plain ascii text\r\n'.repeat(Math.ceil((SNIFF_BYTES * 2) / 20))}`;
    const bytes = Buffer.concat([latin1(ascii), Buffer.from([0x42, 0x3b, 0xd1, 0x61, 0x6e, 0x64, 0xfa, 0x0d, 0x0a])]);
    const result = await readAll(bytes, 4096);
    assert.equal(result.encoding, 'windows-1252');
    assert.deepEqual(result.rows.at(-1)?.cells, ['B', 'Ñandú']);
  });

  it('reports a pure ASCII file as UTF-8', async () => {
    assert.equal((await readAll(latin1('a;b\r\n1;2\r\n'))).encoding, 'utf-8');
  });

  it('decodes a multi-byte character cut between chunks, at every cut', async () => {
    const bytes = readFileSync(fixture('utf-8.csv'));
    for (let cut = 1; cut < bytes.length; cut++) {
      const result = await readAll(bytes, [cut]);
      assert.deepEqual(cellsOf(result), EXPECTED.cells, `cut at ${cut}`);
    }
  });

  it('fails with undecodable, naming the line, when a UTF-8 file holds an invalid byte later', async () => {
    const start = Buffer.from('CODIGO;NOMBRE\r\nA1;Ñandú\r\n', 'utf8');
    const filler = latin1('A2;x\r\n'.repeat(20_000)); // past the 64 KiB the choice is made on
    const bad = latin1('A3;Espa\xf1a\r\n'); // Windows-1252 ñ
    const bytes = Buffer.concat([start, filler, bad]);
    await rejectsWith(readAll(bytes, 65_536), 'undecodable', 20_003, /Line 20003 holds the byte 0xF1, which is not valid UTF-8/);
    await rejectsWith(readAll(bytes, 7), 'undecodable', 20_003);
  });

  it('does not mistake a real U+FFFD in UTF-8 text for an invalid byte', async () => {
    const bytes = Buffer.concat([Buffer.from('a;b\r\n\uFFFD;á\r\n', 'utf8'), latin1('c;\xff\r\n')]);
    // The window holds the invalid 0xFF, so the file is Windows-1252: no error, every byte kept.
    assert.equal((await readAll(bytes)).encoding, 'windows-1252');
    const utf8 = Buffer.from(`a;b\r\n\uFFFD;á\r\n${'x;y\r\n'.repeat(20_000)}`, 'utf8');
    const late = Buffer.concat([utf8, latin1('c;\xff\r\n')]);
    await rejectsWith(readAll(late, 1000), 'undecodable', 20_003, /0xFF/);
  });

  it('fails with undecodable when a UTF-8 file ends in the middle of a character', async () => {
    const bytes = Buffer.concat([Buffer.from(`a;b\r\n${'á;é\r\n'.repeat(20_000)}x;`, 'utf8'), Buffer.from([0xc3])]);
    await rejectsWith(readAll(bytes, 4096), 'undecodable', 20_002, /middle of a UTF-8 character/);
  });

  it('fails with undecodable on a UTF-16 file with an odd number of bytes', async () => {
    const bytes = Buffer.concat([readFileSync(fixture('utf-16le-bom.csv')), Buffer.from([0x41])]);
    await rejectsWith(readAll(bytes), 'undecodable', 3, /odd number of bytes/);
  });

  it('fails with undecodable on a NUL byte, naming its line (UTF-16 without BOM looks like this)', async () => {
    await rejectsWith(readAll(latin1('a;b\r\n1;2\r\nx\x00;y\r\n')), 'undecodable', 3, /NUL byte/);
    const noBom = Buffer.from('a;b\r\n1;2\r\n', 'utf16le');
    await rejectsWith(readAll(noBom), 'undecodable', 1, /UTF-16 without a byte order mark/);
  });

  it('finds where complete UTF-8 characters end', () => {
    assert.equal(completeUtf8Length(Buffer.from([0x41, 0xc3])), 1);
    assert.equal(completeUtf8Length(Buffer.from([0x41, 0xc3, 0xa1])), 3);
    assert.equal(completeUtf8Length(Buffer.from([0xe2, 0x82])), 0);
    assert.equal(completeUtf8Length(Buffer.from([0xf0, 0x9f, 0x98])), 0);
    assert.equal(completeUtf8Length(Buffer.from([0xf0, 0x9f, 0x98, 0x80])), 4);
  });
});
