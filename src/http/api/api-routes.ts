/**
 * The /v1 API (contract §1): lists and details of each kind, real and
 * sandbox. A list is the envelope written around item bytes read from the
 * snapshot's chunks; nothing is parsed or stringified per item.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KINDS, type Kind } from '../../domain/kinds.js';
import type { RecordRef, SnapshotMeta, Store } from '../../store/store.js';
import type { SandboxSnapshots } from '../../sandbox/sandbox-snapshots.js';
import type { CredentialsCache } from '../credentials-cache.js';
import type { RateLimiter } from '../rate-limit.js';
import { ApiError, sendError } from '../errors.js';
import { authenticate, presentedToken } from './api-auth.js';
import { ALLOWED_METHODS } from './api-components.js';
import { apiDocs, DOC_ONLY } from './api-docs.js';
import { parseListQuery, type ListQuery } from './list-query.js';
import { parseSubset, type EqualFilter, type Subset } from './subset-query.js';
import type { MatchCache } from './subset-page.js';
import type { TombstoneCache } from './tombstone-cache.js';
import { sendCacheable, sendCacheableNow, type CompressedBodyCache, type Meter } from './send-body.js';
import type { CachedChunkSource } from './cached-chunk-source.js';
import type { RenderedTombstone } from './merged-page.js';
import { RELATED } from './subset-docs.js';
import { clip, detailBody, listPage, REAL_CACHE, REAL_VARY, SANDBOX_CACHE, SANDBOX_VARY, type SubsetCaches, type View } from './api-pages.js';
import type { ProjectionCache } from './thin-projection.js';

export interface ApiDeps {
  store: Store;
  credentials: CredentialsCache;
  chunkSource: CachedChunkSource;
  sandbox: SandboxSnapshots;
  compressed: CompressedBodyCache;
  /** Matches of recent filters, thin items trimmed to field sets, and rendered tombstones: with `chunkSource` and `compressed`, within CHUNK_CACHE_MB (read-cache-budget.ts). */
  matches: MatchCache;
  projections: ProjectionCache;
  tombstones: TombstoneCache;
  /** Per API key. */
  keyLimiter: RateLimiter;
  /** Per client address, for the sandbox. */
  sandboxLimiter: RateLimiter;
  /** How long a superseded snapshot can still be pinned with `snapshot=`. */
  snapshotRetentionMs: number;
}



/** One request's rate accounting against one subject (a key, or a sandbox client's address). */
class RequestMeter implements Meter {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly reply: FastifyReply,
    private readonly subject: string,
  ) {}

  charge() {
    return this.limiter.charge(this.reply, this.subject);
  }

  observe() {
    return this.limiter.observe(this.reply, this.subject);
  }

  chargeNow() {
    return this.limiter.chargeNow(this.reply, this.subject);
  }

  observeNow() {
    return this.limiter.observeNow(this.reply, this.subject);
  }
}

/** Runs `fn`; an error it throws is charged to the rate limit first (bad requests are not free). */
async function charged<T>(v: View, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    await v.meter.charge();
    throw err;
  }
}

export function registerApiRoutes(app: FastifyInstance, deps: ApiDeps) {
  const otherMethods = app.supportedMethods.filter((m) => !['GET', 'HEAD', 'OPTIONS'].includes(m));
  const docs = apiDocs(deps.sandbox);

  /** With `idErp` (a detail), the live snapshot and the record are looked up together. */
  const realView = async (request: FastifyRequest, reply: FastifyReply, kind: Kind, idErp?: string): Promise<View> => {
    const credential = await authenticate(request, deps.credentials, 'read');
    const meter = new RequestMeter(deps.keyLimiter, reply, `key:${credential.prefix}`);
    if (idErp !== undefined) {
      // The record from the snapshot's RecordIndex when it is loaded, else one indexed read.
      const snapshotId = await deps.store.liveSnapshotId(credential.companyId, kind);
      const meta = snapshotId === null ? null : await deps.chunkSource.meta(snapshotId);
      const record = meta === null ? null : await deps.chunkSource.record(meta, idErp);
      return { meta, source: deps.chunkSource, sandbox: false, companyId: credential.companyId, meter, record };
    }
    const snapshotId = await deps.store.liveSnapshotId(credential.companyId, kind);
    const meta = snapshotId === null ? null : await deps.chunkSource.meta(snapshotId);
    return {
      meta,
      source: deps.chunkSource,
      sandbox: false,
      companyId: credential.companyId,
      meter,
    };
  };
  /**
   * A real detail answered synchronously when all it needs is in memory: the
   * key's cached entry, the live record's position, the snapshot's meta and
   * chunk, the compressed body if one is asked for, an in-process rate count.
   * False, with nothing sent or counted, otherwise.
   */
  const detailNow = (request: FastifyRequest<{ Params: { id_erp: string } }>, reply: FastifyReply, kind: Kind): boolean => {
    // A trimmed item (`fields=`) is put together from its pieces: the general path.
    if ((request.query as Record<string, unknown>).fields !== undefined) return false;
    let token: string | null;
    try {
      token = presentedToken(request);
    } catch {
      return false; // a malformed header: the general path answers it
    }
    const credential = token === null ? null : deps.credentials.verifyCached(token, 'read');
    if (!credential) return false;
    const snapshotId = deps.store.cachedLiveSnapshotId(credential.companyId, kind);
    if (snapshotId === null || snapshotId === undefined) return false;
    const meta = deps.chunkSource.cachedMeta(snapshotId);
    if (!meta) return false;
    const record = deps.chunkSource.cachedRecord(meta, request.params.id_erp);
    if (!record) return false;
    const v: View = {
      meta,
      source: deps.chunkSource,
      sandbox: false,
      companyId: credential.companyId,
      meter: new RequestMeter(deps.keyLimiter, reply, `key:${credential.prefix}`),
    };
    request.credential = credential;
    return sendCacheableNow(request, reply, deps.compressed, detailBody(v, meta, record));
  };

  const sandboxView = async (request: FastifyRequest, reply: FastifyReply, kind: Kind, _idErp?: string): Promise<View> => ({
    meta: deps.sandbox.byKind[kind].meta,
    source: deps.sandbox,
    sandbox: true,
    companyId: null,
    meter: new RequestMeter(deps.sandboxLimiter, reply, `ip:${request.ip}`),
  });

  /** The snapshot a `snapshot=` parameter names, while it is kept; else 410. */
  const pinned = async (v: View, kind: Kind, publicId: string): Promise<SnapshotMeta> => {
    if (v.sandbox) {
      if (v.meta && v.meta.publicId === publicId) return v.meta;
      throw new ApiError('snapshot_expired');
    }
    const ref = await deps.store.snapshotByPublicId(v.companyId!, kind, publicId);
    const expired =
      !ref ||
      ref.state === 'staged' ||
      (ref.state === 'superseded' && (ref.supersededAt ?? 0) + deps.snapshotRetentionMs < Date.now());
    const meta = expired ? null : await deps.chunkSource.meta(ref.id);
    if (!meta) throw new ApiError('snapshot_expired');
    return meta;
  };

  const caches: SubsetCaches = { matches: deps.matches, projections: deps.projections };
  const tombstonesOf = (v: View, meta: SnapshotMeta): Promise<RenderedTombstone[]> =>
    v.sandbox ? Promise.resolve(deps.sandbox.byKind[meta.kind].tombstones) : deps.tombstones.of(meta.id);

  /** A list, or (with `given`) a related-record list filtered on its parent. */
  const list = async (request: FastifyRequest, reply: FastifyReply, v: View, kind: Kind, given?: EqualFilter, parent?: () => Promise<void>) => {
    const raw = request.query as Record<string, string | string[]>;
    const query = await charged(v, () => parseListQuery(raw));
    const subset = await charged(v, () => parseSubset(raw, kind, true, given));
    if (parent) await charged(v, parent);
    const meta = query.snapshot === null ? v.meta : await charged(v, () => pinned(v, kind, query.snapshot!));
    const tombstones = query.includeDeleted && meta ? await tombstonesOf(v, meta) : null;
    return sendList(request, reply, deps, { ...v, meta }, query, subset, tombstones, caches);
  };

  for (const { parent, child, field } of RELATED) {
    for (const sandbox of [false, true]) {
      const url = `${sandbox ? '/v1/sandbox' : '/v1'}/${parent}/:id_erp/${child}`;
      app.get<{ Params: { id_erp: string } }>(url, { ...DOC_ONLY, schema: docs.related(parent, child, field, sandbox) }, async (request, reply) => {
        const v = await (sandbox ? sandboxView : realView)(request, reply, child);
        const idErp = request.params.id_erp;
        const exists = async () => {
          const found = sandbox
            ? deps.sandbox.byKind[parent].records.has(idErp)
            : Boolean((await deps.store.findLiveRecord(v.companyId!, parent, idErp))?.record);
          if (!found) throw new ApiError('not_found', `There is no ${parent} record with id_erp "${clip(idErp)}".`);
        };
        return list(request, reply, v, child, { field, values: [idErp] }, exists);
      });
      registerOtherMethods(app, url, otherMethods);
    }
  }

  for (const sandbox of [false, true]) {
    const base = sandbox ? '/v1/sandbox' : '/v1';
    app.get(`${base}/estado`, { ...DOC_ONLY, schema: docs.estado(sandbox) }, async (request, reply) => {
      const { meter, companyId } = await (sandbox ? sandboxView : realView)(request, reply, 'clientes');
      const kinds: Record<string, { total: number; importado_at: string | null; snapshot: string | null }> = {};
      for (const kind of KINDS) {
        const meta = sandbox
          ? deps.sandbox.byKind[kind].meta
          : await liveMeta(deps, companyId!, kind);
        kinds[kind] = {
          total: meta?.count ?? 0,
          importado_at: meta?.publishedAt ? new Date(meta.publishedAt).toISOString() : null,
          snapshot: meta?.publicId ?? null,
        };
      }
      const body = Buffer.from(JSON.stringify(sandbox ? { ok: true, sandbox: true, kinds } : { ok: true, kinds }));
      return sendCacheable(request, reply, deps.compressed, {
        tag: `e${createHash('sha1').update(body).digest('hex').slice(0, 20)}`,
        cacheControl: sandbox ? SANDBOX_CACHE : 'private, max-age=0, must-revalidate',
        vary: sandbox ? SANDBOX_VARY : REAL_VARY,
        meter,
        pieces: () => [body],
      });
    });
    registerOtherMethods(app, `${base}/estado`, otherMethods);
  }

  for (const kind of KINDS) {
    for (const sandbox of [false, true]) {
      const base = sandbox ? `/v1/sandbox/${kind}` : `/v1/${kind}`;
      const view = sandbox ? sandboxView : realView;

      app.get(base, { ...DOC_ONLY, schema: docs.list(kind, sandbox) }, async (request, reply) => {
        const v = await view(request, reply, kind);
        return list(request, reply, v, kind);
      });

      const detail = async (request: FastifyRequest<{ Params: { id_erp: string } }>, reply: FastifyReply) => {
        const idErp = request.params.id_erp;
        const v = await view(request, reply, kind, idErp);
        const subset = await charged(v, () => parseSubset(request.query as Record<string, string | string[]>, kind, false));
        const record = await charged(v, async () => {
          const found = v.meta === null ? null : await findRecord(deps, v, idErp);
          if (!found) throw new ApiError('not_found', `There is no ${kind} record with id_erp "${clip(idErp)}".`);
          return found;
        });
        return sendCacheable(request, reply, deps.compressed, detailBody(v, v.meta!, record, subset, caches.projections));
      };
      // Most details and 304s are answered from memory with no promise (detailNow); the rest,
      // errors included, take the general path from the start.
      app.get<{ Params: { id_erp: string } }>(`${base}/:id_erp`, { ...DOC_ONLY, schema: docs.detail(kind, sandbox) }, (request, reply) => {
        if (!sandbox && detailNow(request, reply, kind)) return;
        return detail(request, reply);
      });

      for (const url of [base, `${base}/:id_erp`]) {
        registerOtherMethods(app, url, otherMethods);
      }
    }
  }
}

/**
 * OPTIONS (CORS preflight) and 405 for every other method on an API path.
 * Neither is an operation of the document: its description says how they
 * answer (issue 21, point 9: preflights once, in prose, not on 18 paths).
 */
function registerOtherMethods(app: FastifyInstance, url: string, otherMethods: string[]) {
  app.options(url, async (_request, reply) => {
    reply.header('Access-Control-Allow-Methods', ALLOWED_METHODS);
    reply.header('Access-Control-Allow-Headers', 'Authorization, X-API-Key, If-None-Match, X-Request-Id');
    reply.header('Access-Control-Max-Age', '86400');
    reply.header('Allow', ALLOWED_METHODS);
    return reply.code(204).send();
  });
  // Answered in onRequest, before any body is read or parsed.
  app.route({
    method: otherMethods,
    url,
    onRequest: async (_request, reply) => {
      reply.header('Allow', ALLOWED_METHODS);
      return sendError(reply, new ApiError('method_not_allowed', `Only ${ALLOWED_METHODS} are allowed on this path.`));
    },
    handler: async () => undefined,
  });
}

async function liveMeta(deps: ApiDeps, companyId: number, kind: Kind): Promise<SnapshotMeta | null> {
  const id = await deps.store.liveSnapshotId(companyId, kind);
  return id === null ? null : deps.chunkSource.meta(id);
}

async function findRecord(deps: ApiDeps, v: View, idErp: string): Promise<RecordRef | null> {
  if (v.record !== undefined) return v.record;
  if (v.sandbox) return deps.sandbox.byKind[v.meta!.kind].records.get(idErp) ?? null;
  return deps.store.findRecord(v.meta!.id, idErp);
}

async function sendList(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ApiDeps,
  v: View,
  q: ListQuery,
  subset: Subset,
  tombstones: readonly RenderedTombstone[] | null,
  caches: SubsetCaches,
) {
  const page = await listPage(v, q, subset, tombstones, caches);
  // A client following next_offset asks for this next: when the body is compressed, it is prepared meanwhile.
  const nextPage = page.hasMore ? await listPage(v, { ...q, offset: page.nextOffset }, subset, tombstones, caches) : null;
  return sendCacheable(request, reply, deps.compressed, {
    tag: page.tag,
    cacheControl: v.sandbox ? SANDBOX_CACHE : REAL_CACHE,
    vary: v.sandbox ? SANDBOX_VARY : REAL_VARY,
    meter: v.meter,
    pieces: page.pieces,
    gzip: page.gzip,
    next: nextPage ?? undefined,
  });
}
