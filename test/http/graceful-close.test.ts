/**
 * Closing connections gracefully (src/http/graceful-close.ts): an idle
 * keep-alive socket is ended at once, and a socket with requests in progress,
 * pipelined ones included, only once the last of its responses is handed over.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConnection, type Socket } from 'node:net';
import { test } from 'node:test';
import { closeConnectionsGracefully } from '../../src/http/graceful-close.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

/** A connection that keeps what it receives and says when the server has closed it. */
function connect(port: number) {
  const socket: Socket = createConnection({ host: '127.0.0.1', port });
  socket.setTimeout(HANG_GUARD_MS, () => socket.destroy(new Error('the server stopped answering')));
  let received = '';
  const closed = new Promise<string>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (received += d));
  return { socket, closed, received: () => received, ended: () => socket.readableEnded };
}

const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
const bodies = (text: string) => [...text.matchAll(/\r\n\r\n([a-z]+)/g)].map((m) => m[1]);

test('closing ends idle sockets at once and busy ones after their last pipelined response', async (t) => {
  const held: ServerResponse[] = [];
  let heldTwo!: () => void;
  const twoHeld = new Promise<void>((resolve) => (heldTwo = resolve));
  const server = createServer((req, res) => {
    if (req.url === '/now') return void res.end('now');
    held.push(res);
    if (held.length === 2) heldTwo();
  });
  closeConnectionsGracefully(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;

  const idle = connect(port);
  idle.socket.write(request('/now'));
  while (!idle.received().includes('now')) await once(idle.socket, 'data');

  const busy = connect(port);
  busy.socket.write(request('/one') + request('/two'));
  await twoHeld;

  server.closeIdleConnections();
  assert.deepEqual(bodies(await idle.closed), ['now']);

  held[0]!.end('one');
  while (!busy.received().includes('one')) await once(busy.socket, 'data');
  // Still open: its second request is in progress.
  assert.equal(busy.socket.destroyed, false);
  held[1]!.end('two');
  assert.deepEqual(bodies(await busy.closed), ['one', 'two']);
});
