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
