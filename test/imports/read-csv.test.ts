import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { openCsv } from '../../src/imports/read-csv.js';
import { CSV_CASES } from './csv-cases.js';
import { cellsOf, fixture, latin1, readAll, rejectsWith, source } from './read-helpers.js';

const UGLY_COLUMNS = ['CODIGO', '01_NOMBRE_COMERCIAL', '06_CIF', 'EMAIL', 'OBSERVACIONES', 'PRECIO'];
const UGLY_ROWS = [
  { line: 2, cells: ['C1', '   Padded S.L.   ', 'B12345678', 'a@b.es', 'Nota; con "comillas"\r\ny dos líneas', '1.234,56'] },
  { line: 4, cells: ['C2', 'Pinturas "Goiko" S.A.', '', '', '', '12,5'] },
  { line: 5, cells: ['C3', 'Tubo 1/2" cobre', '', '', '', '-3'] },
  { line: 6, cells: ['C4', 'Ñandú – 5 €', '', '', 'línea 1\nlínea 2 (LF dentro de CRLF)', ''] },
  { line: 8, cells: ['C5', 'Sin salto final', '', '', '', '0,00'] },
];

describe('openCsv', () => {
  describe('the ugly fixture (Windows-1252, quoting, padding, no final line break)', () => {
    const bytes = readFileSync(fixture('ugly.csv'));

    it('reads every cell exactly, with the line each record starts on', async () => {
      const result = await readAll(fixture('ugly.csv'));
      assert.equal(result.encoding, 'windows-1252');
      assert.equal(result.delimiter, ';');
      assert.deepEqual(result.columns, UGLY_COLUMNS);
      assert.deepEqual(result.rows, UGLY_ROWS);
      assert.equal(result.bytesRead, bytes.length);
    });

    it('reads the same fed one byte at a time', async () => {
      assert.deepEqual((await readAll(bytes, 1)).rows, UGLY_ROWS);
    });

    it('reads the same cut in two at every byte (inside CRLFs, quotes, doubled quotes)', async () => {
      for (let cut = 1; cut < bytes.length; cut++) {
        assert.deepEqual((await readAll(bytes, [cut])).rows, UGLY_ROWS, `cut at ${cut}`);
      }
    });

    it('reads the same in UTF-8, cut in two at every byte (inside multi-byte characters)', async () => {
      const utf8 = Buffer.from(iconv.decode(bytes, 'windows-1252'), 'utf8');
      for (let cut = 1; cut < utf8.length; cut++) {
        const result = await readAll(utf8, [cut]);
        assert.equal(result.encoding, 'utf-8');
        assert.deepEqual(result.rows, UGLY_ROWS, `cut at ${cut}`);
      }
    });
  });

  describe('the ERP samples', () => {
    const samples = [
      ['clientes', 150, 200],
      ['articulos', 60, 300],
      ['obras', 50, 80],
      ['avisos-correctivo', 60, 400],
    ] as const;
    for (const [name, columns, rows] of samples) {
      it(`reads ${name}.csv: ${rows} rows of ${columns} columns`, async () => {
        const path = fixture(`samples/${name}.csv`);
        const result = await readAll(path);
        assert.equal(result.columns.length, columns);
        assert.equal(result.rows.length, rows);
        assert.equal(result.encoding, 'windows-1252');
        assert.equal(result.delimiter, ';');
        assert.ok(result.rows.every((row) => row.cells.length === columns));
        // Lines: the last record starts on the file's last line (none of them spans lines).
        const lines = readFileSync(path, 'latin1').split('\n').length - 1;
        assert.equal(result.rows.at(-1)?.line, lines);
      });
    }

    it('keeps padding, doubled quotes and multi-line remarks of clientes.csv', async () => {
      const result = await readAll(fixture('samples/clientes.csv'));
      const byId = new Map(result.rows.map((row) => [row.cells[0], row]));
      assert.equal(byId.get('C000006')?.cells[1], 'Medina y Montero S.A.   ');
      assert.equal(byId.get('C000025')?.cells[1], 'Ascensores "Pastor" S.A.');
      const multiLine = result.rows.find((row) => row.cells.some((cell) => cell.includes('\r\n')));
      assert.ok(multiLine, 'a record with a quoted line break');
      const next = result.rows[result.rows.indexOf(multiLine) + 1];
      const span = multiLine.cells.join('').split('\n').length;
      assert.equal(next?.line, multiLine.line + span);
    });
  });

  describe('every quoting case of csv-cases.ts, through the whole reader', () => {
    for (const testCase of CSV_CASES) {
      const [header, ...rows] = testCase.rows as [string[], ...string[][]];
      if (rows.some((row) => row.length !== header.length)) continue; // ragged on purpose: see 'bad files'
      it(`${testCase.name}, in Windows-1252 fed one byte at a time`, async () => {
        const result = await readAll(iconv.encode(testCase.text, 'windows-1252'), 1);
        assert.equal(result.delimiter, testCase.delimiter);
        assert.deepEqual([result.columns, ...cellsOf(result)], testCase.rows);
      });
    }
  });

  describe('delimiters and line breaks', () => {
    for (const delimiter of [';', ',', '\t', '|']) {
      it(`detects ${JSON.stringify(delimiter)} from the header`, async () => {
        const d = delimiter;
        const text = `A${d}"B${d}C"${d}D\r\n1${d}"x${d}y"${d}3\r\n`;
        const result = await readAll(latin1(text));
        assert.equal(result.delimiter, delimiter);
        assert.deepEqual(result.columns, ['A', `B${d}C`, 'D']);
        assert.deepEqual(cellsOf(result), [['1', `x${d}y`, '3']]);
      });
    }

    it('ignores candidates inside quoted header names, and prefers ; on a tie', async () => {
      assert.equal((await readAll(latin1('"a,b,c";d;e\r\n1;2;3\r\n'))).delimiter, ';');
      assert.equal((await readAll(latin1('a;b,c\r\n1;2,3\r\n'))).delimiter, ';');
      assert.equal((await readAll(latin1('CODIGO\r\nA1\r\n'))).delimiter, ',');
    });

    const endings = {
      'CRLF': 'a;b\r\n1;2\r\n3;4\r\n',
      'LF': 'a;b\n1;2\n3;4\n',
      'CRLF without a final line break': 'a;b\r\n1;2\r\n3;4',
      'LF without a final line break': 'a;b\n1;2\n3;4',
      'CRLF and LF mixed': 'a;b\n1;2\r\n3;4\n',
      'lone CR (old Mac)': 'a;b\r1;2\r3;4\r',
    };
    for (const [name, text] of Object.entries(endings)) {
      it(`reads ${name}`, async () => {
        const result = await readAll(latin1(text), 1);
        assert.deepEqual(result.columns, ['a', 'b']);
        assert.deepEqual(result.rows, [
          { line: 2, cells: ['1', '2'] },
          { line: 3, cells: ['3', '4'] },
        ]);
      });
    }

    it('keeps cells and header names untrimmed', async () => {
      const result = await readAll(latin1(' a ;b\t\r\n  1;2  \r\n'));
      assert.deepEqual(result.columns, [' a ', 'b\t']);
      assert.deepEqual(cellsOf(result), [['  1', '2  ']]);
    });

    it('ignores blank lines at the end', async () => {
      const result = await readAll(latin1('a;b\r\n1;2\r\n\r\n  \r\n\r\n'));
      assert.deepEqual(cellsOf(result), [['1', '2']]);
    });
  });

  describe('headers and batches', () => {
    it('reads a header with no rows as zero rows', async () => {
      for (const text of ['a;b\r\n', 'a;b', 'a;b\r\n\r\n']) {
        const result = await readAll(latin1(text));
        assert.deepEqual(result.columns, ['a', 'b']);
        assert.deepEqual(result.rows, []);
        assert.deepEqual(result.batchSizes, []);
      }
    });

    it('gives rows in batches of the configured size', async () => {
      const text = `a;b\r\n${Array.from({ length: 1234 }, (_, i) => `${i};x\r\n`).join('')}`;
      const result = await readAll(latin1(text), 100, { batchRows: 500 });
      assert.deepEqual(result.batchSizes, [500, 500, 234]);
      assert.equal(result.rows[1233]?.line, 1235);
      assert.equal((await readAll(latin1(text))).batchSizes.every((size) => size <= 500), true);
    });

    it('reports raw bytes read as it goes', async () => {
      const bytes = latin1(`a;b\r\n${'1;2\r\n'.repeat(10_000)}`);
      const file = await openCsv(source(bytes, 1000), { batchRows: 100 });
      const seen: number[] = [];
      for await (const _batch of file.batches()) seen.push(file.bytesRead());
      assert.ok((seen[0] as number) < bytes.length, 'progress before the end');
      assert.equal(seen.at(-1), bytes.length);
    });

    it('can be iterated once', async () => {
      const file = await openCsv(source(latin1('a;b\r\n1;2\r\n')));
      for await (const _batch of file.batches());
      await assert.rejects(async () => {
        for await (const _batch of file.batches());
      }, /only once/);
    });
  });

  describe('bad files', () => {
    it('empty_file: no bytes, a BOM only, or blank lines only', async () => {
      for (const bytes of [Buffer.alloc(0), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from([0xff, 0xfe]), latin1('\r\n\r\n  \r\n')]) {
        await rejectsWith(readAll(bytes), 'empty_file', undefined, /The file is empty/);
      }
    });

    it('bad_header: empty column names, named by position', async () => {
      await rejectsWith(readAll(latin1('CODIGO;;NOMBRE; \r\n1;2;3;4\r\n')), 'bad_header', 1, /column 2 \(after "CODIGO"\), column 4 \(after "NOMBRE"\)/);
    });

    it('bad_header: duplicate column names, named', async () => {
      const error = await rejectsWith(readAll(latin1('CODIGO;EMAIL;X;EMAIL\r\n1;2;3;4\r\n')), 'bad_header', 1);
      assert.match(error.message, /"EMAIL" \(columns 2, 4\)/);
    });

    it('bad_header: a blank first line before the header', async () => {
      await rejectsWith(readAll(latin1('\r\nCODIGO;NOMBRE\r\n1;2\r\n')), 'bad_header', 1, /Line 1 is blank/);
    });

    it('bad_header: a first line too long to be a header', async () => {
      await rejectsWith(readAll(latin1('x'.repeat(5000)), 512, { maxCellBytes: 1000, maxColumns: 2 }), 'bad_header', 1, /without a line break/);
    });

    it('ragged_row: fewer or more cells than the header, naming the line', async () => {
      await rejectsWith(readAll(latin1('a;b;c\r\n1;2;3\r\n1;2\r\n')), 'ragged_row', 3, /Line 3 has 2 cells but the header has 3 columns/);
      await rejectsWith(readAll(latin1('a;b;c\r\n1;2;3\r\n1;2;3;4\r\n'), 1), 'ragged_row', 3, /4 cells/);
    });

    it('ragged_row: the line is counted across quoted line breaks', async () => {
      await rejectsWith(readAll(latin1('a;b\r\n1;"x\r\ny\r\nz"\r\n2\r\n'), 3), 'ragged_row', 5);
    });

    it('ragged_row: a blank line followed by more rows', async () => {
      await rejectsWith(readAll(latin1('a;b\r\n1;2\r\n\r\n3;4\r\n')), 'ragged_row', 3, /Line 3 is blank but rows follow it/);
    });

    it('bad_quote: a quoted cell never closed, naming the line where it opens', async () => {
      await rejectsWith(readAll(latin1('a;b\r\n1;2\r\n3;"open\r\n4;4\r\n'), 4), 'bad_quote', 3, /never closed/);
    });

    it('bad_quote: text after a closing quote', async () => {
      await rejectsWith(readAll(latin1('a;b\r\n1;2\r\n"x"y;2\r\n3;3\r\n')), 'bad_quote', 3, /text after its closing quote/);
    });

    it('cell_too_large: a cell over the limit, naming line and column', async () => {
      const text = `a;b\r\n1;2\r\n3;"${'x'.repeat(101)}"\r\n`;
      await rejectsWith(readAll(latin1(text), 7, { maxCellBytes: 100 }), 'cell_too_large', 3, /column "b" is larger than the 100-byte limit/);
      assert.equal((await readAll(latin1(text), 7, { maxCellBytes: 101 })).rows.length, 2);
    });

    it('cell_too_large: measured in UTF-8 bytes', async () => {
      const text = `a;b\r\n1;${'é'.repeat(60)}\r\n`; // 60 characters, 120 bytes in UTF-8
      await rejectsWith(readAll(iconv.encode(text, 'windows-1252'), 16, { maxCellBytes: 100 }), 'cell_too_large', 2);
    });

    it('cell_too_large: an unclosed quote fails early, without reading the rest of the file', async () => {
      const bytes = latin1(`a;b\r\n1;2\r\n3;"open\r\n${'4;4\r\n'.repeat(1_000_000)}`);
      const file = await openCsv(source(bytes, 65_536), { maxCellBytes: 100_000 });
      await rejectsWith(
        (async () => {
          for await (const _batch of file.batches());
        })(),
        'cell_too_large',
        3,
        /probably never closed/,
      );
      assert.ok(file.bytesRead() < bytes.length / 4, `read ${file.bytesRead()} of ${bytes.length} bytes`);
    });

    it('too_many_columns: more columns than the limit', async () => {
      await rejectsWith(readAll(latin1('a;b;c;d\r\n1;2;3;4\r\n'), undefined, { maxColumns: 3 }), 'too_many_columns', 1, /4 columns; the limit is 3/);
      const wide = Array.from({ length: 10_001 }, (_, i) => `C${i}`).join(';');
      await rejectsWith(readAll(latin1(`${wide}\r\n`)), 'too_many_columns', 1, /limit is 10000/);
    });
  });
});
