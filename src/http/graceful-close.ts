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

export function closeConnectionsGracefully(server: Server): void {
  const sockets = new Set<Socket>();
  const busy = new Set<Socket>();
  let closing = false;

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    busy.add(socket);
    res.once('finish', () => {
      busy.delete(socket);
      if (closing) socket.end();
    });
  });
  server.closeIdleConnections = () => {
    closing = true;
    for (const socket of sockets) if (!busy.has(socket)) socket.end();
  };
}
