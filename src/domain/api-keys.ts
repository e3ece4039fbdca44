/**
 * Credential format and checks. A credential is `<tag>_<prefix>_<secret>`:
 * `api` for read keys (service.md §5), `upl` for upload tokens. The prefix is
 * public and identifies the credential; only a SHA-256 of the secret is
 * stored. A fast hash is right here because the secret carries ≥ 190 bits from
 * a CSPRNG: there is nothing to brute-force, unlike a password.
 */
import { hash, randomInt, timingSafeEqual } from 'node:crypto';

export type CredentialScope = 'read' | 'upload';

const TAG: Record<CredentialScope, string> = { read: 'api', upload: 'upl' };
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX_LENGTH = 8;
// 33 base62 characters carry 33 × log2(62) ≈ 196 bits.
const SECRET_LENGTH = 33;
const FORMAT = /^(api|upl)_([a-z0-9]{8})_([0-9A-Za-z]{32,128})$/;

export interface NewCredential {
  /** The full credential, shown once. */
  token: string;
  prefix: string;
  secretHash: Buffer;
}

function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export function generateCredential(scope: CredentialScope): NewCredential {
  const prefix = randomString(PREFIX_ALPHABET, PREFIX_LENGTH);
  // Rejection sampling by randomInt keeps every character uniform.
  const secret = randomString(BASE62, SECRET_LENGTH);
  return { token: `${TAG[scope]}_${prefix}_${secret}`, prefix, secretHash: hashSecret(secret) };
}

export function hashSecret(secret: string): Buffer {
  // The one-shot form: every API request hashes a key, and a Hash object costs more than the hashing.
  return hash('sha256', secret, 'buffer');
}

export interface ParsedCredential {
  scope: CredentialScope;
  prefix: string;
  secret: string;
}

/** Splits a presented credential; null when it is not in the format at all. */
export function parseCredential(token: string): ParsedCredential | null {
  const m = FORMAT.exec(token);
  if (!m) return null;
  return { scope: m[1] === 'api' ? 'read' : 'upload', prefix: m[2]!, secret: m[3]! };
}

/** Constant-time check of a presented secret against its stored hash. */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const presented = hashSecret(secret);
  return presented.length === storedHash.length && timingSafeEqual(presented, storedHash);
}

export function isValidPrefix(prefix: string): boolean {
  return /^[a-z0-9]{8}$/.test(prefix);
}

/** Longest lifetime `--expires-in` accepts: ten years (a key meant to live longer should not expire). */
const MAX_EXPIRES_IN_MS = 3650 * 86_400_000;
const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000 };

/** What `parseExpiresIn` accepts, for error messages. */
export const EXPIRES_IN_FORMAT = 'a whole number of days or hours, such as 90d or 12h (from 1h to 3650d)';

/** A lifetime such as `90d` or `12h`, in ms; null when malformed, zero or over ten years. */
export function parseExpiresIn(text: string): number | null {
  const m = /^(\d{1,6})([dh])$/.exec(text.trim().toLowerCase());
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms > 0 && ms <= MAX_EXPIRES_IN_MS ? ms : null;
}
