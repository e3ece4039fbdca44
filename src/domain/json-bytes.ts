/**
 * JSON string contents written as UTF-8 bytes, exactly as JSON.stringify
 * writes them (item-renderer.ts renders items with these).
 */
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** 1 for the bytes written as they are, in a one-byte encoding: ASCII but controls, `"` and `\`. */
export const ASCII_PLAIN = new Uint8Array(256);
for (let c = 0x20; c < 0x80; c++) if (c !== QUOTE && c !== BACKSLASH) ASCII_PLAIN[c] = 1;
/** The same for UTF-8: also every byte from 0x80, but 0xED, which may start a lone surrogate (0xED 0xA0–0xBF). */
export const UTF8_PLAIN = ASCII_PLAIN.slice();
UTF8_PLAIN.fill(1, 0x80);
UTF8_PLAIN[0xed] = 0;
const HEX = '0123456789abcdef';
/** Short escapes JSON.stringify uses for these control characters (0 elsewhere). */
const SHORT_ESCAPE = new Uint8Array(32);
SHORT_ESCAPE[8] = 0x62; // \b
SHORT_ESCAPE[9] = 0x74; // \t
SHORT_ESCAPE[10] = 0x6e; // \n
SHORT_ESCAPE[12] = 0x66; // \f
SHORT_ESCAPE[13] = 0x72; // \r

/**
 * Writes `s` as the inside of a JSON string literal, in UTF-8, with exactly
 * JSON.stringify's escapes: `"` `\` and controls below U+0020 (short forms
 * where JSON has them), lone surrogates as `\udXXX`; everything else as is.
 * The caller has made room for 6 bytes per character. Returns the new end.
 */
export function writeJsonChars(buf: Buffer, at: number, s: string): number {
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c < 0x80) {
      if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) {
        buf[at++] = c;
      } else {
        at = writeAsciiEscape(buf, at, c);
      }
    } else if (c < 0x800) {
      buf[at++] = 0xc0 | (c >> 6);
      buf[at++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      buf[at++] = 0xe0 | (c >> 12);
      buf[at++] = 0x80 | ((c >> 6) & 0x3f);
      buf[at++] = 0x80 | (c & 0x3f);
    } else {
      const d = s.charCodeAt(j + 1);
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        buf[at++] = 0xf0 | (cp >> 18);
        buf[at++] = 0x80 | ((cp >> 12) & 0x3f);
        buf[at++] = 0x80 | ((cp >> 6) & 0x3f);
        buf[at++] = 0x80 | (cp & 0x3f);
        j++;
      } else {
        at = writeUnicodeEscape(buf, at, c); // a lone surrogate, escaped as JSON.stringify does
      }
    }
  }
  return at;
}

/** `"`, `\` or a control character below U+0020, escaped as JSON.stringify escapes it. */
export function writeAsciiEscape(buf: Buffer, at: number, c: number): number {
  if (c >= 0x20) {
    buf[at++] = BACKSLASH;
    buf[at++] = c;
  } else if (SHORT_ESCAPE[c] !== 0) {
    buf[at++] = BACKSLASH;
    buf[at++] = SHORT_ESCAPE[c]!;
  } else {
    at = writeUnicodeEscape(buf, at, c);
  }
  return at;
}

export function writeUnicodeEscape(buf: Buffer, at: number, c: number): number {
  buf[at++] = BACKSLASH;
  buf[at++] = 0x75; // u
  buf[at++] = HEX.charCodeAt((c >> 12) & 15);
  buf[at++] = HEX.charCodeAt((c >> 8) & 15);
  buf[at++] = HEX.charCodeAt((c >> 4) & 15);
  buf[at++] = HEX.charCodeAt(c & 15);
  return at;
}
