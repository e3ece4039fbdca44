/**
 * FNV-1a, 32 bits, over the UTF-16 code units of `s[from, to)`: equal strings
 * hash alike, with no allocation. For in-memory tables (the record index's
 * ids, the gathered blocks' asks), never for anything stored or compared
 * across processes.
 */
export function fnv1a(s: string, from = 0, to = s.length): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
