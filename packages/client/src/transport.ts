/**
 * Sends GET requests with retries, as the service asks (service.md §7): 5xx
 * answers and network failures are retried with exponential backoff (2 s,
 * 4 s, 8 s…), a 429 after its `Retry-After`, at most `maxAttempts` attempts
 * in all. Every Mirador request is a GET, so repeating one is always safe.
 */
import { ConnectionError, errorForStatus, MiradorError, RateLimitError } from './errors.js';

/**
 * Waits `ms`; rejects with the signal's reason if it aborts first. Inject one
 * to make retries instant in tests, or to log them.
 *
 * @example
 * ```ts
 * const waits: number[] = [];
 * const sleep: Sleep = async (ms) => void waits.push(ms);
 * ```
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Everything the transport needs; `Mirador` fills in the defaults.
 *
 * @example
 * ```ts
 * new Transport({ baseUrl: 'http://127.0.0.1:3000', apiKey: null, fetch, sleep: defaultSleep, now: Date.now,
 *   random: Math.random, maxAttempts: 5, timeoutMs: 30_000, maxRetryWaitMs: 120_000, onRetry: null });
 * ```
 */
export interface TransportOptions {
  baseUrl: string;
  apiKey: string | null;
  fetch: typeof globalThis.fetch;
  sleep: Sleep;
  now: () => number;
  random: () => number;
  maxAttempts: number;
  timeoutMs: number;
  maxRetryWaitMs: number;
  onRetry: ((retry: RetryInfo) => void) | null;
}

/**
 * What `onRetry` is told before each wait.
 *
 * @example
 * ```ts
 * const onRetry = ({ attempt, waitMs, error }: RetryInfo) => console.warn(`${error.code}: retry ${attempt + 1} in ${waitMs} ms`);
 * ```
 */
export interface RetryInfo {
  /** The attempt that just failed, from 1. */
  attempt: number;
  /** How long the client waits before the next attempt. */
  waitMs: number;
  /** Why the attempt failed. */
  error: MiradorError;
}

/** The first wait: the service asks for 2 s, then double each time. */
const FIRST_BACKOFF_MS = 2000;
/** Never more than this between two attempts, whatever the attempt number. */
const MAX_BACKOFF_MS = 30_000;
/** Up to this share is added at random, so that many clients do not retry in step. */
const JITTER = 0.1;

/**
 * A query value; undefined ones are left out.
 *
 * @example
 * ```ts
 * const query: Record<string, QueryValue> = { limit: 100, updated_since: undefined };
 * ```
 */
export type QueryValue = string | number | boolean | undefined | readonly string[];

/**
 * The real wait, on `setTimeout`.
 *
 * @example
 * ```ts
 * await defaultSleep(2000, AbortSignal.timeout(5000));
 * ```
 */
export const defaultSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** One attempt's outcome: a parsed success, or what went wrong. */
type Outcome =
  | { ok: true; body: unknown }
  | { ok: false; error: MiradorError; retryAfterMs: number | null };

/**
 * GETs JSON from Mirador with retries. Used by the resources; not needed directly.
 *
 * @example
 * ```ts
 * const page = await transport.getJson<ListPage<Cliente>>('/v1/sandbox/clientes', { limit: 2 });
 * ```
 */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  /** GETs `path` (already encoded) with `query`, retrying as above; resolves to the parsed JSON body. */
  async getJson<T>(path: string, query: Record<string, QueryValue> = {}, signal?: AbortSignal): Promise<T> {
    const url = new URL(this.options.baseUrl + path);
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      // A list repeats the parameter (an equality filter's values: any of them).
      if (Array.isArray(value)) for (const v of value as readonly string[]) url.searchParams.append(name, v);
      else url.searchParams.set(name, String(value));
    }
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(url, signal);
      if (outcome.ok) return outcome.body as T;
      const wait = this.retryDelay(attempt, outcome.error, outcome.retryAfterMs);
      if (wait === null) throw outcome.error;
      this.options.onRetry?.({ attempt, waitMs: wait, error: outcome.error });
      await this.options.sleep(wait, signal);
    }
  }

  /**
   * How long to wait before the next attempt, or null to give up. A short
   * ladder of early returns, checked in this order.
   */
  retryDelay(attempt: number, error: MiradorError, retryAfterMs: number | null): number | null {
    // Out of attempts: the caller gets the last error.
    if (attempt >= this.options.maxAttempts) return null;
    // Nothing came back (refused, reset, timed out): the server may be restarting.
    if (error instanceof ConnectionError) return this.backoff(attempt);
    // Over the rate: the server says when to come back; give up if that is unreasonably far.
    if (error instanceof RateLimitError) {
      const wait = retryAfterMs ?? this.backoff(attempt);
      return wait <= this.options.maxRetryWaitMs ? wait : null;
    }
    // 5xx: back off, and wait at least as long as a Retry-After asks (a 503 sends one).
    if (error.status !== null && error.status >= 500) {
      const wait = Math.max(this.backoff(attempt), retryAfterMs ?? 0);
      return wait <= this.options.maxRetryWaitMs ? wait : null;
    }
    // Any other answer (400, 401, 404…) would be the same next time.
    return null;
  }

  /** 2 s, 4 s, 8 s, 16 s… capped, plus up to 10% jitter. */
  private backoff(attempt: number): number {
    const base = Math.min(FIRST_BACKOFF_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS);
    return Math.round(base * (1 + JITTER * this.options.random()));
  }

  private async attempt(url: URL, signal: AbortSignal | undefined): Promise<Outcome> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.options.apiKey !== null) headers.Authorization = `Bearer ${this.options.apiKey}`;
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await this.options.fetch(url, { headers, signal: signal ? eitherSignal(signal, timeout) : timeout });
      // Read inside the try: a connection cut mid-body is a network failure too.
      text = await response.text();
    } catch (err) {
      // The caller's own abort is not a failure to retry.
      if (signal?.aborted) throw signal.reason;
      const why = timeout.aborted ? `no answer within ${this.options.timeoutMs} ms` : describe(err);
      return {
        ok: false,
        error: new ConnectionError(`Could not reach Mirador at ${url.origin}: ${why}.`, { code: 'connection_error', status: null, requestId: null, cause: err }),
        retryAfterMs: null,
      };
    }
    const requestId = response.headers.get('x-request-id');
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.ok) {
      if (body === undefined || body === null) {
        return {
          ok: false,
          error: new MiradorError(`Mirador answered ${response.status} with a body that is not JSON.`, { code: 'invalid_response', status: response.status, requestId }),
          retryAfterMs: null,
        };
      }
      return { ok: true, body };
    }
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), this.options.now());
    const retryAfterSeconds = retryAfterMs === null ? null : Math.ceil(retryAfterMs / 1000);
    return { ok: false, error: errorForStatus(response.status, body, requestId, retryAfterSeconds), retryAfterMs };
  }
}

/**
 * `Retry-After` as milliseconds from now: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 *
 * @example
 * ```ts
 * parseRetryAfter('7', Date.now()); // 7000
 * parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('Wed, 21 Oct 2026 07:27:30 GMT')); // 30000
 * ```
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Aborts when either does: AbortSignal.any where it exists (Node 20.3+, 2024 browsers), by hand elsewhere. */
function eitherSignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const controller = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) controller.abort(s.reason);
    else s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
}
