/**
 * Closing connections without cutting responses short. Node's
 * `server.close()` calls `closeIdleConnections()`, which destroys every socket
 * whose response has *ended* — even when megabytes of that response still sit
 * in the socket's write buffer, waiting for a slow reader. This replaces it on
 * our server: idle sockets are `end()`ed (which flushes first), and sockets
 * with a request in progress are ended once their response is handed over.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How many requests a socket has in progress (more than one when a client
 * pipelines). A property of the socket, not a Set of busy sockets beside it:
 * adding and deleting a socket on every request made the Set's long-lived
 * hash table rehash into V8's old generation every few requests, garbage only
 * a full collection frees (domain/clock-map.ts says why).
 */
const inProgress = Symbol('mirador.requestsInProgress');

type TrackedSocket = Socket & { [inProgress]?: number };

export function closeConnectionsGracefully(server: Server): void {
  const sockets = new Set<TrackedSocket>();
  let closing = false;

  server.on('connection', (socket: TrackedSocket) => {
    socket[inProgress] = 0;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (req, res) => {
    const socket: TrackedSocket = req.socket;
    socket[inProgress] = (socket[inProgress] ?? 0) + 1;
    res.once('finish', () => {
      const left = (socket[inProgress] = (socket[inProgress] ?? 1) - 1);
      if (closing && left === 0) socket.end();
    });
  });
  server.closeIdleConnections = () => {
    closing = true;
    for (const socket of sockets) if (!socket[inProgress]) socket.end();
  };
}
