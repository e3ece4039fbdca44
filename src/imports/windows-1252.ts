/**
 * Windows-1252 decoding for uploads, and the two facts about a chunk that
 * decide whether a file read as Windows-1252 would be garbled (contract §2):
 * a byte that Windows-1252 leaves undefined, and a multi-byte UTF-8 sequence
 * (a file holding both UTF-8 text and bytes that are not UTF-8 mixes
 * encodings).
 */
import iconv from 'iconv-lite';

/** Buffer's own decoders, without `toString`'s argument handling: called for every mapped cell of every row. */
interface NativeSlices {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}
export const native = (bytes: Buffer) => bytes as unknown as NativeSlices;

/** The bytes Windows-1252 gives no character. */
export const UNDEFINED_BYTES: readonly number[] = [0x81, 0x8d, 0x8f, 0x90, 0x9d];

/**
 * Windows-1252 is Latin-1 except for 0x80–0x9F, so Node's native Latin-1
 * decoding plus a fix-up of those bytes (from iconv-lite's own table) gives
 * the same text as iconv-lite's decoder, at about four times its speed, and
 * as one-byte strings that the parser splits faster (bench/csv-parsers.ts).
 */
const WINDOWS_1252_HIGH = ((): Map<string, string> => {
  const map = new Map<string, string>();
  for (let byte = 0x80; byte <= 0x9f; byte++) {
    const char = iconv.decode(Buffer.of(byte), 'windows-1252');
    if (char !== '\uFFFD') map.set(String.fromCharCode(byte), char);
  }
  return map;
})();
/**
 * What the fix-up visits: a byte of 0x80–0x9F, or a UTF-8 lead byte followed
 * by a continuation byte (every multi-byte UTF-8 sequence starts so). In
 * Windows-1252 text such a pair is an accented letter followed by a symbol
 * (`Ó”`), rare; one pass finds both. On a 75 MB export of 100,000 customers
 * the pass costs 5% more than visiting 0x80–0x9F alone (154 against 146 ms at
 * best, 7 interleaved rounds), where a separate scan for the pairs cost 60 ms.
 */
const VISITED = /[\x80-\x9f]|[\xc2-\xf4][\x80-\xbf]/g;

/**
 * Bytes 0x80–0xFF as UTF-8, for rendering Windows-1252 cells straight from
 * their bytes (ItemRenderer.writeRaw): byte b's entry is at 4 × (b − 0x80),
 * its length first (2 or 3), then its bytes.
 */
export const WINDOWS_1252_UTF8 = ((): Uint8Array => {
  const table = new Uint8Array(128 * 4);
  for (let byte = 0x80; byte <= 0xff; byte++) {
    const char = WINDOWS_1252_HIGH.get(String.fromCharCode(byte)) ?? String.fromCharCode(byte);
    const utf8 = Buffer.from(char, 'utf8');
    table[4 * (byte - 0x80)] = utf8.length;
    table.set(utf8, 4 * (byte - 0x80) + 1);
  }
  return table;
})();

export interface Windows1252Text {
  /** The text: an undefined byte is kept as the C1 control of the same number, as WHATWG decodes it. */
  text: string;
  /** Offset of the first undefined byte (see UNDEFINED_BYTES), or −1. */
  undefinedAt: number;
  /** Offset of the first complete, valid multi-byte UTF-8 sequence, or −1 (one cut by the end of `bytes` does not count). */
  utf8At: number;
}

/**
 * @example
 * decodeWindows1252(Buffer.of(0x80, 0xd1, 0x81)) // { text: '€Ñ\u0081', undefinedAt: 2, utf8At: -1 }
 */
export function decodeWindows1252(bytes: Buffer): Windows1252Text {
  return { text: decodeWindows1252Text(bytes, 0, bytes.length), ...scanWindows1252(bytes) };
}

/** The facts of `decodeWindows1252` without the text: what the decoder checks before letting bytes through. */
export function scanWindows1252(bytes: Buffer): Omit<Windows1252Text, 'text'> {
  let undefinedAt = -1;
  let utf8At = -1;
  const text = bytes.toString('latin1');
  VISITED.lastIndex = 0;
  for (let match = VISITED.exec(text); match !== null; match = VISITED.exec(text)) {
    const offset = match.index;
    const high = match[0].length === 1 ? offset : offset + 1;
    if (undefinedAt === -1 && UNDEFINED.has(bytes[high] as number)) undefinedAt = high;
    if (match[0].length === 2 && utf8At === -1 && utf8SequenceLength(bytes, offset) > 0) utf8At = offset;
    if (undefinedAt !== -1 && utf8At !== -1) break;
  }
  return { undefinedAt, utf8At };
}

const UNDEFINED = new Set(UNDEFINED_BYTES);
/** Only these need more than Latin-1 decoding. */
const C1 = /[\x80-\x9f]/;
const C1_ALL = /[\x80-\x9f]/g;

/** `bytes[start .. end)` as Windows-1252 text (an undefined byte is kept as the C1 control of the same number). */
export function decodeWindows1252Text(bytes: Buffer, start: number, end: number): string {
  const text = native(bytes).latin1Slice(start, end);
  return C1.test(text) ? text.replace(C1_ALL, (char) => WINDOWS_1252_HIGH.get(char) ?? char) : text;
}

/**
 * Length of the valid multi-byte UTF-8 sequence starting at `at` (Unicode's
 * table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF), or 0
 * when there is none, including one cut by the end of `bytes`.
 */
export function utf8SequenceLength(bytes: Uint8Array, at: number): number {
  const lead = bytes[at] as number;
  let need: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) need = 1;
  else if (lead >= 0xe0 && lead <= 0xef) {
    need = 2;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    need = 3;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return 0;
  if (at + need >= bytes.length) return 0;
  const second = bytes[at + 1] as number;
  if (second < low || second > high) return 0;
  for (let i = 2; i <= need; i++) {
    const b = bytes[at + i] as number;
    if (b < 0x80 || b > 0xbf) return 0;
  }
  return need + 1;
}
