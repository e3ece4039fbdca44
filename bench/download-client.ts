/**
 * A client downloading every record of a kind the way the README tells
 * integrators to: `limit=1000`, following `next_offset` while `has_more`, one
 * keep-alive connection, optionally with `Accept-Encoding: gzip`. Runs in its
 * own process (pinned to another core than the server) and prints one JSON
 * line: wall time, pages, bytes received.
 *
 * It reads only the envelope of each page (where `next_offset` is), as a
 * client that streams the items to their destination would: the items are
 * not parsed, and with gzip only the first bytes are inflated.
 */
import { Agent, request } from 'node:http';
import { constants, inflateRawSync } from 'node:zlib';

interface DownloadSpec {
  base: string;
  path: string;
  key: string;
  limit: number;
  gzip: boolean;
}

const spec = JSON.parse(process.argv[2]!) as DownloadSpec;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(offset: number): Promise<{ status: number; head: string; bytes: number }> {
  const headers: Record<string, string> = { authorization: `Bearer ${spec.key}` };
  if (spec.gzip) headers['accept-encoding'] = 'gzip';
  return new Promise((resolve, reject) => {
    const req = request(`${spec.base}${spec.path}?limit=${spec.limit}&offset=${offset}`, { agent, headers }, (res) => {
      let first: Buffer | null = null;
      let bytes = 0;
      res.on('data', (b: Buffer) => {
        bytes += b.length;
        first ??= b;
      });
      res.on('end', () => {
        const gzipped = res.headers['content-encoding'] === 'gzip';
        resolve({ status: res.statusCode ?? 0, head: envelope(first ?? Buffer.alloc(0), gzipped), bytes });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The first few hundred characters of the body, inflating only the start of a gzip stream. */
function envelope(first: Buffer, gzipped: boolean): string {
  if (!gzipped) return first.toString('latin1', 0, 400);
  // A gzip member's header is 10 bytes when no optional fields are set, as zlib writes it.
  const raw = inflateRawSync(first.subarray(10), { finishFlush: constants.Z_SYNC_FLUSH });
  return raw.toString('latin1', 0, 400);
}

const started = performance.now();
let offset = 0;
let pages = 0;
let bytes = 0;
let total = 0;
for (;;) {
  const page = await get(offset);
  if (page.status !== 200) throw new Error(`offset ${offset}: status ${page.status}`);
  pages++;
  bytes += page.bytes;
  const more = /"has_more":(true|false),"next_offset":(\d+)/.exec(page.head);
  const t = /"total":(\d+)/.exec(page.head);
  if (!more || !t) throw new Error(`offset ${offset}: no envelope in ${page.head.slice(0, 200)}`);
  total = Number(t[1]);
  if (more[1] !== 'true') break;
  offset = Number(more[2]);
}
const ms = performance.now() - started;
agent.destroy();
process.stdout.write(JSON.stringify({ ms, pages, bytes, total }) + '\n');
