/**
 * The JSON schemas of the /v1 API, in one place: query and path parameters,
 * items per kind, list and detail envelopes, error bodies. The routes carry
 * them for the OpenAPI document (see api-docs.ts), `list-query.ts` takes its
 * bounds from them, and the tests validate every response against them.
 *
 * They describe, they do not validate at run time: parameters are checked by
 * hand in list-query.ts so that every bad value gets the contract's exact
 * message (Ajv's coercion would quietly accept `limit=1.5` or `offset=`).
 */
import { partialItemName, partialItemSchema } from './subset-docs.js';
import { KIND_SPECS, KINDS, type FieldSpec, type Kind } from '../../domain/kinds.js';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';

/** `limit` (contract §1.4): an integer from 1 to 1000, 100 when absent. */
export const LIMIT_PARAM = {
  type: 'integer',
  minimum: 1,
  maximum: 1000,
  default: 100,
  description: 'Page size: an integer from 1 to 1000.',
} as const;

/** `offset`: how many matching records to skip. Past the end is an empty page, not an error. */
export const OFFSET_PARAM = {
  type: 'integer',
  minimum: 0,
  // Fifteen digits: well inside Number.MAX_SAFE_INTEGER, and far beyond any real list.
  maximum: 999_999_999_999_999,
  default: 0,
  description: 'Records to skip. Follow `next_offset` from the previous page rather than computing it.',
} as const;

/**
 * ISO 8601 date or timestamp, with an optional zone (`Z`, `+01:00`, `+0100`,
 * `+01`). list-query.ts parses with this same expression, then checks the
 * calendar (no 30 February).
 */
export const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

export const UPDATED_SINCE_PARAM = {
  type: 'string',
  pattern: ISO_TIMESTAMP.source,
  description:
    'Only records with `actualizado_at` at or after this instant (inclusive). ISO 8601: a date ' +
    '(`2026-06-01`, midnight UTC) or a timestamp with `Z` or an offset (`2026-10-05T13:22:47.381Z`, ' +
    '`2026-10-05T15:22:47+02:00`); a timestamp without a zone is UTC.',
} as const;

export const ID_ERP_PARAM = {
  type: 'string',
  minLength: 1,
  description: "The record's `id_erp`, percent-encoded once (`A/1` is sent as `A%2F1`).",
} as const;

export const INCLUDE_DELETED_PARAM = {
  // No `default`: the docs page would then send include_deleted=false with every try.
  type: 'boolean',
  description:
    '`true` adds tombstones (`{"id_erp", "eliminado": true, "actualizado_at"}`) for records that imports removed ' +
    '(at or after `updated_since`), in list order and counted in `total`. Kept at least 90 days.',
} as const;

/** list-query.ts checks `snapshot` with this same expression. */
export const SNAPSHOT_ID = /^[A-Za-z0-9-]{1,64}$/;

export const SNAPSHOT_PARAM = {
  type: 'string',
  pattern: SNAPSHOT_ID.source,
  description:
    'The `snapshot` of an earlier page: read that same version of the data, so a paged download never skips or ' +
    'repeats a record while an import lands. Kept 15 minutes after it is superseded; then `410 snapshot_expired`.',
} as const;

/** The query string of a list. Unknown parameters are ignored; any of these given twice is a 400. */
export const LIST_QUERY = {
  type: 'object',
  properties: {
    limit: LIMIT_PARAM,
    offset: OFFSET_PARAM,
    updated_since: UPDATED_SINCE_PARAM,
    include_deleted: INCLUDE_DELETED_PARAM,
    snapshot: SNAPSHOT_PARAM,
  },
} as const;

export const DETAIL_PARAMS = {
  type: 'object',
  properties: { id_erp: ID_ERP_PARAM },
  required: ['id_erp'],
} as const;

/** Request headers every read understands (the key travels in the security schemes). */
export const READ_HEADERS = {
  type: 'object',
  properties: {
    'If-None-Match': {
      type: 'string',
      description: 'An `ETag` from an earlier response: if the body would be the same, the answer is `304` with no body.',
    },
    'X-Request-Id': {
      type: 'string',
      pattern: '^[A-Za-z0-9._:\\-]{1,128}$',
      description: 'Your own id for this request, echoed in the response. Anything else is replaced by a UUID.',
    },
  },
} as const;

/** Component names, as they appear under `#/components/schemas/`. */
const ITEM_NAMES: Record<Kind, string> = {
  clientes: 'Cliente',
  articulos: 'Articulo',
  obras: 'Obra',
  'avisos-correctivo': 'AvisoCorrectivo',
};

export const schemaNames = {
  item: (kind: Kind) => ITEM_NAMES[kind],
  list: (kind: Kind, sandbox: boolean) => `${sandbox ? 'Sandbox' : ''}${ITEM_NAMES[kind]}List`,
  detail: (kind: Kind, sandbox: boolean) => `${sandbox ? 'Sandbox' : ''}${ITEM_NAMES[kind]}Detail`,
  error: (status: number) => `Error${status}`,
};

/** A reference to a shared schema, resolved by @fastify/swagger to `#/components/schemas/<name>`. */
export const ref = (name: string) => ({ $ref: `${name}#` });

const FIELD_NOTES: Record<string, string> = {
  id_erp: "The record's id in the ERP. Never null, unique within the kind.",
  cliente_id_erp: 'The `id_erp` of the customer (`clientes`) this record belongs to, or null.',
  obra_id_erp: 'The `id_erp` of the work (`obras`) this notice belongs to, or null.',
};

function fieldSchema(field: FieldSpec) {
  if (field.name === 'id_erp') return { type: 'string', minLength: 1, description: FIELD_NOTES.id_erp };
  const note = FIELD_NOTES[field.name];
  switch (field.type) {
    case 'number':
      return { type: ['number', 'null'], description: 'A number read from the mapped column (`1234,5`, `1.234,56`…), or null when empty or unreadable.' };
    case 'date':
      return { type: ['string', 'null'], format: 'date', description: '`YYYY-MM-DD` read from the mapped column, or null when empty or unreadable.' };
    default:
      return { type: ['string', 'null'], description: note ?? 'The mapped column, trimmed; null when its cell is empty or the column is absent.' };
  }
}

function itemSchema(kind: Kind) {
  const fields = KIND_SPECS[kind].fields;
  const properties: Record<string, unknown> = {};
  for (const f of fields) properties[f.name] = fieldSchema(f);
  properties.data = {
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The full original CSV row: every column under its exact header, in file order, cell text untouched (an empty cell is `""`).',
  };
  properties.actualizado_at = {
    type: 'string',
    format: 'date-time',
    description: 'UTC, milliseconds: the time of the import that created the record or last changed its row.',
  };
  return {
    $id: ITEM_NAMES[kind],
    title: ITEM_NAMES[kind],
    description: `One record of \`${kind}\`. Keys come in this order: ${fields.map((f) => `\`${f.name}\``).join(', ')}, then \`data\`, then \`actualizado_at\`.`,
    type: 'object',
    required: [...fields.map((f) => f.name), 'data', 'actualizado_at'],
    additionalProperties: false,
    properties,
  };
}

const TRUE = { type: 'boolean', const: true };

/** A record removed by an import, listed with `include_deleted=true`. */
function tombstoneSchema() {
  return {
    $id: 'Tombstone',
    title: 'Tombstone',
    description: 'A record that an import removed (only with `include_deleted=true`). Re-added records are items again.',
    type: 'object',
    required: ['id_erp', 'eliminado', 'actualizado_at'],
    additionalProperties: false,
    properties: {
      id_erp: { type: 'string', minLength: 1 },
      eliminado: TRUE,
      actualizado_at: { type: 'string', format: 'date-time', description: 'The time of the import that removed it.' },
    },
  };
}

/** `GET /v1/estado`: how fresh each kind's data is. */
function estadoSchema(sandbox: boolean) {
  const kindState = {
    type: 'object',
    required: ['total', 'importado_at', 'snapshot'],
    additionalProperties: false,
    properties: {
      total: { type: 'integer', minimum: 0, description: 'Records of the kind.' },
      importado_at: { type: ['string', 'null'], format: 'date-time', description: 'When the live data was published; null if never imported.' },
      snapshot: { type: ['string', 'null'], description: 'The live snapshot, as in list envelopes; null if never imported.' },
    },
  };
  return {
    $id: sandbox ? 'SandboxEstado' : 'Estado',
    title: sandbox ? 'SandboxEstado' : 'Estado',
    type: 'object',
    required: ['ok', ...(sandbox ? ['sandbox'] : []), 'kinds'],
    additionalProperties: false,
    properties: {
      ok: TRUE,
      ...(sandbox ? { sandbox: TRUE } : {}),
      kinds: {
        type: 'object',
        required: [...KINDS],
        additionalProperties: false,
        properties: Object.fromEntries(KINDS.map((k) => [k, kindState])),
      },
    },
  };
}

function listSchema(kind: Kind, sandbox: boolean) {
  return {
    $id: schemaNames.list(kind, sandbox),
    title: schemaNames.list(kind, sandbox),
    description: sandbox ? 'A page of sandbox records (fictitious, fixed data).' : 'A page of records.',
    type: 'object',
    required: ['ok', ...(sandbox ? ['sandbox'] : []), 'total', 'limit', 'offset', 'has_more', 'next_offset', 'snapshot', 'items'],
    additionalProperties: false,
    properties: {
      ok: TRUE,
      ...(sandbox ? { sandbox: { ...TRUE, description: 'Present on sandbox responses only.' } } : {}),
      total: { type: 'integer', minimum: 0, description: 'Records matching the filters (not the page length).' },
      limit: { type: 'integer', minimum: LIMIT_PARAM.minimum, maximum: LIMIT_PARAM.maximum },
      offset: { type: 'integer', minimum: 0 },
      has_more: { type: 'boolean', description: '`offset + items.length < total`.' },
      next_offset: { type: 'integer', minimum: 0, description: 'Always `offset + items.length`: follow it while `has_more` is true.' },
      snapshot: {
        type: ['string', 'null'],
        description: 'The data version this page was read from (null if the kind was never imported). Pass it as `snapshot=` on the next pages.',
      },
      items: {
        type: 'array',
        maxItems: LIMIT_PARAM.maximum,
        items: { oneOf: [ref(ITEM_NAMES[kind]), ref(partialItemName(ITEM_NAMES[kind])), ref('Tombstone')] },
        description:
          'Ordered by `actualizado_at`, then `id_erp` in byte order. Tombstones only with `include_deleted=true`; ' +
          'items with only some keys only with `fields`.',
      },
    },
  };
}

function detailSchema(kind: Kind, sandbox: boolean) {
  return {
    $id: schemaNames.detail(kind, sandbox),
    title: schemaNames.detail(kind, sandbox),
    type: 'object',
    required: ['ok', ...(sandbox ? ['sandbox'] : []), 'item'],
    additionalProperties: false,
    properties: {
      ok: TRUE,
      ...(sandbox ? { sandbox: TRUE } : {}),
      item: { oneOf: [ref(ITEM_NAMES[kind]), ref(partialItemName(ITEM_NAMES[kind]))] },
    },
  };
}

/** Every public error code of one HTTP status, in catalog order. */
export function codesWithStatus(status: number): ErrorCode[] {
  return (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((c) => ERROR_CATALOG[c].status === status);
}

/** Every status that some catalog code answers with, ascending. */
export function errorStatuses(): number[] {
  return [...new Set(Object.values(ERROR_CATALOG).map((e) => e.status))].sort((a, b) => a - b);
}

/** The error body of one status: the contract's four keys, `error` narrowed to that status's codes. */
function errorSchema(status: number) {
  return {
    $id: schemaNames.error(status),
    title: schemaNames.error(status),
    description: 'Every error body has these four keys.',
    type: 'object',
    required: ['ok', 'error', 'message', 'request_id'],
    additionalProperties: false,
    properties: {
      ok: { type: 'boolean', const: false },
      error: { type: 'string', enum: codesWithStatus(status), description: 'A stable code: branch on this.' },
      message: { type: 'string', description: 'An English sentence for people; it may change.' },
      request_id: { type: 'string', description: 'Equal to the `X-Request-Id` response header; quote it when asking for support.' },
    },
  };
}

/** Every shared schema, for `fastify.addSchema`; they become `#/components/schemas/<$id>`. */
export function sharedSchemas(): { $id: string }[] {
  return [
    ...KINDS.map(itemSchema),
    ...KINDS.map((kind) => partialItemSchema(kind, ITEM_NAMES[kind], itemSchema(kind))),
    tombstoneSchema(),
    estadoSchema(false),
    estadoSchema(true),
    ...KINDS.flatMap((kind) => [false, true].flatMap((sb) => [listSchema(kind, sb), detailSchema(kind, sb)])),
    ...errorStatuses().map(errorSchema),
  ];
}
