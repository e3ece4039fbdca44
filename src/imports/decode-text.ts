/**
 * Streaming decoding of uploaded CSV bytes, with the encoding rules of
 * contract §2 (imports read the checked bytes, `writeBytes`, and decode only
 * the cells they need: see cell-bytes.ts): a UTF-8 or UTF-16 byte order mark decides; otherwise the file
 * is UTF-8 when its text is valid UTF-8, and Windows-1252 when it is not.
 *
 * The choice is made at the first non-ASCII byte (ASCII reads the same in
 * both), from up to 64 KiB of bytes starting there, so a Windows-1252 file
 * whose first accent comes late is still read as Windows-1252. The choice is
 * made once and never revised: what would contradict it later fails the
 * import, naming the line, instead of garbling text (a failed import
 * publishes nothing, however far it got):
 * - chosen UTF-8, a byte that is not UTF-8 (`mixed_encodings`: the file holds
 *   UTF-8 text, the window showed it);
 * - chosen Windows-1252, a valid multi-byte UTF-8 sequence anywhere
 *   (`mixed_encodings`, naming the first byte that is not UTF-8, which the
 *   window holds), or a byte Windows-1252 leaves undefined (`undefined_byte`).
 * So an accepted file reads exactly as a strict UTF-8 decoder reads it when
 * it is valid UTF-8, and as the Windows-1252 table reads it otherwise.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import iconv from 'iconv-lite';
import { wtf8Bytes } from './cell-bytes.js';
import { ImportError } from './import-error.js';
import { decodeWindows1252Text, scanWindows1252, utf8SequenceLength } from './windows-1252.js';

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/** Bytes looked at, from the first non-ASCII byte on, to choose UTF-8 or Windows-1252. */
export const SNIFF_BYTES = 64 * 1024;

const LF = 0x0a;

type State = 'bom' | 'ascii' | 'sniff' | 'decoding';

/**
 * What the checks let through: the file's own bytes (ASCII, UTF-8 or
 * Windows-1252), or text (UTF-16, decoded).
 */
type Piece = Buffer | string;
const NOTHING = Buffer.alloc(0);

export class CsvTextDecoder {
  private state: State = 'bom';
  /** Bytes held back while looking for a BOM or choosing the encoding. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  private chosen: TextEncoding | null = null;
  private decoder: iconv.DecoderStream | null = null;
  /** Line feeds already passed through, to name the line of a bad byte. */
  private linesBefore = 0;
  /** An incomplete UTF-8 sequence at the end of the last chunk. */
  private utf8Tail: Buffer = Buffer.alloc(0);
  /** Bytes given to a UTF-16 decoder, to catch an odd count. */
  private utf16Bytes = 0;
  /** Whether a byte order mark chose the encoding (else the bytes did). */
  private byBom = false;
  /** Line of the first non-ASCII byte: UTF-8 text, when the file was chosen UTF-8 by its bytes. */
  private firstNonAsciiLine = 0;
  /** Windows-1252: line and value of the first byte that is not UTF-8 (in the window, so known from the start). */
  private firstNonUtf8: { line: number; byte: number } | null = null;
  /** Its offset in the first chunk decoded as Windows-1252; −1 once that chunk is past. */
  private nonUtf8Offset = -1;
  /** Windows-1252: the last bytes of the previous chunk, where a UTF-8 sequence cut in two may start. */
  private tail: Buffer = Buffer.alloc(0);

  /**
   * The encoding chosen so far. A file that has shown only ASCII is reported
   * as UTF-8 (it is valid UTF-8) until a non-ASCII byte decides otherwise.
   */
  get encoding(): TextEncoding {
    return this.chosen ?? 'utf-8';
  }

  /** The text of `chunk`, as far as it is complete. */
  write(chunk: Buffer): string {
    return this.text(this.take(chunk));
  }

  /**
   * The bytes of `chunk` once checked, as far as the encoding is known: the
   * file's own bytes when it is UTF-8 or Windows-1252 (ASCII while
   * undecided), UTF-8 when it is UTF-16 (see `wtf8Bytes`). The same checks
   * and errors as `write`; use one or the other.
   */
  writeBytes(chunk: Buffer): Buffer {
    return this.bytes(this.take(chunk));
  }

  end(): string {
    return this.text(this.finish()) + (this.textDecoder?.end() ?? '');
  }

  /** The last bytes, once the input has ended (see `writeBytes`). */
  endBytes(): Buffer {
    const last = this.bytes(this.finish());
    const held = this.highSurrogate;
    this.highSurrogate = '';
    return held === '' ? last : Buffer.concat([last, wtf8Bytes(held)]);
  }

  /** Text, for `write`: a Windows-1252 or ASCII piece is whole; UTF-8 may be cut in a character. */
  private text(piece: Piece): string {
    if (typeof piece === 'string') return piece;
    if (piece.length === 0) return '';
    if (this.chosen === 'windows-1252') return decodeWindows1252Text(piece, 0, piece.length);
    if (this.chosen === 'utf-8') return (this.textDecoder ??= new StringDecoder('utf8')).write(piece);
    return piece.toString('latin1');
  }

  /** For `write`'s UTF-8 text: characters cut between chunks. */
  private textDecoder: StringDecoder | null = null;
  /** For `writeBytes` of UTF-16: a high surrogate ending a chunk, whose low half may start the next. */
  private highSurrogate = '';

  private bytes(piece: Piece): Buffer {
    if (typeof piece !== 'string') return piece;
    let text = this.highSurrogate + piece;
    const last = text.charCodeAt(text.length - 1);
    this.highSurrogate = last >= 0xd800 && last <= 0xdbff ? text.slice(-1) : '';
    if (this.highSurrogate !== '') text = text.slice(0, -1);
    return text.length === 0 ? NOTHING : wtf8Bytes(text);
  }

  private take(chunk: Buffer): Piece {
    if (chunk.length === 0) return NOTHING;
    switch (this.state) {
      case 'decoding':
        return this.decode(chunk);
      case 'ascii':
        return this.readAscii(chunk);
      case 'sniff':
        this.hold(chunk);
        return this.heldBytes >= SNIFF_BYTES ? this.choose(this.release(), false) : NOTHING;
      case 'bom':
        this.hold(chunk);
        return this.heldBytes >= 3 ? this.readBom(this.release()) : NOTHING;
    }
  }

  private finish(): Piece {
    let piece: Piece = NOTHING;
    if (this.state === 'bom') piece = this.readBom(this.release());
    if (this.state === 'sniff') piece = join(piece, this.choose(this.release(), true));
    if (this.state !== 'decoding') return piece;
    if (this.chosen === 'utf-8' && this.utf8Tail.length > 0) {
      throw new ImportError(
        'undecodable',
        `Line ${this.linesBefore + 1}: the file ends in the middle of a UTF-8 character.`,
        this.linesBefore + 1,
      );
    }
    if ((this.chosen === 'utf-16le' || this.chosen === 'utf-16be') && this.utf16Bytes % 2 === 1) {
      throw new ImportError(
        'undecodable',
        `The file is UTF-16 but has an odd number of bytes: its last character is cut in half (line ${this.linesBefore + 1}).`,
        this.linesBefore + 1,
      );
    }
    return join(piece, this.decoder?.end() ?? '');
  }

  private hold(chunk: Buffer): void {
    this.held.push(chunk);
    this.heldBytes += chunk.length;
  }

  private release(): Buffer {
    const all = this.held.length === 1 ? (this.held[0] as Buffer) : Buffer.concat(this.held);
    this.held = [];
    this.heldBytes = 0;
    return all;
  }

  private readBom(bytes: Buffer): Piece {
    this.byBom = true;
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return this.start('utf-8', bytes.subarray(3));
    if (bytes[0] === 0xff && bytes[1] === 0xfe) return this.start('utf-16le', bytes.subarray(2));
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return this.start('utf-16be', bytes.subarray(2));
    this.byBom = false;
    this.state = 'ascii';
    return this.readAscii(bytes);
  }

  /** Passes ASCII through until the first byte ≥ 0x80, then holds bytes to choose. */
  private readAscii(bytes: Buffer): Piece {
    if (isAscii(bytes)) {
      this.checkNul(bytes);
      this.linesBefore += countByte(bytes, LF, bytes.length);
      return bytes;
    }
    let first = 0;
    while ((bytes[first] as number) < 0x80) first++;
    const ascii = bytes.subarray(0, first);
    this.checkNul(ascii);
    this.linesBefore += countByte(ascii, LF, ascii.length);
    this.firstNonAsciiLine = this.linesBefore + 1;
    this.state = 'sniff';
    const rest = bytes.subarray(first);
    this.hold(rest);
    return this.heldBytes >= SNIFF_BYTES ? join(ascii, this.choose(this.release(), false)) : ascii;
  }

  /**
   * UTF-8 when the first SNIFF_BYTES held bytes are valid UTF-8 (a character
   * cut by the window's end is fine). Exactly that window, whatever the chunk
   * sizes, so that a file always reads the same way.
   */
  private choose(bytes: Buffer, atEnd: boolean): Piece {
    const window = bytes.subarray(0, SNIFF_BYTES);
    const whole = atEnd && window.length === bytes.length ? window.length : completeUtf8Length(window);
    const checked = window.subarray(0, whole);
    if (isUtf8(checked)) return this.start('utf-8', bytes);
    const offset = firstInvalidUtf8(checked);
    this.firstNonUtf8 = { line: this.linesBefore + countByte(checked, LF, offset) + 1, byte: checked[offset] as number };
    this.nonUtf8Offset = offset;
    return this.start('windows-1252', bytes);
  }

  private start(encoding: TextEncoding, rest: Buffer): Piece {
    this.chosen = encoding;
    this.state = 'decoding';
    if (encoding === 'utf-16le' || encoding === 'utf-16be') this.decoder = iconv.getDecoder(encoding, { stripBOM: false });
    return rest.length === 0 ? NOTHING : this.decode(rest);
  }

  private decode(bytes: Buffer): Piece {
    const decoder = this.decoder as iconv.DecoderStream;
    switch (this.chosen) {
      case 'utf-8': {
        this.checkUtf8(bytes);
        this.checkNul(bytes);
        this.linesBefore += countByte(bytes, LF, bytes.length);
        return bytes;
      }
      case 'windows-1252':
        return this.decodeWindows1252(bytes);
      default: {
        this.utf16Bytes += bytes.length;
        const text = decoder.write(bytes);
        const nul = text.indexOf('\u0000');
        if (nul !== -1) this.failNul(this.linesBefore + countChar(text, '\n', nul));
        this.linesBefore += countChar(text, '\n', text.length);
        return text;
      }
    }
  }

  /**
   * Windows-1252, failing at the first of: a NUL byte, a byte with no
   * character, the point where the file shows it mixes encodings (its first
   * UTF-8 sequence, or its first non-UTF-8 byte if that comes later). By
   * offset, so that the error does not depend on how the file is cut.
   */
  private decodeWindows1252(bytes: Buffer): Buffer {
    const found = scanWindows1252(bytes);
    // Offsets, Infinity for none; negative for a UTF-8 sequence begun in an earlier chunk.
    const nul = orInfinity(bytes.indexOf(0));
    const undefinedAt = orInfinity(found.undefinedAt);
    const utf8At = this.utf8AcrossChunks(bytes) ?? (found.utf8At === -1 ? null : found.utf8At);
    const nonUtf8 = this.firstNonUtf8 as { line: number; byte: number };
    const lineOf = (offset: number) => this.linesBefore + (offset < 0 ? 0 : countByte(bytes, LF, offset)) + 1;
    // Mixed once both are seen: the non-UTF-8 byte is in the window, so in the first chunk or before this one.
    const mixedAt = utf8At === null ? Infinity : Math.max(utf8At, this.nonUtf8Offset);
    this.nonUtf8Offset = -1;
    const first = Math.min(nul, undefinedAt, mixedAt);
    if (first === Infinity) {
      this.linesBefore += countByte(bytes, LF, bytes.length);
      return bytes;
    }
    if (first === nul) this.failNul(lineOf(nul) - 1);
    // An undefined byte that is also the first non-UTF-8 byte of UTF-8 text is one stray byte: say so.
    if (first === mixedAt) this.failMixed(nonUtf8, lineOf(utf8At as number));
    const line = lineOf(undefinedAt);
    throw new ImportError(
      'undefined_byte',
      `Line ${line} holds the byte 0x${hex(bytes[undefinedAt] as number)}, which has no character in Windows-1252 (the file's encoding, since it is not UTF-8). ` +
        'The file is damaged or in another encoding: export it again as UTF-8 or Windows-1252.',
      line,
    );
  }

  /**
   * A valid multi-byte UTF-8 sequence begun in earlier chunks and ended in
   * `bytes`: its (negative) offset, or null. Keeps the last 3 bytes read,
   * however small the chunks, for the next call.
   */
  private utf8AcrossChunks(bytes: Buffer): number | null {
    const tail = this.tail;
    this.tail = bytes.length >= 3 ? Buffer.from(bytes.subarray(bytes.length - 3)) : Buffer.concat([tail, bytes]).subarray(-3);
    if (tail.every((b) => b < 0xc2)) return null;
    const joined = Buffer.concat([tail, bytes.subarray(0, 3)]);
    for (let at = 0; at < tail.length; at++) {
      if (utf8SequenceLength(joined, at) > tail.length - at) return at - tail.length;
    }
    return null;
  }

  private failMixed(nonUtf8: { line: number; byte: number }, utf8Line: number): never {
    throw new ImportError(
      'mixed_encodings',
      `Line ${nonUtf8.line} holds the byte 0x${hex(nonUtf8.byte)}, which is not UTF-8, but line ${utf8Line} holds UTF-8 text: ` +
        'the file mixes encodings, and reading it as either would garble some of its text. Export the whole file in one encoding (UTF-8 or Windows-1252).',
      nonUtf8.line,
    );
  }

  /** Validates complete sequences, carrying a cut one over to the next chunk. */
  private checkUtf8(bytes: Buffer): void {
    const all = this.utf8Tail.length === 0 ? bytes : Buffer.concat([this.utf8Tail, bytes]);
    const whole = completeUtf8Length(all);
    const complete = all.subarray(0, whole);
    this.utf8Tail = Buffer.from(all.subarray(whole));
    if (isUtf8(complete)) return;
    const offset = firstInvalidUtf8(complete);
    const line = this.linesBefore + countByte(complete, LF, offset) + 1;
    const byte = complete[offset] ?? 0;
    if (!this.byBom) this.failMixed({ line, byte }, this.firstNonAsciiLine);
    throw new ImportError(
      'undecodable',
      `Line ${line} holds the byte 0x${hex(byte)}, which is not valid UTF-8, but the file starts with a UTF-8 byte order mark. ` +
        'Export the whole file in one encoding (UTF-8 or Windows-1252).',
      line,
    );
  }

  private checkNul(bytes: Buffer): void {
    const nul = bytes.indexOf(0);
    if (nul !== -1) this.failNul(this.linesBefore + countByte(bytes, LF, nul));
  }

  private failNul(linesBefore: number): never {
    const line = linesBefore + 1;
    throw new ImportError(
      'undecodable',
      `Line ${line} holds a NUL byte (0x00), which is not text: the file may be UTF-16 without a byte order mark, or not a CSV file.`,
      line,
    );
  }
}

/** How many leading bytes of `bytes` end on a UTF-8 character boundary. */
export function completeUtf8Length(bytes: Buffer): number {
  const n = bytes.length;
  // A sequence is at most 4 bytes: look back at most 3 for its lead byte.
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = bytes[n - back] as number;
    if (b < 0x80) return n; // ASCII: nothing cut
    if (b >= 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return need > back ? n - back : n;
    }
  }
  return n;
}

/**
 * Offset of the first byte that is not valid UTF-8 in `bytes` (known to be
 * invalid). Node marks each invalid byte with U+FFFD when decoding; a U+FFFD
 * that is really in the text is three bytes EF BF BD, which we skip.
 */
function firstInvalidUtf8(bytes: Buffer): number {
  const text = bytes.toString('utf8');
  let offset = 0;
  let from = 0;
  for (let at = text.indexOf('\uFFFD'); at !== -1; at = text.indexOf('\uFFFD', at + 1)) {
    offset += Buffer.byteLength(text.slice(from, at));
    from = at;
    if (!(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) return offset;
  }
  return 0;
}

/** Two pieces in a row: both bytes, or both text (one of them empty otherwise). */
function join(a: Piece, b: Piece): Piece {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  if (typeof a === 'string' || typeof b === 'string') return String(a) + String(b);
  return Buffer.concat([a, b]);
}

function orInfinity(offset: number): number {
  return offset === -1 ? Infinity : offset;
}

function hex(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, '0');
}

function countByte(bytes: Buffer, byte: number, end: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1 && at < end; at = bytes.indexOf(byte, at + 1)) count++;
  return count;
}

function countChar(text: string, char: string, end: number): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1 && at < end; at = text.indexOf(char, at + 1)) count++;
  return count;
}
