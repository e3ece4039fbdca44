/**
 * The /v1 API (contract §1): lists and details of each kind, real and
 * sandbox. A list is the envelope written around item bytes read from the
 * snapshot's chunks; nothing is parsed or stringified per item.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KINDS, type Kind } from '../../domain/kinds.js';
import type { RecordRef, SnapshotMeta, Store } from '../../store/store.js';
import type { SandboxSnapshots } from '../../sandbox/sandbox-snapshots.js';
import type { CredentialsCache } from '../credentials-cache.js';
import { ApiError, sendError } from '../errors.js';
import { authenticate } from './api-auth.js';
import { parseListQuery, type ListQuery } from './list-query.js';
import { sendCacheable, type CompressedBodyCache } from './send-body.js';
import { firstPositionSince, readItems, type ChunkSource } from './snapshot-reader.js';

export interface ApiDeps {
  store: Store;
  credentials: CredentialsCache;
  chunkSource: ChunkSource;
  sandbox: SandboxSnapshots;
  compressed: CompressedBodyCache;
}

const REAL_CACHE = 'private, max-age=300';
const REAL_VARY = 'Authorization, X-API-Key, Accept-Encoding';
const SANDBOX_CACHE = 'public, max-age=3600';
const SANDBOX_VARY = 'Accept-Encoding';
const ITEMS_CLOSE = Buffer.from(']}');
const ITEM_CLOSE = Buffer.from('}');

export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

interface View {
  meta: SnapshotMeta | null;
  source: ChunkSource;
  sandbox: boolean;
  /** The record a detail asked for, when the view looked it up already. */
  record?: RecordRef | null;
}

export function registerApiRoutes(app: FastifyInstance, deps: ApiDeps) {
  const otherMethods = app.supportedMethods.filter((m) => !['GET', 'HEAD', 'OPTIONS'].includes(m));

  /** With `idErp` (a detail), the live snapshot and the record are looked up together. */
  const realView = async (request: FastifyRequest, kind: Kind, idErp?: string): Promise<View> => {
    const credential = await authenticate(request, deps.credentials, 'read');
    if (idErp !== undefined) {
      const live = await deps.store.findLiveRecord(credential.companyId, kind, idErp);
      const meta = live === null ? null : await deps.chunkSource.meta(live.snapshotId);
      return { meta, source: deps.chunkSource, sandbox: false, record: live?.record ?? null };
    }
    const snapshotId = await deps.store.liveSnapshotId(credential.companyId, kind);
    const meta = snapshotId === null ? null : await deps.chunkSource.meta(snapshotId);
    return { meta, source: deps.chunkSource, sandbox: false };
  };
  const sandboxView = async (_request: FastifyRequest, kind: Kind, _idErp?: string): Promise<View> => ({
    meta: deps.sandbox.byKind[kind].meta,
    source: deps.sandbox,
    sandbox: true,
  });

  for (const kind of KINDS) {
    for (const sandbox of [false, true]) {
      const base = sandbox ? `/v1/sandbox/${kind}` : `/v1/${kind}`;
      const view = sandbox ? sandboxView : realView;

      app.get(base, async (request, reply) => {
        const v = await view(request, kind);
        const query = parseListQuery(request.query as Record<string, string | string[]>);
        return sendList(request, reply, deps, v, query);
      });

      app.get<{ Params: { id_erp: string } }>(`${base}/:id_erp`, async (request, reply) => {
        const idErp = request.params.id_erp;
        const v = await view(request, kind, idErp);
        const record = v.meta === null ? null : await findRecord(deps, v, idErp);
        if (!v.meta || !record) {
          throw new ApiError('not_found', `There is no ${kind} record with id_erp "${clip(idErp)}".`);
        }
        return sendDetail(request, reply, deps, v, v.meta, record);
      });

      for (const url of [base, `${base}/:id_erp`]) {
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
            return sendError(
              reply,
              new ApiError('method_not_allowed', `Only ${ALLOWED_METHODS} are allowed on this path.`),
            );
          },
          handler: async () => undefined,
        });
      }
    }
  }
}

async function findRecord(deps: ApiDeps, v: View, idErp: string): Promise<RecordRef | null> {
  if (v.record !== undefined) return v.record;
  if (v.sandbox) return deps.sandbox.byKind[v.meta!.kind].records.get(idErp) ?? null;
  return deps.store.findRecord(v.meta!.id, idErp);
}

function sendList(request: FastifyRequest, reply: FastifyReply, deps: ApiDeps, v: View, q: ListQuery) {
  const page = listPage(v, q);
  const nextPage = page.hasMore ? listPage(v, { ...q, offset: page.nextOffset }) : null;
  return sendCacheable(request, reply, deps.compressed, {
    tag: page.tag,
    cacheControl: v.sandbox ? SANDBOX_CACHE : REAL_CACHE,
    vary: v.sandbox ? SANDBOX_VARY : REAL_VARY,
    pieces: page.pieces,
    next: nextPage ?? undefined,
  });
}

/** One page of a list: its ETag's tag and its body, read only when needed. */
function listPage(v: View, q: ListQuery) {
  const meta = v.meta;
  const count = meta?.count ?? 0;
  const first = meta && q.updatedSince !== null ? firstPositionSince(meta, q.updatedSince) : 0;
  const total = count - first;
  const start = Math.min(first + q.offset, count);
  const end = Math.min(start + q.limit, count);
  const returned = end - start;
  const nextOffset = q.offset + returned;
  const hasMore = nextOffset < total;
  return {
    tag: `${meta?.publicId ?? 'empty'}.${q.limit}.${q.offset}.${q.updatedSince ?? ''}`,
    hasMore,
    nextOffset,
    pieces: async () => {
      const head =
        `{"ok":true,${v.sandbox ? '"sandbox":true,' : ''}"total":${total},"limit":${q.limit},` +
        `"offset":${q.offset},"has_more":${hasMore},"next_offset":${nextOffset},"items":[`;
      const items = meta ? await readItems(v.source, meta, start, end) : [];
      return [Buffer.from(head), ...items, ITEMS_CLOSE];
    },
  };
}

function sendDetail(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ApiDeps,
  v: View,
  meta: SnapshotMeta,
  record: RecordRef,
) {
  return sendCacheable(request, reply, deps.compressed, {
    // The item is a function of its content and time: the tag survives imports that leave it alone.
    tag: `i${record.hash.toString('hex').slice(0, 24)}.${record.actualizadoAt.toString(36)}${v.sandbox ? '.s' : ''}`,
    cacheControl: v.sandbox ? SANDBOX_CACHE : REAL_CACHE,
    vary: v.sandbox ? SANDBOX_VARY : REAL_VARY,
    pieces: async () => {
      const head = Buffer.from(v.sandbox ? '{"ok":true,"sandbox":true,"item":' : '{"ok":true,"item":');
      const item = await readItems(v.source, meta, record.pos, record.pos + 1);
      return [head, ...item, ITEM_CLOSE];
    },
  });
}

function clip(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
