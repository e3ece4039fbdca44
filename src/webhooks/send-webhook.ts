/**
 * One delivery attempt: `POST <url>` with the event as the body, signed.
 * Delivered on any 2xx within the timeout (which covers connecting, the
 * response's headers and the part of its body that is read); redirects are
 * not followed (a 3xx is a failure); at most 4 KiB of the response body are
 * read, then the connection is dropped. Sockets connect only to allowed
 * addresses (safe-address.ts). Nothing here logs: the secret stays in this
 * module's arguments.
 */
import http from 'node:http';
import https from 'node:https';
import { checkLiteralHost, safeLookup } from './safe-address.js';
import { signatureHeader } from './webhook-signature.js';

/** How much of a response body is read (and kept in the attempts log). */
export const MAX_RESPONSE_BYTES = 4096;

export interface SendRules {
  timeoutMs: number;
  allowHttp: boolean;
  allowPrivate: boolean;
}

export interface SendResult {
  statusCode: number | null;
  ok: boolean;
  error: string | null;
  responseBody: string | null;
  durationMs: number;
}

export interface WebhookMessage {
  url: string;
  secret: string;
  eventId: string;
  body: string;
}

/** Agents that connect only where the rules allow; kept alive, so a busy endpoint reuses its connections. */
export class WebhookSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly rules: SendRules) {
    const lookup = safeLookup(rules.allowPrivate) as unknown as http.AgentOptions['lookup'];
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: 8, lookup } as http.AgentOptions);
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 8, lookup } as https.AgentOptions);
  }

  close() {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  send(message: WebhookMessage, now = Date.now()): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: string, statusCode: number | null = null, responseBody: string | null = null): SendResult => ({
      statusCode,
      ok: false,
      error,
      responseBody,
      durationMs: elapsed(),
    });
    let url: URL;
    try {
      url = new URL(message.url);
      if (url.protocol !== 'https:' && !(this.rules.allowHttp && url.protocol === 'http:')) {
        return Promise.resolve(failed(`Refused: ${url.protocol}// URLs are not allowed (only https://, unless WEBHOOK_ALLOW_HTTP=true).`));
      }
      checkLiteralHost(url.hostname, this.rules.allowPrivate);
    } catch (err) {
      return Promise.resolve(failed((err as Error).message));
    }
    const body = Buffer.from(message.body, 'utf8');
    const t = Math.floor(now / 1000);
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        agent: url.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(body.length),
          'User-Agent': 'Mirador-Webhooks/1',
          'Mirador-Event-Id': message.eventId,
          'Mirador-Signature': signatureHeader(message.secret, message.body, t),
        },
      });
      const timer = setTimeout(() => {
        finish(failed(`No complete answer within ${this.rules.timeoutMs} ms (timeout).`));
        request.destroy();
      }, this.rules.timeoutMs);
      request.on('error', (err) => finish(failed(describe(err))));
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const parts: Buffer[] = [];
        let size = 0;
        const done = () => {
          const text = Buffer.concat(parts).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
          const ok = status >= 200 && status < 300;
          finish({
            statusCode: status,
            ok,
            error: ok ? null : status >= 300 && status < 400 ? `Answered ${status} (redirects are not followed).` : `Answered ${status}.`,
            responseBody: text || null,
            durationMs: elapsed(),
          });
        };
        response.on('data', (chunk: Buffer) => {
          if (size >= MAX_RESPONSE_BYTES) return;
          parts.push(chunk);
          size += chunk.length;
          // Enough read: the rest of the body is not waited for.
          if (size >= MAX_RESPONSE_BYTES) {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        response.on('error', (err) => finish(failed(describe(err), status)));
        // The socket closing before the end (after 4 KiB were taken, or cut by the receiver).
        response.on('close', () => (size >= MAX_RESPONSE_BYTES ? done() : finish(failed('The connection closed before the answer ended.', status))));
      });
      request.end(body);
    });
  }
}

function describe(err: Error & { code?: string }): string {
  if (err.code === 'ECONNREFUSED') return 'Connection refused.';
  if (err.code === 'ENOTFOUND') return 'The host name does not resolve.';
  return err.message || String(err);
}
