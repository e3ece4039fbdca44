/**
 * The words of `q` searches (contract §6): a word is a maximal run of letters
 * and digits, compared case- and accent-insensitively. The import indexes
 * words with `searchTerms` and a request splits its `q` with `queryWords`, so
 * both sides fold text the same way.
 */

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;

/** Lower case, accents dropped (`Ñ` → `n`, `Ibáñez` → `ibanez`). */
export function foldText(text: string): string {
  // ASCII needs no decomposition: most ERP text is, and the import folds every name.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  return text.normalize('NFD').toLowerCase().replace(MARKS, '');
}

/** The folded words of a text, in order (repeats kept). */
export function foldedWords(text: string): string[] {
  return foldText(text).match(WORD) ?? [];
}

/** The words of a `q` parameter, folded and without repeats; empty when it has none. */
export function queryWords(q: string): string[] {
  return [...new Set(foldedWords(q))];
}

/** The Latin blocks whose characters take two bytes in UTF-8: Latin-1 Supplement, Latin Extended-A and -B. */
const LATIN_FIRST = 0x80;
const LATIN_LAST = 0x24f;

/**
 * How each character of U+0080–U+024F folds, as `foldText` folds it, for
 * code that folds UTF-8 bytes without making strings (the import's index of
 * `q` words): the folded character's UTF-8 bytes and whether it belongs to a
 * word. Made from `foldText` itself, so the two cannot disagree. A character
 * that folds to other than one character of one or two bytes (U+023A and
 * U+023E fold to three) has length 0: text holding one is folded as a
 * string. Folding these characters one at a time is folding the text: none
 * is a combining mark, and none lower-cases by context (only Greek's final
 * sigma does, outside these blocks).
 */
export function latinFolds(): LatinFolds {
  if (folds) return folds;
  const n = LATIN_LAST - LATIN_FIRST + 1;
  const made = { first: LATIN_FIRST, last: LATIN_LAST, length: new Uint8Array(n), byte0: new Uint8Array(n), byte1: new Uint8Array(n), word: new Uint8Array(n) };
  for (let cp = LATIN_FIRST; cp <= LATIN_LAST; cp++) {
    const folded = foldText(String.fromCharCode(cp));
    if ([...folded].length !== 1) continue;
    const bytes = Buffer.from(folded, 'utf8');
    if (bytes.length > 2) continue;
    const i = cp - LATIN_FIRST;
    made.length[i] = bytes.length;
    made.byte0[i] = bytes[0]!;
    made.byte1[i] = bytes[1] ?? 0;
    made.word[i] = /^[\p{L}\p{N}]$/u.test(folded) ? 1 : 0;
  }
  folds = made;
  return made;
}

export interface LatinFolds {
  first: number;
  last: number;
  /** Per character from `first`: the folded character's UTF-8 length (0: fold it as a string), bytes, and whether it is a word's. */
  length: Uint8Array;
  byte0: Uint8Array;
  byte1: Uint8Array;
  word: Uint8Array;
}

/** Made at the first import that folds a name, not when a process starts. */
let folds: LatinFolds | null = null;
