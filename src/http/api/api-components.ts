/**
 * The reusable pieces of the OpenAPI document: response headers, parameters,
 * error and 304 responses, error examples. Operations (api-docs.ts) use them
 * as plain objects marked with their component name; the document's transform
 * (docs/openapi-transform.ts) moves each marked object to `#/components/...`
 * once and leaves a `$ref` in its place. So an operation added later gets the
 * same shared components by calling the same functions, and a component no
 * operation uses never appears (linters flag unused components).
 */
import { DEFAULT_MAX_CELL_BYTES } from '../../imports/read-csv.js';
import { EXPOSED_HEADERS } from '../cors.js';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';
import { errorExample } from './api-examples.js';
import {
  ID_ERP_PARAM,
  INCLUDE_DELETED_PARAM,
  LIMIT_PARAM,
  OFFSET_PARAM,
  SNAPSHOT_PARAM,
  UPDATED_SINCE_PARAM,
  schemaNames,
} from './api-schemas.js';

/** The key that marks an object as a component: its value is `<section>/<name>`. */
export { COMPONENT, component, type Section } from './openapi-component.js';
import { component } from './openapi-component.js';

/** A reference to a schema under `#/components/schemas` (the shared schemas of api-schemas.ts). */
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export { EXPOSED_HEADERS };

/** Methods every API path answers; any other is a 405 with this as `Allow`. */
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

/** What the server keeps from an incoming `X-Request-Id`; anything else is replaced by a UUID. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Node's limit on the request head (16 KiB): no header value can be longer; beyond it, 431. */
export const MAX_HEADER_BYTES = 16 * 1024;

const INT32_MAX = 2_147_483_647;

const str = (description: string, maxLength: number, extra: object = {}) => ({
  schema: { type: 'string', maxLength, ...extra },
  description,
});
const int = (description: string, maximum = INT32_MAX) => ({
  schema: { type: 'integer', format: 'int32', minimum: 0, maximum },
  description,
});
const only = (value: string, description: string) => ({ schema: { type: 'string', enum: [value] }, description });

interface HeaderDef {
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
}

/** Response headers, by component name; `name` is the header on the wire when it differs. */
const HEADERS = {
  'X-Request-Id': {
    required: true,
    ...str('This request’s id: yours when it matches the pattern, else a UUID. Equals `request_id` in error bodies.', 128, {
      pattern: REQUEST_ID.source,
    }),
  },
  ETag: { required: true, ...str('Strong validator of this exact representation (each encoding has its own).', 256, { pattern: '^"[!#-~]+"$' }) },
  'Cache-Control-Private': { required: true, ...only('private, max-age=300', 'Real data: only the client may cache it, for 5 minutes.') },
  'Cache-Control-Public': { required: true, ...only('public, max-age=3600', 'Sandbox data: anyone may cache it, for an hour.') },
  'Cache-Control-Revalidate': {
    required: true,
    ...only('private, max-age=0, must-revalidate', 'Freshness: revalidate every time (cheap with If-None-Match).'),
  },
  'Cache-Control-No-Store': { required: true, ...only('no-store', 'Errors are never cached.') },
  'Vary-Private': { required: true, ...only('Authorization, X-API-Key, Accept-Encoding', 'The representation depends on the key and the encoding.') },
  'Vary-Public': { required: true, ...only('Accept-Encoding', 'The representation depends on the encoding only.') },
  'Content-Encoding': { schema: { type: 'string', enum: ['gzip', 'br'] }, description: 'When `Accept-Encoding` asked for it.' },
  'RateLimit-Limit': int('Requests allowed per minute (per key; per client address on the sandbox). Absent when the request was not counted.'),
  'RateLimit-Remaining': int('Requests left in the current minute.'),
  'RateLimit-Reset': int('Seconds until the current minute ends.', 60),
  'Retry-After': { required: true, schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 60 }, description: 'Seconds to wait before retrying.' },
  'WWW-Authenticate': { required: true, ...only('Bearer', 'The scheme to authenticate with.') },
  'Access-Control-Allow-Origin': { required: true, ...only('*', 'Any origin may read (CORS).') },
  'Access-Control-Expose-Headers': { required: true, ...only(EXPOSED_HEADERS, 'The headers a browser script may read.') },
} satisfies Record<string, HeaderDef>;

export type HeaderId = keyof typeof HEADERS;

/** The wire name of a header component (`Cache-Control-Private` is `Cache-Control`). */
const wireName = (id: HeaderId): string => id.replace(/-(Private|Public|Revalidate|No-Store)$/, '');

/** Response headers, as a response's `headers` map. */
export function headers(...ids: HeaderId[]): Record<string, object> {
  return Object.fromEntries(ids.map((id) => [wireName(id), component('headers', id, HEADERS[id] as HeaderDef)]));
}

export const RATE_LIMIT: HeaderId[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
export const CORS: HeaderId[] = ['Access-Control-Allow-Origin', 'Access-Control-Expose-Headers'];

/** How a 200 may be cached; the 304 of the same operation says the same. */
export type Caching = 'private' | 'public' | 'revalidate';

const CACHE_HEADERS: Record<Caching, HeaderId[]> = {
  private: ['Cache-Control-Private', 'Vary-Private'],
  public: ['Cache-Control-Public', 'Vary-Public'],
  revalidate: ['Cache-Control-Revalidate', 'Vary-Private'],
};

/** Headers of a 200 that reads data. */
export function okHeaders(caching: Caching) {
  return headers('X-Request-Id', 'ETag', ...CACHE_HEADERS[caching], 'Content-Encoding', ...RATE_LIMIT, ...CORS);
}

const NOT_MODIFIED_NAME: Record<Caching, string> = {
  private: 'not_modified_private',
  public: 'not_modified_public',
  revalidate: 'not_modified_revalidate',
};

/**
 * The 304: headers only, and no `content` at all, so generated clients type
 * its body as absent (openapi-fetch reads it as no data) rather than as JSON.
 */
export function notModified(caching: Caching) {
  return component('responses', NOT_MODIFIED_NAME[caching], {
    description:
      '`If-None-Match` held this representation’s `ETag`: not modified, no body. Does not count against the rate limit.',
    headers: headers('X-Request-Id', 'ETag', ...CACHE_HEADERS[caching], ...RATE_LIMIT, ...CORS),
  });
}

/** Request parameters shared by operations, by component name. */
const PARAMETERS = {
  limit: { name: 'limit', in: 'query', description: LIMIT_PARAM.description, schema: { ...LIMIT_PARAM, format: 'int32', description: undefined } },
  offset: { name: 'offset', in: 'query', description: OFFSET_PARAM.description, schema: { ...OFFSET_PARAM, format: 'int64', description: undefined } },
  updated_since: {
    name: 'updated_since',
    in: 'query',
    description: UPDATED_SINCE_PARAM.description,
    schema: { ...UPDATED_SINCE_PARAM, maxLength: 64, description: undefined },
  },
  include_deleted: {
    name: 'include_deleted',
    in: 'query',
    description: INCLUDE_DELETED_PARAM.description,
    schema: { ...INCLUDE_DELETED_PARAM, description: undefined },
  },
  snapshot: { name: 'snapshot', in: 'query', description: SNAPSHOT_PARAM.description, schema: { ...SNAPSHOT_PARAM, maxLength: 64, description: undefined } },
  'If-None-Match': {
    name: 'If-None-Match',
    in: 'header',
    description: 'An `ETag` from an earlier response: if the body would be the same, the answer is `304` with no body.',
    schema: { type: 'string', maxLength: MAX_HEADER_BYTES },
  },
  'X-Request-Id': {
    name: 'X-Request-Id',
    in: 'header',
    description:
      `Your own id for this request, echoed in the response when it matches \`${REQUEST_ID.source}\`. ` +
      'Any other value is accepted too, and replaced by a UUID.',
    // No pattern: the server accepts any value, so a validating client must not refuse one (issue 21, point 3).
    schema: { type: 'string', maxLength: MAX_HEADER_BYTES },
  },
} as const;

export type ParameterId = keyof typeof PARAMETERS;

/** Shared parameters, each a reference to its component. */
export function parameters(...ids: ParameterId[]): object[] {
  return ids.map((id) => component('parameters', id, JSON.parse(JSON.stringify(PARAMETERS[id])) as object));
}

/** The `id_erp` path parameter, with an example id of the operation's kind. */
export function idErpParameter(example: string) {
  return {
    name: 'id_erp',
    in: 'path',
    required: true,
    description: ID_ERP_PARAM.description,
    schema: { type: 'string', minLength: ID_ERP_PARAM.minLength, maxLength: ID_ERP_PARAM.maxLength },
    example,
  };
}

/** When each error happens, for the document; a code missing here is described by its catalog message. */
const WHEN: Partial<Record<ErrorCode, string>> = {
  bad_request: 'The request itself is malformed (an undecodable URL, a request the HTTP parser refuses).',
  invalid_parameter: 'A malformed, out-of-range or repeated query parameter; `message` names it and what it accepts.',
  auth_required: 'No key at all: neither header, or an empty one.',
  unauthorized: 'A key that is unknown, malformed, revoked, not Bearer, or two different keys in the two headers.',
  not_found: 'No record with this `id_erp` (or an unknown path, even without a key); `message` says which.',
  snapshot_expired: 'The `snapshot` parameter names a version that is unknown or no longer kept: start the download over without it.',
  uri_too_long: 'The URL is longer than 8192 characters.',
  header_too_large: 'The request head is larger than 16 KiB.',
  rate_limited: 'Over the request rate (per key; per client address on the sandbox). Wait `Retry-After` seconds.',
  internal_error: 'An unexpected fault. Nothing internal is revealed; retry after a few seconds.',
  unavailable: 'Storage is unreachable, or the server is shutting down. Retry after `Retry-After` seconds.',
};

const describeError = (code: ErrorCode) => WHEN[code] ?? ERROR_CATALOG[code].message;

/** Headers an error of these codes carries. RateLimit-* appear once the request was counted. */
function errorHeaderIds(codes: readonly ErrorCode[]): HeaderId[] {
  return [
    'X-Request-Id',
    'Cache-Control-No-Store',
    ...(codes.includes('auth_required') || codes.includes('unauthorized') ? (['WWW-Authenticate'] as const) : []),
    ...(codes.includes('rate_limited') || codes.includes('unavailable') ? (['Retry-After'] as const) : []),
    ...RATE_LIMIT,
    ...CORS,
  ];
}

/**
 * The responses for these error codes: one per status, each the component
 * named after its codes (`not_found`, `auth_required_or_unauthorized`).
 */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, object> {
  const out: Record<string, object> = {};
  const inOrder = (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((c) => codes.includes(c));
  const statuses = [...new Set(inOrder.map((c) => ERROR_CATALOG[c].status))].sort((a, b) => a - b);
  for (const status of statuses) {
    const here = inOrder.filter((c) => ERROR_CATALOG[c].status === status);
    out[status] = component('responses', here.join('_or_'), {
      description: here.map((c) => `\`${c}\`: ${describeError(c)}`).join(' '),
      headers: headers(...errorHeaderIds(here)),
      content: {
        'application/json': {
          schema: schemaRef(schemaNames.error(status)),
          examples: Object.fromEntries(here.map((c) => [c, component('examples', c, errorExample(c))])),
        },
      },
    });
  }
  return out;
}

/** The longest text a highlighted field or a `data` cell can hold: an import refuses longer cells. */
export const MAX_CELL_CHARS = DEFAULT_MAX_CELL_BYTES;
