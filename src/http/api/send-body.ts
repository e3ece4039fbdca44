/**
 * Writes a cacheable JSON body: strong ETag per representation, `304` on a
 * matching `If-None-Match`, and gzip or brotli when asked for. Compressed
 * bodies are cached by ETag: bodies derive from immutable snapshots, so the
 * same ETag always means the same bytes.
 */
import { constants as zlib, createBrotliCompress, createGzip } from 'node:zlib';
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { throughZlib } from './zlib-pieces.js';
import { ClockMap } from '../../domain/clock-map.js';

export type Encoding = 'br' | 'gzip' | 'identity';

/** Picks br, then gzip, honouring q-values; identity when neither is acceptable. */
export function negotiateEncoding(header: string | undefined): Encoding {
  if (!header) return 'identity';
  let br = -1;
  let gz = -1;
  let star = -1;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (name === 'br') br = q;
    else if (name === 'gzip' || name === 'x-gzip') gz = q;
    else if (name === '*') star = q;
  }
  if (br < 0) br = star;
  if (gz < 0) gz = star;
  if (br > 0 && br >= gz) return 'br';
  if (gz > 0) return 'gzip';
  return 'identity';
}

/** True when an If-None-Match header lists `etag` (or is `*`). Weak comparison, as RFC 9110 asks. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true; // what clients send back, as is: no parsing
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/** A body as the pieces it is made of (envelope, chunk slices): never joined to be compressed. */
type Pieces = readonly Buffer[];

/** Output buffers of 64 KiB for large bodies: a 400 KB compressed page comes out in a few pieces, not in 16 KiB ones. */
const COMPRESSED_CHUNK_BYTES = 64 * 1024;
/** zlib's default, for bodies whose compressed form fits in one. */
const SMALL_COMPRESSED_CHUNK_BYTES = 16 * 1024;

/** Compresses a body given as pieces (zlib-pieces.ts: never joined first). */
function compress(pieces: Pieces, encoding: 'br' | 'gzip'): Promise<Buffer> {
  let length = 0;
  for (const p of pieces) length += p.length;
  const chunkSize = length > COMPRESSED_CHUNK_BYTES ? COMPRESSED_CHUNK_BYTES : SMALL_COMPRESSED_CHUNK_BYTES;
  const z =
    encoding === 'br'
      ? createBrotliCompress({
          chunkSize,
          params: { [zlib.BROTLI_PARAM_QUALITY]: 4, [zlib.BROTLI_PARAM_SIZE_HINT]: length },
        })
      : createGzip({ level: 6, chunkSize });
  return throughZlib(z, pieces);
}

export class CompressedBodyCache {
  /** Kept bodies; the least used leave first (CLOCK: a hit sets a flag, it moves nothing). */
  private readonly kept = new ClockMap<string, Buffer>();
  private bytes = 0;
  private readonly pending = new Map<string, Promise<Buffer>>();
  /** Prepared ahead by `prefetch` and not asked for yet: asking for one means a client is walking a list. */
  private readonly prefetched = new Set<string>();

  /** `budgetBytes`: the compressed bodies' share of CHUNK_CACHE_MB (read-cache-budget.ts). */
  constructor(readonly budgetBytes: number) {}

  /** Bytes of the bodies held now (those under way count once they are made). */
  get cachedBytes(): number {
    return this.bytes;
  }

  /** Whether `key` is compressed and cached (not merely under way). */
  cached(key: string): boolean {
    return this.kept.has(key);
  }

  /** The cached body of `key`, as `get` would give it, or undefined when it is not cached. */
  peek(key: string): Buffer | undefined {
    return this.kept.get(key);
  }

  /**
   * The compressed body under `key`, compressing `body` on a miss; for gzip,
   * `gzip` (when given) makes the body instead: a list page assembled from
   * precompressed segments.
   */
  async get(
    key: string,
    encoding: 'br' | 'gzip',
    body: () => Pieces | Promise<Pieces>,
    gzip?: () => Promise<Buffer>,
  ): Promise<Buffer> {
    const hit = this.peek(key);
    if (hit) return hit;
    let p = this.pending.get(key);
    if (!p) {
      p = encoding === 'gzip' && gzip ? gzip() : Promise.resolve(body()).then((pieces) => compress(pieces, encoding));
      p.then((out) => this.remember(key, out), () => {}).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }

  /** Starts compressing `key` in the background unless it is cached or under way. */
  prefetch(key: string, encoding: 'br' | 'gzip', body: () => Promise<Pieces>, gzip?: () => Promise<Buffer>): void {
    if (this.kept.has(key) || this.pending.has(key)) return;
    this.prefetched.add(key);
    this.get(key, encoding, body, gzip).catch(() => this.prefetched.delete(key));
  }

  /** Whether `key` was prepared by `prefetch` and this is the first time it is asked for. */
  takePrefetched(key: string): boolean {
    return this.prefetched.delete(key);
  }

  private remember(key: string, value: Buffer) {
    if (value.length > this.budgetBytes) {
      this.prefetched.delete(key);
      return;
    }
    this.kept.set(key, value);
    this.bytes += value.length;
    while (this.bytes > this.budgetBytes) {
      const [k, v] = this.kept.evict()!;
      this.prefetched.delete(k);
      this.bytes -= v.length;
    }
  }
}

/** Rate accounting: a 304 is only observed, a body is charged (and may be refused). */
export interface Meter {
  charge(): Promise<void>;
  observe(): Promise<void>;
  /** `charge` without a promise: false, with nothing counted, when it cannot be told now or would refuse. */
  chargeNow(): boolean;
  /** `observe` without a promise: false, with nothing set, when it cannot be told now. */
  observeNow(): boolean;
}

export interface CacheableBody {
  /** The identity representation's opaque tag, without quotes. */
  tag: string;
  cacheControl: string;
  vary: string;
  /** The body as pieces; only called when a body is actually sent. */
  pieces: () => Buffer[] | Promise<Buffer[]>;
  /** The same pieces when they are in memory (no promise); undefined when they are not. */
  cachedPieces?: () => Buffer[] | undefined;
  /**
   * The gzip body made another way than by compressing `pieces` (a list page
   * assembled from its chunks' precompressed segments); it must gunzip to
   * exactly `pieces`. Its ETag is the same as if `pieces` were compressed.
   */
  gzip?: () => Promise<Buffer>;
  meter?: Meter;
  /**
   * The body a client is likely to ask for next (the next page of a list).
   * When this body had to be compressed, the next one is compressed in the
   * background meanwhile: a client following `next_offset` finds it ready.
   */
  next?: { tag: string; pieces: () => Promise<Buffer[]>; gzip?: () => Promise<Buffer> };
}

export async function sendCacheable(
  request: FastifyRequest,
  reply: FastifyReply,
  compressed: CompressedBodyCache,
  body: CacheableBody,
): Promise<FastifyReply> {
  const encoding = negotiateEncoding(request.headers['accept-encoding']);
  // Every representation has its own strong ETag; small bodies are compressed
  // too, so that the tag a client holds always matches what it will be sent.
  const etag = etagOf(body.tag, encoding);
  if (etagMatches(request.headers['if-none-match'], etag)) {
    await body.meter?.observe();
    return sendNotModified(reply, body, etag);
  }
  await body.meter?.charge();
  if (encoding === 'identity') return sendBody(reply, body, etag, await body.pieces());
  // A page that was not ready, or was prepared ahead, is likely one of a client walking
  // through a list: the next page is prepared meanwhile, so a walk stays one page ahead.
  const prepared = compressed.takePrefetched(etag);
  const walking = prepared || !compressed.cached(etag);
  const out = await compressed.get(etag, encoding, body.pieces, body.gzip);
  if (walking && body.next) compressed.prefetch(etagOf(body.next.tag, encoding), encoding, body.next.pieces, body.next.gzip);
  return sendCompressed(reply, body, etag, encoding, out);
}

/**
 * `sendCacheable` without a promise, for a request whose answer is all in
 * memory: its body's pieces (or its compressed form) and its rate count.
 * Returns false, having set and counted nothing, when something is not: the
 * caller then takes `sendCacheable`. The same answer either way, headers
 * included; a detail or a 304 answered here costs no promise at all.
 */
export function sendCacheableNow(request: FastifyRequest, reply: FastifyReply, compressed: CompressedBodyCache, body: CacheableBody): boolean {
  const encoding = negotiateEncoding(request.headers['accept-encoding']);
  const etag = etagOf(body.tag, encoding);
  if (etagMatches(request.headers['if-none-match'], etag)) {
    if (body.meter && !body.meter.observeNow()) return false;
    sendNotModified(reply, body, etag);
    return true;
  }
  if (encoding === 'identity') {
    const pieces = body.cachedPieces?.();
    if (!pieces || (body.meter && !body.meter.chargeNow())) return false;
    sendBody(reply, body, etag, pieces);
    return true;
  }
  // A list page prepared ahead goes the promise way, which prepares the next one.
  if (body.next) return false;
  const out = compressed.peek(etag);
  if (!out || (body.meter && !body.meter.chargeNow())) return false;
  sendCompressed(reply, body, etag, encoding, out);
  return true;
}

/** The caching headers every answer of a cacheable body carries, 304 or not. */
function cacheHeaders(reply: FastifyReply, body: CacheableBody, etag: string): void {
  // Names in lowercase, as Fastify stores and sends them: one given so costs no new string and no lookup to intern it.
  reply.header('cache-control', body.cacheControl);
  reply.header('vary', body.vary);
  reply.header('etag', etag);
}

function sendNotModified(reply: FastifyReply, body: CacheableBody, etag: string): FastifyReply {
  cacheHeaders(reply, body, etag);
  return reply.code(304).send();
}

function sendBody(reply: FastifyReply, body: CacheableBody, etag: string, pieces: readonly Buffer[]): FastifyReply {
  cacheHeaders(reply, body, etag);
  reply.header('content-type', 'application/json; charset=utf-8');
  return sendPieces(reply, pieces);
}

function sendCompressed(reply: FastifyReply, body: CacheableBody, etag: string, encoding: 'br' | 'gzip', out: Buffer): FastifyReply {
  cacheHeaders(reply, body, etag);
  reply.header('content-type', 'application/json; charset=utf-8');
  reply.header('content-encoding', encoding);
  return reply.send(out);
}

/** Every representation has its own strong ETag. */
const etagOf = (tag: string, enc: Encoding) => `"${enc === 'identity' ? tag : `${tag}-${enc}`}"`;

/** Bodies at least this large, in several pieces, are written piece by piece instead of joined. */
const WRITE_PIECES_FROM_BYTES = 16 * 1024;

/**
 * Sends a body given as pieces (envelope, zero-copy views of cached chunks).
 * Joining a list page of hundreds of KB into one Buffer, as `reply.send`
 * needs, costs about as much as sending it; so large bodies go out as one
 * corked write of their pieces, straight to the socket. Fastify's onSend
 * hooks do not run for those (the API registers none: headers are set on the
 * reply before this point, and onResponse hooks still run).
 */
export function sendPieces(reply: FastifyReply, pieces: readonly Buffer[]): FastifyReply {
  let length = 0;
  for (const p of pieces) length += p.length;
  if (pieces.length === 1) return reply.send(pieces[0]);
  if (length < WRITE_PIECES_FROM_BYTES) return reply.send(Buffer.concat(pieces, length));
  reply.header('content-length', length);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(reply.statusCode, reply.getHeaders() as OutgoingHttpHeaders);
  // For HEAD, node:http drops the writes and sends the headers alone.
  res.socket?.cork();
  for (let i = 0; i < pieces.length - 1; i++) res.write(pieces[i]);
  res.end(pieces[pieces.length - 1]);
  res.socket?.uncork();
  return reply;
}
