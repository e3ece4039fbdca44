/**
 * Checking Mirador's webhook deliveries (contract §7). Each delivery is a
 * `POST` whose `Mirador-Signature` header is `t=<unix seconds>,v1=<hex
 * HMAC-SHA256(secret, "<t>.<raw body>")>`, keyed with the endpoint's whole
 * secret (`whsec_…`). A receiver runs on a server: this needs Node's crypto
 * (Node 20.16+, Deno, Bun), loaded when first called so that importing the
 * client stays free of it in a browser.
 */
type NodeCrypto = typeof import('node:crypto');

let nodeCrypto: NodeCrypto | undefined;
function crypto(): NodeCrypto {
  nodeCrypto ??= (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:crypto') as
    | NodeCrypto
    | undefined;
  if (!nodeCrypto) throw new Error('verifyWebhook needs node:crypto (Node 20.16 or later, Deno or Bun): receive webhooks on a server.');
  return nodeCrypto;
}

/** Why a delivery was refused; `reason` is stable, for branching. */
export type WebhookVerificationReason = 'missing_signature' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'signature_mismatch' | 'invalid_body';

/**
 * Thrown by `verifyWebhook` when a delivery must not be trusted. Answer it
 * with a 400 (Mirador retries a delivery that was not answered with a 2xx).
 *
 * @example
 * ```ts
 * try {
 *   verifyWebhook(raw, req.headers['mirador-signature'], secret);
 * } catch (err) {
 *   if (err instanceof WebhookVerificationError) console.warn(err.reason, err.message);
 * }
 * ```
 */
export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** An event as delivered and as listed by `GET /v1/eventos`. */
export interface MiradorEvent {
  /** `evt_…`: the same in the feed, in `Mirador-Event-Id` and on every retry; use it to drop duplicates. */
  id: string;
  type: 'import.published' | 'import.held' | 'import.failed' | 'webhook.test';
  /** ISO 8601, UTC. */
  created_at: string;
  data: {
    kind: string | null;
    import_id: number | null;
    /** The published snapshot's id; null unless `import.published`. */
    snapshot: string | null;
    counts: { inserted: number; updated: number; unchanged: number; deleted: number };
  };
}

export interface VerifyWebhookOptions {
  /** How far the signature's time may be from now, either way (default 300 s): older deliveries are refused as replays. */
  toleranceSeconds?: number;
  /** The present, for tests (default: the clock). */
  now?: Date;
}

/**
 * Checks a delivery's signature in constant time and returns its event.
 * `rawBody` must be the bytes exactly as received (not re-serialised JSON).
 *
 * @example
 * ```ts
 * import { verifyWebhook } from 'mirador/client';
 * const event = verifyWebhook(rawBody, req.headers['mirador-signature'], process.env.MIRADOR_WEBHOOK_SECRET!);
 * if (event.type === 'import.published') console.log(event.data.kind, event.data.counts);
 * ```
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | readonly string[] | null | undefined,
  secret: string,
  { toleranceSeconds = 300, now = new Date() }: VerifyWebhookOptions = {},
): MiradorEvent {
  const header = Array.isArray(signatureHeader) ? signatureHeader.join(',') : (signatureHeader as string | null | undefined);
  if (!header) throw new WebhookVerificationError('missing_signature', 'The request has no Mirador-Signature header.');
  let t: number | null = null;
  const signatures: Uint8Array[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (name === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(hexBytes(value));
  }
  if (t === null || signatures.length === 0) {
    throw new WebhookVerificationError('malformed_signature', 'The Mirador-Signature header is not "t=<unix seconds>,v1=<64 hex digits>".');
  }
  const age = Math.floor(now.getTime() / 1000) - t;
  if (Math.abs(age) > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `The signature was made ${Math.abs(age)} s ${age >= 0 ? 'ago' : 'in the future'}, beyond the tolerance of ${toleranceSeconds} s.`,
    );
  }
  const body = typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
  const { createHmac, timingSafeEqual } = crypto();
  const expected = createHmac('sha256', new TextEncoder().encode(secret)).update(`${t}.`, 'utf8').update(body).digest();
  // timingSafeEqual over equal lengths (every candidate is 32 bytes): no early exit reveals how much matched.
  if (!signatures.some((s) => timingSafeEqual(s, expected))) {
    throw new WebhookVerificationError('signature_mismatch', 'The signature does not match the body and the secret.');
  }
  try {
    return JSON.parse(new TextDecoder().decode(body)) as MiradorEvent;
  } catch {
    throw new WebhookVerificationError('invalid_body', 'The body is signed but is not JSON.');
  }
}

/** 64 hex digits (already checked) as 32 bytes. */
function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
