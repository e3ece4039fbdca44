/**
 * A request without a body skips node's Readable life cycle
 * (src/http/empty-request-body.ts): it is finished when its response is,
 * a request with a body is read or drained as before, and connections that
 * carry both, one after another or pipelined, keep answering in order.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createConnection } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { skipEmptyBodyLifeCycle } from '../../src/http/empty-request-body.js';
import type { Store } from '../../src/store/store.js';
import { sqliteFactory } from '../helpers/stores.js';
import { startServer, type TestServer } from '../helpers/test-server.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

/** Writes `bytes` on one connection and collects everything until the server closes it. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const parts: Buffer[] = [];
    socket.setTimeout(HANG_GUARD_MS, () => socket.destroy(new Error('the server stopped answering')));
    socket.on('data', (d) => parts.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(parts).toString('latin1')));
    socket.write(bytes);
  });
}

const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

describe('a request without a body, on a bare node:http server', () => {
  interface Seen {
    skipped: boolean;
    body: string;
    endedAtFinish: boolean;
    destroyedAtFinish: boolean;
  }
  const seen: Seen[] = [];
  let server: Server;
  let port: number;

  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      const skipped = skipEmptyBodyLifeCycle(req);
      const record: Seen = { skipped, body: '', endedAtFinish: false, destroyedAtFinish: false };
      seen.push(record);
      // Registered after the server's own 'finish' listener, which dumps an unread request.
      res.on('finish', () => {
        record.endedAtFinish = req.readableEnded;
        record.destroyedAtFinish = req.destroyed;
      });
      const answer = () => res.end(`${req.method} ${req.url}`);
      // Reads the body of a POST; leaves a GET's, body or none, unread.
      if (req.method === 'POST') {
        req.setEncoding('utf8');
        req.on('data', (d: string) => (record.body += d));
        req.on('end', answer);
      } else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a bodiless GET is finished when its response is; requests with a body are left to be read or drained', async () => {
    seen.length = 0;
    const text = await exchange(
      port,
      'GET /a HTTP/1.1\r\nHost: x\r\n\r\n' +
        'POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello' +
        'GET /c HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd' +
        'POST /d HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n' +
        'GET /e HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    assert.deepEqual(statuses(text), [200, 200, 200, 200, 200]);
    assert.match(text, /GET \/a[\s\S]*POST \/b[\s\S]*GET \/c[\s\S]*POST \/d[\s\S]*GET \/e/);
    assert.deepEqual(
      seen.map((s) => [s.skipped, s.body]),
      [
        [true, ''],
        [false, 'hello'],
        [false, ''],
        [false, 'abc'],
        [true, ''],
      ],
    );
    // The bodiless ones were finished at once, the bodies read were ended, and the unread body of /c was still being drained.
    assert.deepEqual(
      seen.map((s) => s.endedAtFinish),
      [true, true, false, true, true],
    );
    assert.deepEqual(
      seen.filter((s) => s.skipped).map((s) => s.destroyedAtFinish),
      [true, true],
    );
  });

  test('a request already finished is left alone', async () => {
    const server2 = createServer((req, res) => {
      skipEmptyBodyLifeCycle(req);
      res.end(String(skipEmptyBodyLifeCycle(req)));
    });
    await new Promise<void>((resolve) => server2.listen(0, '127.0.0.1', resolve));
    try {
      const text = await exchange((server2.address() as { port: number }).port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.match(text, /\r\n\r\nfalse$/);
    } finally {
      await new Promise<void>((resolve) => server2.close(() => resolve()));
    }
  });
});

describe('a request without a body, through Mirador', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  const endedAtFinish: boolean[] = [];

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    server = await startServer(store);
    server.app.fastify.server.on('request', (req: IncomingMessage, res) => {
      res.on('finish', () => endedAtFinish.push(req.readableEnded));
    });
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  test('the app finishes bodiless requests itself, and one connection serves them pipelined with requests that have a body', async () => {
    const port = Number(new URL(server.baseUrl).port);
    endedAtFinish.length = 0;
    const text = await exchange(
      port,
      'GET /v1/sandbox/clientes?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /v1/sandbox/clientes?limit=2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd' +
        'HEAD /v1/sandbox/clientes?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /v1/sandbox/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    assert.deepEqual(statuses(text), [200, 200, 200, 404]);
    // Answered in order: the second page's body is the one with two items.
    const bodies = text.split(/HTTP\/1\.1 (?=\d{3} )/).slice(1);
    assert.equal(JSON.parse(bodies[0]!.slice(bodies[0]!.indexOf('\r\n\r\n') + 4)).items.length, 1);
    assert.equal(JSON.parse(bodies[1]!.slice(bodies[1]!.indexOf('\r\n\r\n') + 4)).items.length, 2);
    // Without the app's call, node would only start dumping each request when its response finished.
    assert.deepEqual(endedAtFinish, [true, false, true, true]);
  });
});
