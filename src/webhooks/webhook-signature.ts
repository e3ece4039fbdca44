/**
 * The `Mirador-Signature` header (contract §7): `t=<unix seconds>,v1=<hex
 * HMAC-SHA256(secret, "<t>.<body>")>`, keyed with the whole secret string
 * (`whsec_…`) as UTF-8. Receivers check it with the client's `verifyWebhook`.
 */
import { createHmac } from 'node:crypto';

export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${unixSeconds}.${body}`, 'utf8').digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}
