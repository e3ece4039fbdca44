/**
 * Quoting and line-ending cases every record splitter must pass: the
 * production one (record-splitter.test.ts) and each candidate measured in
 * bench/csv-parsers.ts. `rows` include the header row; blank lines are left
 * out (the reader, not the splitter, decides about them).
 */

export interface CsvCase {
  name: string;
  text: string;
  delimiter: string;
  rows: string[][];
}

const c = (name: string, text: string, rows: string[][], delimiter = ';'): CsvCase => ({ name, text, rows, delimiter });

export const CSV_CASES: readonly CsvCase[] = [
  c('LF line breaks', 'a;b\n1;2\n3;4\n', [['a', 'b'], ['1', '2'], ['3', '4']]),
  c('CRLF line breaks', 'a;b\r\n1;2\r\n3;4\r\n', [['a', 'b'], ['1', '2'], ['3', '4']]),
  c('no line break after the last row (CRLF)', 'a;b\r\n1;2\r\n3;4', [['a', 'b'], ['1', '2'], ['3', '4']]),
  c('no line break after the last row (LF)', 'a;b\n1;2', [['a', 'b'], ['1', '2']]),
  c('CRLF and LF mixed in one file', 'a;b\r\n1;2\n3;4\r\n5;6\n', [['a', 'b'], ['1', '2'], ['3', '4'], ['5', '6']]),
  c('quoted delimiter', 'a;b\r\n"x;y";2\r\n', [['a', 'b'], ['x;y', '2']]),
  c('doubled quotes', 'a;b\r\n"say ""hi""";""""\r\n', [['a', 'b'], ['say "hi"', '"']]),
  c('quoted CRLF', 'a;b\r\n"line 1\r\nline 2";2\r\n', [['a', 'b'], ['line 1\r\nline 2', '2']]),
  c('quoted LF in a CRLF file', 'a;b\r\n"line 1\nline 2";2\r\n', [['a', 'b'], ['line 1\nline 2', '2']]),
  c('quoted LF in an LF file', 'a;b\n"line 1\nline 2";2\n', [['a', 'b'], ['line 1\nline 2', '2']]),
  c('quoted line breaks, delimiters and quotes together', 'a;b\r\n1;"x; ""y""\r\n\r\nz;"\r\n', [['a', 'b'], ['1', 'x; "y"\r\n\r\nz;']]),
  c('quoted lone CR', 'a;b\r\n"x\ry";2\r\n', [['a', 'b'], ['x\ry', '2']]),
  c('quoted last cell at the end of the file', 'a;b\r\n1;"x ""q"""', [['a', 'b'], ['1', 'x "q"']]),
  c('quoted cells before CRLF', '"a";"b"\r\n"1";"2"\r\n', [['a', 'b'], ['1', '2']]),
  c('quoted empty cell', 'a;b\r\n"";x\r\n', [['a', 'b'], ['', 'x']]),
  c('cells untrimmed', 'a;b\r\n  x  ; y \t\r\n', [['a', 'b'], ['  x  ', ' y \t']]),
  c('empty cells', 'a;b;c\r\n;;\r\n1;;\r\n', [['a', 'b', 'c'], ['', '', ''], ['1', '', '']]),
  c('quoted cell ending in CR before CRLF', 'a;b\r\n1;"x\r"\r\n2;"y\r"', [['a', 'b'], ['1', 'x\r'], ['2', 'y\r']]),
  c('unquoted last cell ending in a quote', 'a;b\r\n1;Tubo 1/2"\r\n2;3/4"', [['a', 'b'], ['1', 'Tubo 1/2"'], ['2', '3/4"']]),
  c('quote inside an unquoted cell is text', 'a;b\r\nTubo 1/2" cobre;x\r\n', [['a', 'b'], ['Tubo 1/2" cobre', 'x']]),
  c('rows with fewer and more cells kept as they are', 'a;b;c\r\n1;2\r\n3;4;5;6\r\n7;8;9\r\n', [
    ['a', 'b', 'c'],
    ['1', '2'],
    ['3', '4', '5', '6'],
    ['7', '8', '9'],
  ]),
  c('quoted cell in a row with too few cells', 'a;b;c\r\n"1;2";3\r\n', [['a', 'b', 'c'], ['1;2', '3']]),
  c('trailing blank lines', 'a;b\r\n1;2\r\n\r\n\r\n', [['a', 'b'], ['1', '2']]),
  c('non-ASCII text', 'código;descripción\r\nÑ1;"Caña, 5 €; 1/2"""\r\n', [['código', 'descripción'], ['Ñ1', 'Caña, 5 €; 1/2"']]),
  c('comma delimiter', 'a,b\r\n"1,5",x\r\n', [['a', 'b'], ['1,5', 'x']], ','),
  c('tab delimiter', 'a\tb\r\n"x\ty"\t2\r\n', [['a', 'b'], ['x\ty', '2']], '\t'),
  c('pipe delimiter', 'a|b\r\n"x|y"|2\r\n', [['a', 'b'], ['x|y', '2']], '|'),
];

/** Rows without blank lines (a lone empty cell), for comparing splitters. */
export function withoutBlankLines(rows: readonly string[][]): string[][] {
  return rows.filter((row) => !(row.length === 1 && row[0] === ''));
}

/** `text` cut into pieces of `size` characters (the last one shorter). */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}
