/**
 * Issue 7, point 3: retries (service.md §7) against a fault-injecting HTTP
 * server on port 0 that answers 500s, 503s, 429s, resets and silences before
 * succeeding. Waits go through an injected sleep, so nothing really waits.
 * Each test gets a server of its own, so a request a test left behind (one
 * cut short by a timeout, say) can never reach the next test's server.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, test } from 'node:test';
import {
  AuthenticationError, ConnectionError, InvalidRequestError, Mirador, NotFoundError, RateLimitError, ServerError, type RetryInfo,
} from '../src/index.js';
import { defaultSleep } from '../src/transport.js';

type Fault =
  | { status: number; code?: string; retryAfter?: string }
  | 'reset'
  | 'silence';

/** 25 records, served as pages of the sandbox envelope. */
const RECORDS = Array.from({ length: 25 }, (_, i) => ({
  id_erp: `C${String(i + 1).padStart(3, '0')}`,
  nombre: `Cliente ${i + 1}`, cif: null, email: null, telefono: null, direccion: null,
  data: { CODIGO: `C${i + 1}` },
  actualizado_at: '2026-01-01T00:00:00.000Z',
}));

describe('client retries against a fault-injecting server', () => {
  let server: Server;
  let baseUrl: string;
  /** What the next requests get, in order, before the server answers normally. */
  let faults: Fault[] = [];
  let seen: IncomingMessage[] = [];
  let waits: number[] = [];
  const sleep = async (ms: number) => void waits.push(ms);
  let now = Date.parse('2026-11-21T10:00:00Z');
  const client = (options: Partial<ConstructorParameters<typeof Mirador>[0]> = {}) =>
    new Mirador({ baseUrl, sandbox: true, sleep, now: () => now, random: () => 0, ...options });

  function answer(req: IncomingMessage, res: ServerResponse) {
    seen.push(req);
    const fault = faults.shift();
    if (fault === 'reset') return req.socket.destroy();
    if (fault === 'silence') return; // never answers: the client's timeout must fire
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('X-Request-Id', `req-${seen.length}`);
    if (fault) {
      if (fault.retryAfter) res.setHeader('Retry-After', fault.retryAfter);
      res.statusCode = fault.status;
      const code = fault.code ?? (fault.status === 429 ? 'rate_limited' : 'internal_error');
      return res.end(JSON.stringify({ ok: false, error: code, message: `Injected ${fault.status}.`, request_id: `req-${seen.length}` }));
    }
    const url = new URL(req.url!, 'http://x');
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const items = RECORDS.slice(offset, offset + limit);
    const next = offset + items.length;
    res.end(JSON.stringify({ ok: true, sandbox: true, total: RECORDS.length, limit, offset, has_more: next < RECORDS.length, next_offset: next, items }));
  }

  beforeEach(async () => {
    faults = [];
    seen = [];
    waits = [];
    server = createServer(answer);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('500s are retried with backoff 2 s, 4 s, 8 s until one succeeds', async () => {
    faults = [{ status: 500 }, { status: 500 }, { status: 500 }];
    const page = await client().clientes.list({ limit: 5 });
    assert.equal(page.items.length, 5);
    assert.equal(seen.length, 4);
    assert.deepEqual(waits, [2000, 4000, 8000]);
  });

  test('at most 5 attempts: then ServerError with the last code, status and request id', async () => {
    faults = Array(6).fill({ status: 500 });
    const err = await client().clientes.list().catch((e: unknown) => e);
    assert.ok(err instanceof ServerError, String(err));
    assert.deepEqual({ code: err.code, status: err.status, requestId: err.requestId }, { code: 'internal_error', status: 500, requestId: 'req-5' });
    assert.equal(seen.length, 5);
    assert.deepEqual(waits, [2000, 4000, 8000, 16000]);
    assert.equal(faults.length, 1, 'no sixth attempt');
  });

  test('a 503 waits at least its Retry-After', async () => {
    faults = [{ status: 503, code: 'unavailable', retryAfter: '20' }, { status: 503, code: 'unavailable', retryAfter: '1' }];
    await client().clientes.list();
    assert.deepEqual(waits, [20_000, 4000]);
  });

  test('a 429 waits what Retry-After says, in seconds or as an HTTP date', async () => {
    faults = [{ status: 429, retryAfter: '7' }, { status: 429, retryAfter: new Date(now + 30_000).toUTCString() }];
    const page = await client().clientes.list();
    assert.equal(page.total, 25);
    assert.equal(seen.length, 3);
    assert.deepEqual(waits, [7000, 30_000]);
  });

  test('a 429 asking for longer than maxRetryWaitMs is thrown at once, with retryAfterSeconds', async () => {
    faults = [{ status: 429, retryAfter: '3600' }];
    const err = await client().clientes.list().catch((e: unknown) => e);
    assert.ok(err instanceof RateLimitError, String(err));
    assert.equal(err.retryAfterSeconds, 3600);
    assert.equal(seen.length, 1);
    assert.deepEqual(waits, []);
  });

  test('a connection reset is retried like a 5xx', async () => {
    faults = ['reset', 'reset'];
    const page = await client().clientes.list({ limit: 1 });
    assert.equal(page.items[0]!.id_erp, 'C001');
    assert.deepEqual(waits, [2000, 4000]);
  });

  test('no answer within timeoutMs is a ConnectionError once the attempts are spent', async () => {
    faults = ['silence', 'silence'];
    const err = await client({ timeoutMs: 100, maxAttempts: 2 }).clientes.list().catch((e: unknown) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.equal(err.status, null);
    assert.equal(err.code, 'connection_error');
    assert.match(err.message, /no answer within 100 ms/);
    assert.deepEqual(waits, [2000]);
  });

  test('nothing listening: ConnectionError after 5 attempts', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await client({ baseUrl: `http://127.0.0.1:${port}` }).obras.list().catch((e: unknown) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.match(err.message, /ECONNREFUSED/);
    assert.equal(waits.length, 4);
  });

  test('4xx answers are not retried', async () => {
    for (const [status, code, Class] of [
      [400, 'invalid_parameter', InvalidRequestError],
      [401, 'unauthorized', AuthenticationError],
      [404, 'not_found', NotFoundError],
      [405, 'method_not_allowed', InvalidRequestError],
    ] as const) {
      seen = [];
      faults = [{ status, code }];
      const err = await client().clientes.get('X').catch((e: unknown) => e);
      assert.ok(err instanceof Class, `${status}: ${String(err)}`);
      assert.equal(seen.length, 1, String(status));
    }
    assert.deepEqual(waits, []);
  });

  test('onRetry is told of each wait, before it starts', async () => {
    faults = [{ status: 503, code: 'unavailable', retryAfter: '3' }, 'reset'];
    const told: string[] = [];
    const onRetry = ({ attempt, waitMs, error }: RetryInfo) => told.push(`${attempt} ${waitMs} ${error.code} after ${waits.length} waits`);
    await client({ onRetry }).clientes.list();
    assert.deepEqual(told, ['1 3000 unavailable after 0 waits', '2 4000 connection_error after 1 waits']);
  });

  test('jitter adds at most 10% to each wait', async () => {
    faults = [{ status: 502 }, { status: 502 }];
    await client({ random: () => 0.999 }).clientes.list();
    assert.equal(waits.length, 2);
    assert.ok(waits[0]! >= 2000 && waits[0]! <= 2200, String(waits[0]));
    assert.ok(waits[1]! >= 4000 && waits[1]! <= 4400, String(waits[1]));
  });

  test('all() retries a failed page and still yields every record once, in order', async () => {
    // Page 1 succeeds, page 2 fails twice, then the rest succeed.
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls++;
      if (calls === 2) faults.push({ status: 500 }, 'reset');
      return fetch(input, init);
    };
    const ids: string[] = [];
    for await (const c of client({ fetch: flaky }).clientes.all({ pageSize: 10 })) ids.push(c.id_erp);
    assert.deepEqual(ids, RECORDS.map((r) => r.id_erp));
    assert.deepEqual(waits, [2000, 4000]);
    assert.deepEqual(seen.map((r) => new URL(r.url!, 'http://x').searchParams.get('offset')), ['0', '10', '10', '10', '20']);
  });

  test('an abort stops the wait between attempts', async () => {
    faults = [{ status: 500 }];
    const controller = new AbortController();
    const reason = new Error('stopped by the caller');
    let wait: 'none' | 'running' | 'ran out' | 'cut short' = 'none';
    // The real sleep (2 s here), aborted once it has begun: no clock decides the outcome.
    const sleep = (ms: number, signal?: AbortSignal) => {
      waits.push(ms);
      const waiting = defaultSleep(ms, signal);
      wait = 'running';
      waiting.then(() => (wait = 'ran out'), () => (wait = 'cut short'));
      queueMicrotask(() => controller.abort(reason));
      return waiting;
    };
    const err = await client({ sleep }).clientes.list({}, { signal: controller.signal }).catch((e: unknown) => e);
    assert.equal(err, reason, 'the call rejects with the abort reason');
    assert.equal(wait, 'cut short', 'the wait itself was aborted');
    assert.deepEqual(waits, [2000]);
    assert.equal(seen.length, 1, 'no second attempt after the abort');
  });

  test('requests carry the key as Bearer, or nothing on the sandbox, and ask for JSON', async () => {
    await new Mirador({ baseUrl, apiKey: 'api_abcdefgh_secret' }).articulos.get('A/1');
    await client().articulos.list({ updatedSince: new Date('2026-11-01T00:00:00Z') });
    assert.equal(seen[0]!.url, '/v1/articulos/A%2F1');
    assert.equal(seen[0]!.headers.authorization, 'Bearer api_abcdefgh_secret');
    assert.equal(seen[0]!.headers.accept, 'application/json');
    assert.equal(seen[1]!.url, '/v1/sandbox/articulos?updated_since=2026-11-01T00%3A00%3A00.000Z');
    assert.equal(seen[1]!.headers.authorization, undefined);
  });
});
