/** Sends raw bytes as an HTTP request, for requests no well-behaved client would send. */
import { createConnection } from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export function rawRequest(baseUrl: string, bytes: Buffer | string, timeoutMs = 10_000): Promise<RawReply> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port) });
    const parts: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (d) => parts.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(parts);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no HTTP response: ${JSON.stringify(all.toString('latin1').slice(0, 200))}`));
      const [statusLine, ...lines] = all.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      let body = all.subarray(end + 4);
      if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
    });
    socket.write(bytes);
  });
}
