/**
 * A new secret (API key, upload token) is shown once, on the page the
 * creating POST redirects to (POST-redirect-GET, so a refresh never creates a
 * second one). Between the two requests it travels sealed (AES-256-GCM, with a
 * key derived from the session secret) in a short-lived HttpOnly cookie bound
 * to the administrator and the credential's prefix; the page that shows it
 * clears the cookie, so it is shown once. Nothing is kept on the server, so
 * the GET may reach any instance.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

export const REVEAL_COOKIE = 'mirador_reveal';
/** Long enough for the redirect to be followed on a slow connection; short enough to be useless later. */
export const REVEAL_MAX_AGE_S = 120;

export interface Reveal {
  userId: number;
  prefix: string;
  secret: string;
}

export class SecretReveals {
  private readonly key: Buffer;

  constructor(sessionSecret: string) {
    this.key = createHmac('sha256', sessionSecret).update('mirador secret reveal v1').digest();
  }

  seal(reveal: Reveal, now = Date.now()): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const plain = JSON.stringify({ ...reveal, expires: now + REVEAL_MAX_AGE_S * 1000 });
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The sealed reveal if it is intact, unexpired, and for this administrator and prefix; else null. */
  open(sealed: string | undefined, userId: number, prefix: string, now = Date.now()): string | null {
    if (!sealed) return null;
    try {
      const raw = Buffer.from(sealed, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      const value = JSON.parse(plain) as Reveal & { expires: number };
      if (value.userId !== userId || value.prefix !== prefix || value.expires < now) return null;
      return value.secret;
    } catch {
      // Tampered, truncated, or sealed under another secret.
      return null;
    }
  }
}
