/**
 * The documented operations of /v1, as route schemas for @fastify/swagger.
 *
 * An operation's schema names it (`operationId`, tags, summary, security) and
 * carries its OpenAPI parameters and responses as they should appear, under
 * `x-parameters` and `x-responses`: shared pieces come from api-components.ts
 * and become `$ref`s to `#/components/...`. The document's transform
 * (docs/openapi-transform.ts) puts them in place and adds each GET's `HEAD`
 * twin. To add an operation: build it with `readOperation()` and pass it as
 * the route's `schema` with DOC_ONLY.
 *
 * Errors come from ERROR_CATALOG, so a code added there is documented on
 * every read until it is excluded here (or in UNDOCUMENTED_CODES) on purpose.
 */
import type { Kind } from '../../domain/kinds.js';
import type { SandboxSnapshots } from '../../sandbox/sandbox-snapshots.js';
import type { ErrorCode } from '../errors.js';
import { errorResponses, idErpParameter, notModified, okHeaders, parameters, schemaRef, type Caching, type ParameterId } from './api-components.js';
import { estadoExamples, sandboxExamples, type KindExamples } from './api-examples.js';
import { DOCUMENTED_CODES, schemaNames } from './api-schemas.js';
import { sandboxEvents } from '../../sandbox/sandbox-events.js';
import { subsetParameters } from './subset-docs.js';

/**
 * Route options that keep the schemas as documentation only: Fastify neither
 * validates with them (list-query.ts does, with the contract's messages) nor
 * serializes with them (the routes send pre-rendered bytes).
 */
export const DOC_ONLY = {
  validatorCompiler: () => () => true,
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
};

/** Marks the route's GET for a documented `HEAD` twin (docs/openapi-transform.ts). */
export const HEAD_TWIN = 'x-head';

const NEVER_ON_SANDBOX: readonly ErrorCode[] = ['auth_required', 'unauthorized'];
const NEVER_ON_LISTS: readonly ErrorCode[] = ['not_found'];
// Reads no query parameters, so none can be invalid and no snapshot can expire under it.
const NEVER_WITHOUT_QUERY: readonly ErrorCode[] = ['invalid_parameter', 'snapshot_expired'];

/** The error codes a read can answer with. */
export function readCodes(o: { sandbox: boolean; query: boolean; record: boolean }): ErrorCode[] {
  const excluded = new Set([
    ...(o.sandbox ? NEVER_ON_SANDBOX : []),
    ...(o.query ? [] : NEVER_WITHOUT_QUERY),
    ...(o.record ? [] : NEVER_ON_LISTS),
  ]);
  return DOCUMENTED_CODES.filter((c) => !excluded.has(c));
}

const SECURITY_REAL = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

export interface ReadOperation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  /** No key, public caching: the sandbox. */
  sandbox: boolean;
  /** Shared parameters by name, then inline ones (a path parameter with its example). */
  parameters: (ParameterId | object)[];
  ok: { description: string; schema: string; examples: Record<string, unknown> };
  caching: Caching;
  errors: readonly ErrorCode[];
}

/** The route schema of a GET that reads data: 200, 304 and its errors, plus a HEAD twin. */
export function readOperation(op: ReadOperation): Record<string, unknown> {
  return {
    operationId: op.operationId,
    tags: op.tags,
    summary: op.summary,
    description: op.description,
    security: op.sandbox ? [] : SECURITY_REAL,
    'x-parameters': op.parameters.flatMap((p) => (typeof p === 'string' ? parameters(p as ParameterId) : [p])),
    'x-responses': {
      200: {
        description: op.ok.description,
        headers: okHeaders(op.caching),
        content: { 'application/json': { schema: schemaRef(op.ok.schema), examples: op.ok.examples } },
      },
      304: notModified(op.caching),
      ...errorResponses(op.errors),
    },
    [HEAD_TWIN]: true,
  };
}

const LABEL: Record<Kind, string> = {
  clientes: 'customers',
  articulos: 'products',
  obras: 'projects',
  'avisos-correctivo': 'corrective-maintenance notices',
};

const ID_NAME: Record<Kind, string> = {
  clientes: 'Cliente',
  articulos: 'Articulo',
  obras: 'Obra',
  'avisos-correctivo': 'AvisoCorrectivo',
};
const LIST_NAME: Record<Kind, string> = {
  clientes: 'Clientes',
  articulos: 'Articulos',
  obras: 'Obras',
  'avisos-correctivo': 'AvisosCorrectivo',
};

const READ_HEADERS: ParameterId[] = ['If-None-Match', 'X-Request-Id'];
const LIST_QUERY: ParameterId[] = ['limit', 'offset', 'updated_since', 'include_deleted', 'snapshot'];

export interface ApiDocs {
  estado(sandbox: boolean): Record<string, unknown>;
  eventos(sandbox: boolean): Record<string, unknown>;
  list(kind: Kind, sandbox: boolean): Record<string, unknown>;
  detail(kind: Kind, sandbox: boolean): Record<string, unknown>;
  /** A related-record list: `child` filtered on `field` = the parent's id_erp (contract §6). */
  related(parent: Kind, child: Kind, field: string, sandbox: boolean): Record<string, unknown>;
}

export function apiDocs(sandboxData: SandboxSnapshots): ApiDocs {
  const examples: Record<Kind, KindExamples> = sandboxExamples(sandboxData);
  const estado = estadoExamples(sandboxData);
  const where = (sandbox: boolean) =>
    sandbox ? 'Sandbox: fixed fictitious data, no key needed. Replace `/v1/sandbox/` with `/v1/` and add a key to read real data.' : 'Needs an API key.';

  return {
    estado(sandbox) {
      return readOperation({
        operationId: sandbox ? 'getSandboxEstado' : 'getEstado',
        tags: ['estado'],
        summary: `How fresh the data is${sandbox ? ' (sandbox)' : ''}`,
        description:
          'Per kind: the record count, when the live data was published and its snapshot id. A dashboard can show ' +
          `"data as of…" from it, and a sync can skip a kind whose snapshot has not changed. ${where(sandbox)}`,
        sandbox,
        parameters: READ_HEADERS,
        ok: {
          description: 'The state of every kind.',
          schema: sandbox ? 'SandboxEstado' : 'Estado',
          examples: {
            sandbox: {
              summary: sandbox ? 'GET /v1/sandbox/estado' : 'The state of every kind (the sandbox’s, without `sandbox`)',
              value: sandbox ? estado.sandbox : estado.real,
            },
          },
        },
        caching: sandbox ? 'public' : 'revalidate',
        errors: readCodes({ sandbox, query: false, record: false }),
      });
    },

    eventos(sandbox) {
      const feed = sandboxEvents();
      const page = { ok: true, ...(sandbox ? { sandbox: true } : {}), total: feed.bodies.length, limit: 2, offset: 0, has_more: true, next_offset: 2, items: feed.bodies.slice(0, 2).map((b) => JSON.parse(b) as unknown) };
      return readOperation({
        operationId: sandbox ? 'listSandboxEventos' : 'listEventos',
        tags: ['events'],
        summary: `List events${sandbox ? ' (sandbox)' : ''}`,
        description:
          'What happened to the data: one event per import that ended (`import.published`, `import.held`, `import.failed`), ' +
          'oldest first, kept at least 30 days. With `updated_since` (on `created_at`) it reads like a change feed of imports; ' +
          'the same events can be pushed to you as signed webhooks (see `webhooks`). ' +
          (sandbox ? 'Sandbox: fixed fictitious events, no key needed.' : 'Needs an API key.'),
        sandbox,
        parameters: ['limit', 'offset', 'updated_since', ...READ_HEADERS],
        ok: {
          description: 'A page of events.',
          schema: sandbox ? 'SandboxEventList' : 'EventList',
          examples: { sandbox: { summary: sandbox ? 'GET /v1/sandbox/eventos?limit=2' : 'A page with limit=2 (sandbox events)', value: page } },
        },
        caching: sandbox ? 'public' : 'revalidate',
        errors: readCodes({ sandbox, query: true, record: false }).filter((c) => c !== 'snapshot_expired'),
      });
    },

    list(kind, sandbox) {
      const ex = examples[kind];
      return readOperation({
        operationId: `list${sandbox ? 'Sandbox' : ''}${LIST_NAME[kind]}`,
        tags: [kind],
        summary: `List ${kind}${sandbox ? ' (sandbox)' : ''}`,
        description:
          `A page of ${LABEL[kind]}, ordered by \`actualizado_at\` then \`id_erp\`. Follow \`next_offset\` while ` +
          `\`has_more\` is true; with \`updated_since\` the list reads like a change feed. ${where(sandbox)}`,
        sandbox,
        parameters: [...LIST_QUERY, ...subsetParameters(kind), ...READ_HEADERS],
        ok: {
          description: 'A page of records.',
          schema: schemaNames.list(kind, sandbox),
          examples: {
            sandbox: {
              summary: sandbox ? `GET /v1/sandbox/${kind}?limit=2` : `A page with limit=2 (sandbox records)`,
              value: sandbox ? ex.sandboxList : ex.list,
            },
            ...(sandbox
              ? {
                  withDeleted: {
                    summary: `GET /v1/sandbox/${kind}?updated_since=${ex.deletedSince}&include_deleted=true`,
                    description: 'Changes since an import, with the records it removed as tombstones.',
                    value: ex.sandboxDeletedList,
                  },
                }
              : {}),
          },
        },
        caching: sandbox ? 'public' : 'private',
        errors: readCodes({ sandbox, query: true, record: false }),
      });
    },

    detail(kind, sandbox) {
      const ex = examples[kind];
      return readOperation({
        operationId: `get${sandbox ? 'Sandbox' : ''}${ID_NAME[kind]}`,
        tags: [kind],
        summary: `Get one of ${kind} by id_erp${sandbox ? ' (sandbox)' : ''}`,
        description: `One of the ${LABEL[kind]}, by its \`id_erp\`. ${where(sandbox)}`,
        sandbox,
        parameters: [idErpParameter(ex.firstId), ...subsetParameters(kind, false), ...READ_HEADERS],
        ok: {
          description: 'The record.',
          schema: schemaNames.detail(kind, sandbox),
          examples: {
            sandbox: {
              summary: sandbox ? `GET /v1/sandbox/${kind}/${ex.firstId}` : 'A record (from the sandbox)',
              value: sandbox ? ex.sandboxDetail : ex.detail,
            },
          },
        },
        caching: sandbox ? 'public' : 'private',
        // `fields` can be a 400; no snapshot is read, so none can expire.
        errors: readCodes({ sandbox, query: true, record: true }).filter((c) => c !== 'snapshot_expired'),
      });
    },

    related(parent, child, field, sandbox) {
      const ex = examples[child];
      return readOperation({
        operationId: `list${sandbox ? 'Sandbox' : ''}${ID_NAME[parent]}${LIST_NAME[child]}`,
        tags: [child],
        summary: `List the ${child} of one of ${parent}${sandbox ? ' (sandbox)' : ''}`,
        description:
          `The ${LABEL[child]} whose \`${field}\` is this record's \`id_erp\`: the list of ${child} filtered on it, with every ` +
          `list parameter and filter. \`404 not_found\` when the ${parent} record does not exist. ${where(sandbox)}`,
        sandbox,
        parameters: [idErpParameter(examples[parent].firstId), ...LIST_QUERY, ...subsetParameters(child), ...READ_HEADERS],
        ok: {
          description: 'A page of records.',
          schema: schemaNames.list(child, sandbox),
          examples: { sandbox: { summary: `A page with limit=2 (sandbox records)`, value: sandbox ? ex.sandboxList : ex.list } },
        },
        caching: sandbox ? 'public' : 'private',
        errors: readCodes({ sandbox, query: true, record: true }),
      });
    },
  };
}
