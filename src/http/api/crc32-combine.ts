/**
 * CRC-32 of a concatenation from the CRCs of its parts: a gzip page's
 * trailer is computed from the CRC stored with each chunk's segment, without
 * reading the chunk's bytes again. Node's zlib computes CRCs (zlib.crc32)
 * but does not expose zlib's crc32_combine, so this is the same arithmetic:
 * CRC(A·B) = CRC(A)·x^(8·|B|) ⊕ CRC(B) over GF(2) modulo the CRC polynomial,
 * in gzip's reflected bit order (the most significant power in bit 0).
 */

/** The CRC-32 polynomial, reflected. */
const POLY = 0xedb88320;
/** x^0 in the reflected representation. */
const ONE = 0x80000000;

/** a·b modulo the polynomial. */
function multiply(a: number, b: number): number {
  let product = 0;
  let bit = ONE;
  while (bit !== 0 && a !== 0) {
    if ((a & bit) !== 0) {
      product ^= b;
      a ^= bit;
    }
    bit >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return product >>> 0;
}

/** x^(2^k) modulo the polynomial, for k = 0..31 (the powers repeat with a period that divides 2^32 - 1). */
const POWERS: number[] = [];
for (let k = 0, p = ONE >>> 1; k < 32; k++, p = multiply(p, p)) POWERS.push(p);

/** x^(8·bytes): the factor that shifts a CRC past `bytes` zero bytes. */
function shiftFor(bytes: number): number {
  let result = ONE;
  // x^(8n) = x^(2^3 · n): walk n's bits starting at the power 2^3.
  for (let k = 3, n = bytes; n > 0; k++, n = Math.floor(n / 2)) {
    if (n % 2 === 1) result = multiply(POWERS[k % 32]!, result);
  }
  return result;
}

/**
 * CRC-32 of A followed by B, given crcA = CRC(A), crcB = CRC(B) and B's length.
 *
 * @example
 * crc32Combine(zlib.crc32(a), zlib.crc32(b), b.length) === zlib.crc32(Buffer.concat([a, b]))
 */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB === 0) return crcA >>> 0;
  return (multiply(shiftFor(lengthB), crcA) ^ crcB) >>> 0;
}
