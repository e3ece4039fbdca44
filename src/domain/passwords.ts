/**
 * Panel passwords, hashed with scrypt (node:crypto) and a random salt per
 * user. Unlike API key secrets, passwords are chosen by people and can be
 * guessed, so the hash is deliberately slow. The stored form names its
 * parameters, so they can be raised later without breaking older hashes:
 * `scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>`.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

// N = 2^15, r = 8: about 32 MiB and ~50 ms per hash, OWASP's recommended floor for scrypt.
const N = 32768;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
// 128 × N × r bytes are needed; Node's default maxmem (32 MiB) is exactly that, so leave headroom.
const MAXMEM = 64 * 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 10;
/** Longer passwords only cost hashing time; nobody types more. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * @example
 * const stored = await hashPassword('correct horse battery');
 * await verifyPassword('correct horse battery', stored); // true
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scrypt(password.normalize('NFC'), salt, KEY_BYTES, { N, r: R, p: P, maxmem: MAXMEM });
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `password` matches `stored`; false (never a throw) for a malformed stored value. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![n, r, p].every((x) => Number.isInteger(x) && x > 0) || n > 1 << 20 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (expected.length < 16) return false;
  const actual = await scrypt(password.normalize('NFC'), salt, expected.length, {
    N: n,
    r,
    p,
    maxmem: Math.max(MAXMEM, 256 * n * r),
  });
  return timingSafeEqual(actual, expected);
}

/** A hash of a random password, verified against when an email is unknown so that both cases take as long. */
let dummy: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}

/** Why `password` cannot be used, or null when it can. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `The password must have at most ${MAX_PASSWORD_LENGTH} characters.`;
  return null;
}

/** Emails are compared trimmed and in lower case: that is how users type them. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isPlausibleEmail(email: string): boolean {
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email);
}
