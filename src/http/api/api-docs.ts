/**
 * The route schemas of /v1, as @fastify/swagger turns them into the OpenAPI
 * document: parameters, headers, every response with its headers, and
 * examples from the sandbox. Errors come from ERROR_CATALOG, so a code added
 * there is documented on every read until it is excluded here on purpose.
 */
import type { Kind } from '../../domain/kinds.js';
import type { SandboxSnapshots } from '../../sandbox/sandbox-snapshots.js';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';
import { errorExample, sandboxExamples, type KindExamples } from './api-examples.js';
import { DETAIL_PARAMS, ID_ERP_PARAM, LIST_QUERY, READ_HEADERS, ref, schemaNames } from './api-schemas.js';
import { fieldsQueryProperty, subsetQueryProperties } from './subset-docs.js';

/**
 * Route options that keep the schemas as documentation only: Fastify neither
 * validates with them (list-query.ts does, with the contract's messages) nor
 * serializes with them (the routes send pre-rendered bytes).
 */
export const DOC_ONLY = {
  validatorCompiler: () => () => true,
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
};

/** When each error happens, for the document; a code missing here is described by its catalog message. */
const WHEN: Partial<Record<ErrorCode, string>> = {
  bad_request: 'The request itself is malformed (an undecodable URL, a request the HTTP parser refuses).',
  invalid_parameter: 'A malformed, out-of-range or repeated query parameter; `message` names it and what it accepts.',
  auth_required: 'No key at all: neither header, or an empty one.',
  unauthorized: 'A key that is unknown, malformed, revoked, not Bearer, or two different keys in the two headers.',
  not_found: 'An unknown path (even without a key), or no record with this `id_erp`; `message` says which.',
  snapshot_expired: 'The `snapshot` parameter names a version that is unknown or no longer kept: start the download over without it.',
  method_not_allowed: 'A method other than GET, HEAD or OPTIONS on an API path; `Allow` lists them.',
  payload_too_large: 'An upload over `MAX_UPLOAD_BYTES` (panel uploads; the read API takes no bodies).',
  rate_limited: 'Over the request rate (per key; per client address on the sandbox). Wait `Retry-After` seconds.',
  internal_error: 'An unexpected fault. Nothing internal is revealed; retry after a few seconds.',
  unavailable: 'Storage is unreachable, or the server is shutting down. Retry after `Retry-After` seconds.',
};

const describeError = (code: ErrorCode) => WHEN[code] ?? ERROR_CATALOG[code].message;

interface HeaderDef {
  /** The header's name on the wire. */
  name: string;
  description?: string;
  required?: boolean;
  schema: Record<string, unknown>;
}

const str = (description: string) => ({ schema: { type: 'string' }, description });
const int = (description: string) => ({ schema: { type: 'integer', minimum: 0 }, description });
const only = (value: string, description?: string) => ({ schema: { type: 'string', enum: [value] }, ...(description ? { description } : {}) });

/**
 * Response headers, by component name (`#/components/headers/<id>`). Routes
 * carry the full definitions; the document's transform replaces each with a
 * reference to its component, so the 32 operations do not repeat them.
 */
const HEADER_DEFS = {
  'X-Request-Id': { name: 'X-Request-Id', required: true, ...str('This request’s id: yours when sane, else a UUID. Equals `request_id` in error bodies.') },
  ETag: { name: 'ETag', required: true, ...str('Strong validator of this exact representation (each encoding has its own).') },
  'Cache-Control-Private': { name: 'Cache-Control', required: true, ...only('private, max-age=300', 'Real data: only the client may cache it, for 5 minutes.') },
  'Cache-Control-Public': { name: 'Cache-Control', required: true, ...only('public, max-age=3600', 'Sandbox data: anyone may cache it, for an hour.') },
  'Cache-Control-Revalidate': { name: 'Cache-Control', required: true, ...only('private, max-age=0, must-revalidate', 'Freshness: revalidate every time (cheap with If-None-Match).') },
  'Cache-Control-No-Store': { name: 'Cache-Control', required: true, ...only('no-store', 'Errors are never cached.') },
  'Vary-Private': { name: 'Vary', required: true, ...only('Authorization, X-API-Key, Accept-Encoding') },
  'Vary-Public': { name: 'Vary', required: true, ...only('Accept-Encoding') },
  'Content-Encoding': { name: 'Content-Encoding', schema: { type: 'string', enum: ['gzip', 'br'] }, description: 'When `Accept-Encoding` asked for it.' },
  'RateLimit-Limit': { name: 'RateLimit-Limit', ...int('Requests allowed per minute (per key; per client address on the sandbox).') },
  'RateLimit-Remaining': { name: 'RateLimit-Remaining', ...int('Requests left in the current minute.') },
  'RateLimit-Reset': { name: 'RateLimit-Reset', ...int('Seconds until the current minute ends.') },
  'Retry-After': { name: 'Retry-After', required: true, schema: { type: 'integer', minimum: 1 }, description: 'Seconds to wait before retrying.' },
  'WWW-Authenticate': { name: 'WWW-Authenticate', required: true, ...only('Bearer') },
  Allow: { name: 'Allow', required: true, ...only('GET, HEAD, OPTIONS', 'The methods this path answers.') },
  'Access-Control-Allow-Origin': { name: 'Access-Control-Allow-Origin', required: true, ...only('*', 'Any origin may read.') },
  'Access-Control-Allow-Methods': { name: 'Access-Control-Allow-Methods', required: true, ...only('GET, HEAD, OPTIONS') },
  'Access-Control-Allow-Headers': { name: 'Access-Control-Allow-Headers', required: true, ...str('Names `Authorization` and `X-API-Key` explicitly (a `*` would not cover `Authorization`).') },
  'Access-Control-Max-Age': { name: 'Access-Control-Max-Age', ...int('Seconds a browser may keep this preflight.') },
} satisfies Record<string, HeaderDef>;

type HeaderId = keyof typeof HEADER_DEFS;

/** Marks a route's header definition with its component, for the document's transform. */
export const HEADER_COMPONENT = 'x-header-component';

/**
 * Response headers in a route schema: what @fastify/swagger expects (the
 * header's schema, with its description beside it), tagged with the component.
 */
function headers(...ids: HeaderId[]) {
  return Object.fromEntries(
    ids.map((id) => {
      const { name, description, required, schema } = HEADER_DEFS[id] as HeaderDef;
      return [name, { ...schema, ...(description ? { description } : {}), ...(required ? { required } : {}), [HEADER_COMPONENT]: id }];
    }),
  );
}

/** The OpenAPI header objects, for `#/components/headers`. */
export function headerComponents() {
  return Object.fromEntries(
    Object.entries(HEADER_DEFS).map(([id, def]: [string, HeaderDef]) => [
      id,
      { ...(def.description ? { description: def.description } : {}), ...(def.required ? { required: true } : {}), schema: def.schema },
    ]),
  );
}

const RATE_LIMIT: HeaderId[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

/** Headers an error of `code` carries; rate-limit headers appear once the request was counted. */
function errorHeaderIds(codes: readonly ErrorCode[]): HeaderId[] {
  return [
    'X-Request-Id',
    'Cache-Control-No-Store',
    ...(codes.includes('auth_required') || codes.includes('unauthorized') ? (['WWW-Authenticate'] as const) : []),
    ...(codes.includes('rate_limited') || codes.includes('unavailable') ? (['Retry-After'] as const) : []),
    ...(codes.includes('method_not_allowed') ? (['Allow'] as const) : []),
    ...RATE_LIMIT,
  ];
}

function errorContent(status: number, codes: readonly ErrorCode[], schemaRef: (name: string) => object = ref) {
  return {
    'application/json': {
      schema: schemaRef(schemaNames.error(status)),
      examples: Object.fromEntries(codes.map((c) => [c, { $ref: `#/components/examples/${c}` }])),
    },
  };
}

/** One response per status, for the codes given (in catalog order). */
function errorResponses(codes: readonly ErrorCode[]) {
  const out: Record<string, unknown> = {};
  const statuses = [...new Set(codes.map((c) => ERROR_CATALOG[c].status))].sort((a, b) => a - b);
  for (const status of statuses) {
    const here = codes.filter((c) => ERROR_CATALOG[c].status === status);
    out[status] = {
      description: here.map((c) => `\`${c}\`: ${describeError(c)}`).join(' '),
      headers: headers(...errorHeaderIds(here)),
      content: errorContent(status, here),
    };
  }
  return out;
}

/** Every code, as `#/components/responses/<code>`, for answers no operation describes (unknown paths, 405). */
export function catalogResponses() {
  const codes = Object.keys(ERROR_CATALOG) as ErrorCode[];
  return Object.fromEntries(
    codes.map((code) => [
      code,
      {
        description: `${ERROR_CATALOG[code].status} \`${code}\`: ${describeError(code)}`,
        headers: Object.fromEntries(
          errorHeaderIds([code]).map((id) => [HEADER_DEFS[id].name, { $ref: `#/components/headers/${id}` }]),
        ),
        // Components are not resolved by @fastify/swagger: point at the schema's final place.
        content: errorContent(ERROR_CATALOG[code].status, [code], (name) => ({ $ref: `#/components/schemas/${name}` })),
      },
    ]),
  );
}

export function catalogExamples() {
  return Object.fromEntries((Object.keys(ERROR_CATALOG) as ErrorCode[]).map((c) => [c, errorExample(c)]));
}

/**
 * Codes no GET can answer: 405 is for other methods, 413 for uploads, 403
 * for the panel's forms. Every
 * other catalog code is documented on every read unless excluded below.
 */
const NEVER_ON_READS: readonly ErrorCode[] = ['method_not_allowed', 'payload_too_large', 'forbidden'];
const NEVER_ON_SANDBOX: readonly ErrorCode[] = ['auth_required', 'unauthorized'];
const NEVER_ON_LISTS: readonly ErrorCode[] = ['not_found'];
// A detail reads no snapshot parameter, so no snapshot can expire under it (`fields` can be a 400).
const NEVER_ON_DETAILS: readonly ErrorCode[] = ['snapshot_expired'];

function readCodes(sandbox: boolean, detail: boolean): ErrorCode[] {
  const excluded = new Set([...NEVER_ON_READS, ...(sandbox ? NEVER_ON_SANDBOX : []), ...(detail ? NEVER_ON_DETAILS : NEVER_ON_LISTS)]);
  return (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((c) => !excluded.has(c));
}

const LABEL: Record<Kind, string> = {
  clientes: 'customers',
  articulos: 'articles',
  obras: 'works',
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

const SECURITY_REAL = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

function okHeaders(sandbox: boolean) {
  return headers(
    'X-Request-Id',
    'ETag',
    sandbox ? 'Cache-Control-Public' : 'Cache-Control-Private',
    sandbox ? 'Vary-Public' : 'Vary-Private',
    'Content-Encoding',
    ...RATE_LIMIT,
  );
}

function notModified(sandbox: boolean, cacheControl?: HeaderId) {
  return {
    type: 'null',
    description: '`If-None-Match` held this representation’s `ETag`: no body. Does not count against the rate limit.',
    headers: headers(
      'X-Request-Id',
      'ETag',
      cacheControl ?? (sandbox ? 'Cache-Control-Public' : 'Cache-Control-Private'),
      sandbox ? 'Vary-Public' : 'Vary-Private',
      ...RATE_LIMIT,
    ),
  };
}

const HEAD_NOTE = '`HEAD` answers the same without a body.';

export interface ApiDocs {
  estado(sandbox: boolean): Record<string, unknown>;
  estadoPreflight(sandbox: boolean): Record<string, unknown>;
  list(kind: Kind, sandbox: boolean): Record<string, unknown>;
  detail(kind: Kind, sandbox: boolean): Record<string, unknown>;
  preflight(kind: Kind, sandbox: boolean, detail: boolean): Record<string, unknown>;
  /** A related-record list: `child` filtered on `field` = the parent's id_erp (contract §6). */
  related(parent: Kind, child: Kind, field: string, sandbox: boolean): Record<string, unknown>;
  relatedPreflight(parent: Kind, child: Kind, sandbox: boolean): Record<string, unknown>;
}

export function apiDocs(sandboxData: SandboxSnapshots): ApiDocs {
  const examples: Record<Kind, KindExamples> = sandboxExamples(sandboxData);
  const where = (sandbox: boolean) =>
    sandbox ? 'Sandbox: fixed fictitious data, no key needed. Replace `/v1/sandbox/` with `/v1/` and add a key to read real data.' : 'Needs an API key.';

  const preflightResponse = {
    204: {
      type: 'null',
      description: 'Allowed.',
      headers: headers(
        'X-Request-Id',
        'Access-Control-Allow-Origin',
        'Access-Control-Allow-Methods',
        'Access-Control-Allow-Headers',
        'Access-Control-Max-Age',
        'Allow',
      ),
    },
  };

  return {
    estado(sandbox) {
      const codes = readCodes(sandbox, true).filter((c) => c !== 'not_found');
      return {
        operationId: sandbox ? 'getSandboxEstado' : 'getEstado',
        tags: ['estado'],
        summary: `How fresh the data is${sandbox ? ' (sandbox)' : ''}`,
        description:
          'Per kind: the record count, when the live data was published and its snapshot id. A dashboard can show ' +
          `"data as of…" from it, and a sync can skip a kind whose snapshot has not changed. ${where(sandbox)}`,
        security: sandbox ? [] : SECURITY_REAL,
        headers: READ_HEADERS,
        response: {
          200: {
            description: 'The state of every kind.',
            headers: headers(
              'X-Request-Id',
              'ETag',
              sandbox ? 'Cache-Control-Public' : 'Cache-Control-Revalidate',
              sandbox ? 'Vary-Public' : 'Vary-Private',
              'Content-Encoding',
              ...RATE_LIMIT,
            ),
            content: { 'application/json': { schema: ref(sandbox ? 'SandboxEstado' : 'Estado') } },
          },
          304: notModified(sandbox, sandbox ? 'Cache-Control-Public' : 'Cache-Control-Revalidate'),
          ...errorResponses(codes),
        },
      };
    },

    estadoPreflight(sandbox) {
      return {
        operationId: sandbox ? 'preflightSandboxEstado' : 'preflightEstado',
        tags: ['CORS'],
        summary: `CORS preflight of ${sandbox ? '/v1/sandbox/' : '/v1/'}estado`,
        description: 'Browsers send this before a cross-origin GET with a key header. Any origin may read.',
        security: [],
        response: preflightResponse,
      };
    },

    list(kind, sandbox) {
      const ex = examples[kind];
      return {
        operationId: `list${sandbox ? 'Sandbox' : ''}${LIST_NAME[kind]}`,
        tags: [kind],
        summary: `List ${kind}${sandbox ? ' (sandbox)' : ''}`,
        description:
          `A page of ${LABEL[kind]}, ordered by \`actualizado_at\` then \`id_erp\`. Follow \`next_offset\` while ` +
          `\`has_more\` is true; with \`updated_since\` the list reads like a change feed. ${where(sandbox)} ${HEAD_NOTE}`,
        security: sandbox ? [] : SECURITY_REAL,
        querystring: { ...LIST_QUERY, properties: { ...LIST_QUERY.properties, ...subsetQueryProperties(kind) } },
        headers: READ_HEADERS,
        response: {
          200: {
            description: 'A page of records.',
            headers: okHeaders(sandbox),
            content: {
              'application/json': {
                schema: ref(schemaNames.list(kind, sandbox)),
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
            },
          },
          304: notModified(sandbox),
          ...errorResponses(readCodes(sandbox, false)),
        },
      };
    },

    detail(kind, sandbox) {
      const ex = examples[kind];
      return {
        operationId: `get${sandbox ? 'Sandbox' : ''}${ID_NAME[kind]}`,
        tags: [kind],
        summary: `Get one of ${kind} by id_erp${sandbox ? ' (sandbox)' : ''}`,
        description: `One of the ${LABEL[kind]}, by its \`id_erp\`. ${where(sandbox)} ${HEAD_NOTE}`,
        security: sandbox ? [] : SECURITY_REAL,
        params: { ...DETAIL_PARAMS, properties: { id_erp: { ...ID_ERP_PARAM, examples: [ex.firstId] } } },
        querystring: { type: 'object', properties: fieldsQueryProperty(kind) },
        headers: READ_HEADERS,
        response: {
          200: {
            description: 'The record.',
            headers: okHeaders(sandbox),
            content: {
              'application/json': {
                schema: ref(schemaNames.detail(kind, sandbox)),
                examples: {
                  sandbox: {
                    summary: sandbox ? `GET /v1/sandbox/${kind}/${ex.firstId}` : 'A record (from the sandbox)',
                    value: sandbox ? ex.sandboxDetail : ex.detail,
                  },
                },
              },
            },
          },
          304: notModified(sandbox),
          ...errorResponses(readCodes(sandbox, true)),
        },
      };
    },

    related(parent, child, field, sandbox) {
      const list = this.list(child, sandbox) as { response: Record<string, unknown> } & Record<string, unknown>;
      const ex = examples[parent];
      return {
        ...list,
        operationId: `list${sandbox ? 'Sandbox' : ''}${ID_NAME[parent]}${LIST_NAME[child]}`,
        summary: `List the ${child} of one of ${parent}${sandbox ? ' (sandbox)' : ''}`,
        description:
          `The ${LABEL[child]} whose \`${field}\` is this record's \`id_erp\`: the list of ${child} filtered on it, ` +
          `with every list parameter and filter. \`404 not_found\` when the ${parent} record does not exist. ${where(sandbox)} ${HEAD_NOTE}`,
        params: { ...DETAIL_PARAMS, properties: { id_erp: { ...ID_ERP_PARAM, examples: [ex.firstId] } } },
        response: { ...list.response, ...errorResponses(['not_found']) },
      };
    },

    relatedPreflight(parent, child, sandbox) {
      return {
        operationId: `preflight${sandbox ? 'Sandbox' : ''}${ID_NAME[parent]}${LIST_NAME[child]}`,
        tags: ['CORS'],
        summary: `CORS preflight of ${sandbox ? '/v1/sandbox/' : '/v1/'}${parent}/{id_erp}/${child}`,
        description: 'Browsers send this before a cross-origin GET with a key header. Any origin may read.',
        security: [],
        params: DETAIL_PARAMS,
        response: preflightResponse,
      };
    },

    preflight(kind, sandbox, detail) {
      return {
        operationId: `preflight${sandbox ? 'Sandbox' : ''}${detail ? ID_NAME[kind] : LIST_NAME[kind]}`,
        tags: ['CORS'],
        summary: `CORS preflight of ${sandbox ? '/v1/sandbox/' : '/v1/'}${kind}${detail ? '/{id_erp}' : ''}`,
        description: 'Browsers send this before a cross-origin GET with a key header. Any origin may read.',
        security: [],
        ...(detail ? { params: DETAIL_PARAMS } : {}),
        response: preflightResponse,
      };
    },
  };
}

/** The operations other than GET/HEAD/OPTIONS answer with this; listed here so the document can say so. */
export const OTHER_METHODS_NOTE =
  'Any other method on these paths answers `405 method_not_allowed` with `Allow: GET, HEAD, OPTIONS` ' +
  '(see `#/components/responses/method_not_allowed`); an unknown path answers `404 not_found`, even without a key.';
