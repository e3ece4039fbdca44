/**
 * The physical limit of the HTTP layer on this machine, for comparison: a
 * bare node:http server that serves the very same response bodies as Mirador
 * from memory, with the same key check (prefix lookup, SHA-256 of the
 * secret, constant-time comparison). All items of one kind sit pre-rendered
 * as UTF-8 in one Buffer, in list order, with the byte offset of each; a page
 * is the envelope plus one zero-copy `subarray` of it. With gzip asked for,
 * it compresses each response on the fly (no cache).
 *
 *   node dist/bench/reference-server.js --db <DATABASE_URL> --company bench --kind clientes --port 8081
 *
 * The items are read once, at start, from the snapshot Mirador serves, so the
 * bytes are the same by construction. Prints "ready" on stdout when listening.
 *
 * Filtered lists (issue 17): the positions a query matches are computed once,
 * on its first request (a scan, parsing each item), and kept, so that every
 * later page is the envelope plus a `subarray` per item: the same filtered
 * pages, precomputed as positions over its one Buffer. `fields=` pages read a
 * second Buffer of items rendered with only those keys, made once per `fields`.
 */
import { createServer, type ServerResponse } from 'node:http';
import { parseArgs, promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { parseCredential, secretMatches } from '../src/domain/api-keys.js';
import { isKind, type Kind } from '../src/domain/kinds.js';
import { openStore } from '../src/store/open-store.js';
import { firstPositionSince } from '../src/http/api/snapshot-reader.js';
import { foldedWords, foldText, queryWords } from '../src/domain/search-words.js';

const gzipAsync = promisify(gzip);

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    company: { type: 'string', default: 'bench' },
    kind: { type: 'string', default: 'clientes' },
    port: { type: 'string', default: '8081' },
  },
});
if (!args.db || !isKind(args.kind!)) throw new Error('usage: reference-server --db <url> [--company slug] [--kind kind] --port N');
const kind = args.kind as Kind;

// --- Load: every item of the live snapshot into one Buffer ------------------------------------

const store = await openStore(args.db);
const company = await store.companyBySlug(args.company!);
if (!company) throw new Error(`no company ${args.company}`);
const snapshotId = await store.liveSnapshotId(company.id, kind);
const meta = snapshotId === null ? null : await store.snapshotMeta(snapshotId);
if (!meta) throw new Error(`no live snapshot of ${kind}`);
const secrets = new Map<string, Buffer>();
for (const c of await store.listCredentials(company.id, 'read')) if (!c.revokedAt) secrets.set(c.prefix, c.secretHash);

const pieces: Buffer[] = [];
/** Item i is items[offsets[i] .. offsets[i+1] - 1); the byte before offsets[i+1] is a comma. */
const offsets = new Float64Array(meta.count + 1);
let pos = 0;
let at = 0;
for (let from = 0; from < meta.chunkStarts.length; from += 64) {
  for (const chunk of await store.readChunks(meta.id, from, Math.min(from + 63, meta.chunkStarts.length - 1))) {
    for (let k = 0; k < chunk.offsets.length - 1; k++) offsets[pos++] = at + chunk.offsets[k]!;
    pieces.push(chunk.bytes, Buffer.from(','));
    at += chunk.bytes.length + 1;
  }
}
offsets[pos] = at;
const items = Buffer.concat(pieces);
pieces.length = 0;
await store.close();

const idToPos = new Map<string, number>();
const ID = /^\{"id_erp":("(?:[^"\\]|\\.)*")/;
for (let i = 0; i < meta.count; i++) {
  const head = items.toString('utf8', offsets[i]!, Math.min(offsets[i]! + 512, offsets[i + 1]! - 1));
  idToPos.set(JSON.parse(ID.exec(head)![1]!) as string, i);
}


// --- Serve ------------------------------------------------------------------------------------

const LIST_PATH = `/v1/${kind}`;
const DETAIL_PREFIX = `/v1/${kind}/`;
const ITEMS_CLOSE = Buffer.from(']}');
const ITEM_HEAD = Buffer.from('{"ok":true,"item":');
const ITEM_CLOSE = Buffer.from('}');

function keyOk(authorization: string | undefined): boolean {
  if (!authorization?.startsWith('Bearer ')) return false;
  const parsed = parseCredential(authorization.slice(7).trim());
  if (!parsed || parsed.scope !== 'read') return false;
  const stored = secrets.get(parsed.prefix);
  return stored !== undefined && secretMatches(parsed.secret, stored);
}

async function send(res: ServerResponse, etag: string, gzipIt: boolean, body: Buffer[]) {
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json; charset=utf-8', ETag: etag };
  if (gzipIt) {
    const out = await gzipAsync(Buffer.concat(body), { level: 6 });
    res.writeHead(200, { ...headers, 'Content-Encoding': 'gzip', 'Content-Length': out.length });
    res.end(out);
    return;
  }
  let length = 0;
  for (const b of body) length += b.length;
  res.writeHead(200, { ...headers, 'Content-Length': length });
  // Corked: the head and the pieces leave in one write.
  res.socket?.cork();
  for (let i = 0; i < body.length - 1; i++) res.write(body[i]);
  res.end(body[body.length - 1]);
  res.socket?.uncork();
}

function fail(res: ServerResponse, status: number) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(`{"ok":false,"error":"${status}"}`);
}

type Parsed = Record<string, unknown> & { id_erp: string; actualizado_at: string };
const parseItem = (i: number) => JSON.parse(items.toString('utf8', offsets[i]!, offsets[i + 1]! - 1)) as Parsed;
const LIST_PARAMS = new Set(['limit', 'offset', 'updated_since', 'fields']);

/** A query's matches, by its filters (the query without paging and fields). */
const matchCache = new Map<string, Uint32Array>();
function matches(params: URLSearchParams): Uint32Array | null {
  const filters = [...params.entries()].filter(([k]) => !LIST_PARAMS.has(k)).sort();
  if (filters.length === 0) return null;
  const key = JSON.stringify(filters);
  let hit = matchCache.get(key);
  if (!hit) {
    const byField = new Map<string, string[]>();
    for (const [k, v] of filters) byField.set(k, [...(byField.get(k) ?? []), v]);
    const out: number[] = [];
    for (let i = 0; i < meta!.count; i++) {
      const item = parseItem(i);
      let ok = true;
      for (const [field, values] of byField) {
        if (field === 'q') {
          const terms = [...foldedWords(String(item.nombre ?? '')), ...['id_erp', 'codigo', 'cif'].filter((f) => typeof item[f] === 'string').map((f) => foldText(item[f] as string))];
          ok = queryWords(values[0]!).every((w) => terms.some((t) => t.startsWith(w)));
        } else ok = values.some((v) => (v === '' ? item[field] === null : item[field] === v));
        if (!ok) break;
      }
      if (ok) out.push(i);
    }
    hit = Uint32Array.from(out);
    matchCache.set(key, hit);
  }
  return hit;
}

/** Items with only some keys, in one Buffer, made once per `fields`. */
const thinCache = new Map<string, { bytes: Buffer; offsets: Float64Array }>();
function thinItems(fields: string): { bytes: Buffer; offsets: Float64Array } {
  let hit = thinCache.get(fields);
  if (!hit) {
    const keep = new Set([...fields.split(','), 'id_erp', 'actualizado_at']);
    const parts: Buffer[] = [];
    const at = new Float64Array(meta!.count + 1);
    let length = 0;
    for (let i = 0; i < meta!.count; i++) {
      const item = parseItem(i);
      const b = Buffer.from(`${JSON.stringify(Object.fromEntries(Object.entries(item).filter(([k]) => keep.has(k))))},`);
      at[i] = length;
      length += b.length;
      parts.push(b);
    }
    at[meta!.count] = length;
    hit = { bytes: Buffer.concat(parts), offsets: at };
    thinCache.set(fields, hit);
  }
  return hit;
}

const COMMA = Buffer.from(',');

const server = createServer((req, res) => {
  if (!keyOk(req.headers.authorization)) return fail(res, 401);
  const url = new URL(req.url ?? '/', 'http://x');
  const gzipIt = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
  const matched = url.pathname === LIST_PATH ? matches(url.searchParams) : null;
  const fields = url.searchParams.get('fields');
  if (url.pathname === LIST_PATH && (matched || fields)) {
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const sinceText = url.searchParams.get('updated_since');
    const first = sinceText === null ? 0 : firstPositionSince(meta!, Date.parse(sinceText));
    const source = fields ? thinItems(fields) : { bytes: items, offsets };
    const body: Buffer[] = [];
    let total: number;
    let returned: number;
    if (matched) {
      let k0 = 0;
      while (k0 < matched.length && matched[k0]! < first) k0++;
      total = matched.length - k0;
      const from = Math.min(k0 + offset, matched.length);
      const to = Math.min(from + limit, matched.length);
      returned = to - from;
      for (let k = from; k < to; k++) {
        const p = matched[k]!;
        if (k > from) body.push(COMMA);
        body.push(source.bytes.subarray(source.offsets[p]!, source.offsets[p + 1]! - 1));
      }
    } else {
      total = meta!.count - first;
      const start = Math.min(first + offset, meta!.count);
      const end = Math.min(start + limit, meta!.count);
      returned = end - start;
      if (start < end) body.push(source.bytes.subarray(source.offsets[start]!, source.offsets[end]! - 1));
    }
    const next = offset + returned;
    const head = Buffer.from(
      `{"ok":true,"total":${total},"limit":${limit},"offset":${offset},"has_more":${next < total},"next_offset":${next},"items":[`,
    );
    void send(res, `"${meta!.publicId}.${limit}.${offset}.${url.search.length}"`, gzipIt, [head, ...body, ITEMS_CLOSE]);
    return;
  }
  if (url.pathname === LIST_PATH) {
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const sinceText = url.searchParams.get('updated_since');
    const first = sinceText === null ? 0 : firstPositionSince(meta!, Date.parse(sinceText));
    const total = meta.count - first;
    const start = Math.min(first + offset, meta.count);
    const end = Math.min(start + limit, meta.count);
    const next = offset + (end - start);
    const head = Buffer.from(
      `{"ok":true,"total":${total},"limit":${limit},"offset":${offset},"has_more":${next < total},"next_offset":${next},"items":[`,
    );
    const page = start < end ? items.subarray(offsets[start]!, offsets[end]! - 1) : Buffer.alloc(0);
    void send(res, `"${meta.publicId}.${limit}.${offset}"`, gzipIt, [head, page, ITEMS_CLOSE]);
    return;
  }
  if (url.pathname.startsWith(DETAIL_PREFIX)) {
    const p = idToPos.get(decodeURIComponent(url.pathname.slice(DETAIL_PREFIX.length)));
    if (p === undefined) return fail(res, 404);
    const item = items.subarray(offsets[p]!, offsets[p + 1]! - 1);
    void send(res, `"${meta.publicId}.${p}"`, gzipIt, [ITEM_HEAD, item, ITEM_CLOSE]);
    return;
  }
  fail(res, 404);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(args.port), '127.0.0.1', () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
