import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
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

  it('maps every defined byte of 0x80-0x9F as the Windows-1252 table does', () => {
    const defined = Array.from({ length: 32 }, (_, i) => 0x80 + i).filter((b) => ![0x81, 0x8d, 0x8f, 0x90, 0x9d].includes(b));
    const bytes = Buffer.from([0x41, ...defined]);
    assert.equal(decodeAll(bytes).text, iconv.decode(bytes, 'windows-1252'));
  });

  for (const byte of [0x81, 0x8d, 0x8f, 0x90, 0x9d]) {
    it(`refuses a Windows-1252 file holding 0x${byte.toString(16).toUpperCase()} (no character), naming its line, in any chunking`, async () => {
      const bytes = Buffer.concat([latin1('CODIGO;NOMBRE\r\nA1;Espa\xf1a\r\nA2;x'), Buffer.of(byte), latin1('y\r\nA3;z\r\n')]);
      for (const cut of [undefined, 1, 5]) {
        await rejectsWith(readAll(bytes, cut), 'undefined_byte', 3, new RegExp(`Line 3 holds the byte 0x${byte.toString(16).toUpperCase()}, which has no character in Windows-1252`));
      }
      // Late in a large file too: the decision is the same whatever came before.
      const late = Buffer.concat([latin1(`CODIGO;NOMBRE\r\nA1;Espa\xf1a\r\n${'A2;x\r\n'.repeat(20_000)}A3;`), Buffer.of(byte), latin1('\r\n')]);
      await rejectsWith(readAll(late, 65_536), 'undefined_byte', 20_003);
    });
  }

  it('refuses a UTF-8 file with one Windows-1252 byte early (in the window), naming the first line that is not UTF-8', async () => {
    // Issue 18: 200 rows were "updated" to FerreterÃ­a IbÃ¡Ã±ez.
    const bytes = Buffer.concat([
      Buffer.from('CODIGO;NOMBRE\r\nC1;Ferretería Ibáñez\r\nC2;Pérez\r\n', 'utf8'),
      latin1('C3;Mart\xedn\r\n'),
      Buffer.from('C4;Núñez\r\n', 'utf8'),
    ]);
    for (const cut of [undefined, 1, 3, 17]) {
      await rejectsWith(readAll(bytes, cut), 'mixed_encodings', 4, /Line 4 holds the byte 0xED, which is not UTF-8, but line 2 holds UTF-8 text/);
    }
    // The UTF-8 text may come after the byte that is not, and far after the window.
    const later = Buffer.concat([latin1(`CODIGO;NOMBRE\r\nC1;Mart\xedn\r\n${'C2;x\r\n'.repeat(20_000)}`), Buffer.from('C3;Núñez\r\n', 'utf8')]);
    for (const cut of [65_536, 4096, 7]) {
      await rejectsWith(readAll(later, cut), 'mixed_encodings', 2, /Line 2 holds the byte 0xED, which is not UTF-8, but line 20003 holds UTF-8 text/);
    }
  });

  it('finds a UTF-8 sequence cut between chunks of a Windows-1252 file (past the window), at every cut', async () => {
    const head = latin1(`a;b\r\n1;\xed\r\n${'x;y\r\n'.repeat(20_000)}2;`);
    const bytes = Buffer.concat([head, Buffer.from('🙂', 'utf8'), latin1('\r\n')]);
    const at = head.length;
    for (let cut = at - 1; cut <= at + 5; cut++) {
      await rejectsWith(readAll(bytes, [cut]), 'mixed_encodings', 2, /line 20003 holds UTF-8 text/);
    }
    // One byte at a time: the sequence spans four chunks.
    await rejectsWith(readAll(bytes, [at, at + 1, at + 2, at + 3, at + 4]), 'mixed_encodings', 2, /line 20003 holds UTF-8 text/);
  });

  it('reads Windows-1252 text whose pairs only look like the start of UTF-8 (lead byte, then a byte that ends the sequence early)', async () => {
    // é (E9) wants two continuation bytes, gets one; Ó” (D3 94) would be UTF-8, so it is left out here.
    const bytes = latin1('a;b\r\nPr\xe9\xbacio;\xf1\x80x\r\n');
    const result = await readAll(bytes, 1);
    assert.equal(result.encoding, 'windows-1252');
    assert.deepEqual(cellsOf(result), [['Préºcio', 'ñ€x']]);
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

  it('fails with mixed_encodings, naming the line, when a UTF-8 file holds an invalid byte later', async () => {
    const start = Buffer.from('CODIGO;NOMBRE\r\nA1;Ñandú\r\n', 'utf8');
    const filler = latin1('A2;x\r\n'.repeat(20_000)); // past the 64 KiB the choice is made on
    const bad = latin1('A3;Espa\xf1a\r\n'); // Windows-1252 ñ
    const bytes = Buffer.concat([start, filler, bad]);
    await rejectsWith(readAll(bytes, 65_536), 'mixed_encodings', 20_003, /Line 20003 holds the byte 0xF1, which is not UTF-8, but line 2 holds UTF-8 text/);
    await rejectsWith(readAll(bytes, 7), 'mixed_encodings', 20_003);
    // With a byte order mark, the file declared UTF-8: the byte is simply not readable.
    const declared = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    await rejectsWith(readAll(declared, 4096), 'undecodable', 20_003, /byte order mark/);
  });

  it('does not mistake a real U+FFFD in UTF-8 text for an invalid byte', async () => {
    const bytes = Buffer.concat([Buffer.from('a;b\r\n\uFFFD;á\r\n', 'utf8'), latin1('c;\xff\r\n')]);
    // The window holds the invalid 0xFF and UTF-8 text: line 3 is the first that is not UTF-8, not line 2.
    await rejectsWith(readAll(bytes), 'mixed_encodings', 3, /0xFF/);
    const utf8 = Buffer.from(`a;b\r\n\uFFFD;á\r\n${'x;y\r\n'.repeat(20_000)}`, 'utf8');
    const late = Buffer.concat([utf8, latin1('c;\xff\r\n')]);
    await rejectsWith(readAll(late, 1000), 'mixed_encodings', 20_003, /0xFF/);
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
