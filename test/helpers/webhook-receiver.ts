/** A real HTTP receiver on 127.0.0.1, port 0, for webhook tests: records what arrives, answers as told. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

export type Answer = (req: Received, n: number, res: ServerResponse) => void;

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `count` requests arrived (their bodies read). */
  waitFor(count: number): Promise<Received[]>;
  close(): Promise<void>;
}

export const answer200: Answer = (_req, _n, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');

export async function startReceiver(respond: Answer = answer200, host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: (r: Received[]) => void }[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(parts).toString('utf8') };
      received.push(r);
      for (const w of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(received.slice());
      }
      respond(r, received.length, res);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/hooks`,
    received,
    waitFor: (count) =>
      received.length >= count ? Promise.resolve(received.slice()) : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
