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
import { DEFAULT_MAX_CELL_BYTES, DEFAULT_MAX_COLUMNS } from '../../imports/read-csv.js';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';

// Bounds that linters ask of every string and integer (OWASP API4): the real ones.
/** A cell of an import is at most this many bytes, so at most this many characters. */
const CELL = DEFAULT_MAX_CELL_BYTES;
/** Counts and offsets: JSON numbers that stay exact. */
export const COUNT = { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
/** `2026-11-21T10:15:30.123Z`. */
export const TIMESTAMP_CHARS = 24;

/** `limit` (contract §1.4): an integer from 1 to 1000, 100 when absent. */
export const LIMIT_PARAM = {
  type: 'integer',
  format: 'int32',
  minimum: 1,
  maximum: 1000,
  default: 100,
  description: 'Page size: an integer from 1 to 1000.',
} as const;

/** `offset`: how many matching records to skip. Past the end is an empty page, not an error. */
export const OFFSET_PARAM = {
  type: 'integer',
  format: 'int64',
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
  maxLength: 64,
  pattern: ISO_TIMESTAMP.source,
  description:
    'Only records with `actualizado_at` at or after this instant (inclusive). ISO 8601: a date ' +
    '(`2026-06-01`, midnight UTC) or a timestamp with `Z` or an offset (`2026-10-05T13:22:47.381Z`, ' +
    '`2026-10-05T15:22:47+02:00`); a timestamp without a zone is UTC.',
} as const;

export const ID_ERP_PARAM = {
  type: 'string',
  minLength: 1,
  // The router's maxParamLength (app.ts) bounds the encoded id; a longer path is a 404.
  maxLength: 2048,
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
  maxLength: 64,
  pattern: SNAPSHOT_ID.source,
  description:
    'The `snapshot` of an earlier page: read that same version of the data, so a paged download never skips or ' +
    'repeats a record while an import lands. Kept 15 minutes after it is superseded; then `410 snapshot_expired`.',
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
  obra_id_erp: 'The `id_erp` of the project (`obras`) this notice belongs to, or null.',
};

function fieldSchema(field: FieldSpec) {
  if (field.name === 'id_erp') return { type: 'string', minLength: 1, maxLength: CELL, description: FIELD_NOTES.id_erp };
  const note = FIELD_NOTES[field.name];
  switch (field.type) {
    case 'number':
      return { type: ['number', 'null'], description: 'A number read from the mapped column (`1234,5`, `1.234,56`…), or null when empty or unreadable.' };
    case 'date':
      return { type: ['string', 'null'], format: 'date', maxLength: 10, description: '`YYYY-MM-DD` read from the mapped column, or null when empty or unreadable.' };
    default:
      return { type: ['string', 'null'], maxLength: CELL, description: note ?? 'The mapped column, trimmed; null when its cell is empty or the column is absent.' };
  }
}

function itemSchema(kind: Kind) {
  const fields = KIND_SPECS[kind].fields;
  const properties: Record<string, unknown> = {};
  for (const f of fields) properties[f.name] = fieldSchema(f);
  properties.data = {
    type: 'object',
    additionalProperties: { type: 'string', maxLength: CELL },
    maxProperties: DEFAULT_MAX_COLUMNS,
    description: 'The full original CSV row: every column under its exact header, in file order, cell text untouched (an empty cell is `""`).',
  };
  properties.actualizado_at = {
    type: 'string',
    format: 'date-time',
    maxLength: TIMESTAMP_CHARS,
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
      id_erp: { type: 'string', minLength: 1, maxLength: CELL },
      eliminado: TRUE,
      actualizado_at: { type: 'string', format: 'date-time', maxLength: TIMESTAMP_CHARS, description: 'The time of the import that removed it.' },
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
      total: { ...COUNT, description: 'Records of the kind.' },
      importado_at: { type: ['string', 'null'], format: 'date-time', maxLength: TIMESTAMP_CHARS, description: 'When the live data was published; null if never imported.' },
      snapshot: { type: ['string', 'null'], maxLength: 64, description: 'The live snapshot, as in list envelopes; null if never imported.' },
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
      total: { ...COUNT, description: 'Records matching the filters (not the page length).' },
      limit: { type: 'integer', format: 'int32', minimum: LIMIT_PARAM.minimum, maximum: LIMIT_PARAM.maximum },
      offset: { type: 'integer', format: 'int64', minimum: 0, maximum: OFFSET_PARAM.maximum },
      has_more: { type: 'boolean', description: '`offset + items.length < total`.' },
      next_offset: { ...COUNT, description: 'Always `offset + items.length`: follow it while `has_more` is true.' },
      snapshot: {
        type: ['string', 'null'],
        maxLength: 64,
        description: 'The data version this page was read from (null if the kind was never imported). Pass it as `snapshot=` on the next pages.',
      },
      items: {
        type: 'array',
        maxItems: LIMIT_PARAM.maximum,
        items: { anyOf: [ref(ITEM_NAMES[kind]), ref(partialItemName(ITEM_NAMES[kind])), ref('Tombstone')] },
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
      item: { anyOf: [ref(ITEM_NAMES[kind]), ref(partialItemName(ITEM_NAMES[kind]))] },
    },
  };
}

/** Every documented error code of one HTTP status, in catalog order. */
export function codesWithStatus(status: number): ErrorCode[] {
  return DOCUMENTED_CODES.filter((c) => ERROR_CATALOG[c].status === status);
}

/**
 * Codes no documented operation answers, each for a reason: the document
 * describes the operations a path has, and these answer requests outside them.
 */
export const UNDOCUMENTED_CODES: Readonly<Partial<Record<ErrorCode, string>>> = {
  method_not_allowed:
    'answers the methods a path does not have (POST, PUT…): OpenAPI describes the operations a path has, so the ' +
    'document says it in its description (documenting four write methods that only answer 405 on every path ' +
    'would put them into every generated client)',
  payload_too_large: 'answered by uploads (the panel, the upload-token API), which are not part of /v1',
  forbidden: 'answered by the panel’s forms (a missing CSRF token), which are not part of /v1',
};

/** The catalog codes the document describes, in catalog order. */
export const DOCUMENTED_CODES: readonly ErrorCode[] = (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((c) => !(c in UNDOCUMENTED_CODES));

/** Every status that some documented code answers with, ascending. */
export function errorStatuses(): number[] {
  return [...new Set(DOCUMENTED_CODES.map((c) => ERROR_CATALOG[c].status))].sort((a, b) => a - b);
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
      message: { type: 'string', maxLength: 1024, description: 'An English sentence for people; it may change.' },
      request_id: { type: 'string', maxLength: 128, description: 'Equal to the `X-Request-Id` response header; quote it when asking for support.' },
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
