/** Endpoint signing secrets: `whsec_` and 33 base62 characters (≈196 bits from a CSPRNG). */
import { randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LENGTH = 33;

export function generateWebhookSecret(): string {
  let out = 'whsec_';
  // randomInt rejection-samples: every character is uniform.
  for (let i = 0; i < LENGTH; i++) out += BASE62[randomInt(BASE62.length)];
  return out;
}
