/**
 * Finds the header line of a CSV text and the delimiter it uses, before any
 * record is split: the delimiter is the one of `;` `,` tab `|` that occurs
 * most often in the header outside quotes (ties go to the earlier one in that
 * list, so `;`, the Spanish ERP default, wins a tie).
 */

export const DELIMITERS = [';', ',', '\t', '|'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

/** Used when the header holds none of the candidates (a one-column file): RFC 4180's comma. */
const DEFAULT_DELIMITER: Delimiter = ',';

export interface HeaderLine {
  /** The header line, without its line break. */
  text: string;
  /** Where records end: LF (CRLF and LF files), or CR for a file whose first line ends in a lone CR. */
  newline: '\n' | '\r';
}

const QUOTE = 34;
const LF = 10;
const CR = 13;

/**
 * The first line of `text`, ended by a line break outside quotes, or null
 * when more text is needed. With `atEnd`, the whole text is the first line
 * when it has no line break.
 */
export function findHeaderLine(text: string, atEnd: boolean): HeaderLine | null {
  let inQuotes = false;
  let fieldStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inQuotes) {
      if (c === QUOTE) {
        if (text.charCodeAt(i + 1) === QUOTE) i++;
        else inQuotes = false;
      }
      continue;
    }
    if (c === QUOTE && fieldStart) {
      inQuotes = true;
      continue;
    }
    if (c === LF) return { text: text.slice(0, i), newline: '\n' };
    if (c === CR) {
      if (i + 1 === text.length && !atEnd) return null; // is it CRLF? wait and see
      return { text: text.slice(0, i), newline: text.charCodeAt(i + 1) === LF || i + 1 === text.length ? '\n' : '\r' };
    }
    fieldStart = isDelimiterCode(c);
  }
  return atEnd ? { text, newline: '\n' } : null;
}

export function detectDelimiter(headerLine: string): Delimiter {
  const counts = [0, 0, 0, 0];
  let inQuotes = false;
  let fieldStart = true;
  for (let i = 0; i < headerLine.length; i++) {
    const c = headerLine.charCodeAt(i);
    if (inQuotes) {
      if (c === QUOTE) {
        if (headerLine.charCodeAt(i + 1) === QUOTE) i++;
        else inQuotes = false;
      }
      continue;
    }
    if (c === QUOTE && fieldStart) {
      inQuotes = true;
      continue;
    }
    const d = DELIMITERS.indexOf(headerLine[i] as Delimiter);
    if (d !== -1) counts[d] = (counts[d] as number) + 1;
    fieldStart = d !== -1;
  }
  let best = -1;
  for (let d = 0; d < DELIMITERS.length; d++) {
    if ((counts[d] as number) > 0 && (best === -1 || (counts[d] as number) > (counts[best] as number))) best = d;
  }
  return best === -1 ? DEFAULT_DELIMITER : (DELIMITERS[best] as Delimiter);
}

function isDelimiterCode(c: number): boolean {
  return c === 59 || c === 44 || c === 9 || c === 124;
}
