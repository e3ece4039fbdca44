/**
 * The OpenAPI description of events (contract §7): the `Event` schema and
 * the feed's envelopes (shared schemas, `#/components/schemas/...`), and the
 * document's OpenAPI 3.1 `webhooks`: what Mirador POSTs to an endpoint.
 */
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../../store/events.js';
import { COUNT, LIMIT_PARAM, OFFSET_PARAM, TIMESTAMP_CHARS } from './api-schemas.js';

const TRUE = { type: 'boolean', const: true };
const ref = (name: string) => ({ $ref: `${name}#` });
// Bounded and with a format, as every integer of the document (OWASP API4: unbounded numbers).
const count = (description: string) => ({ ...COUNT, description });

const EVENT_EXAMPLE = {
  id: 'evt_4f1c0a9e2b7d4c38a1e5f602',
  type: 'import.published',
  created_at: '2026-11-21T10:15:30.123Z',
  data: { kind: 'clientes', import_id: 42, snapshot: '5f0c2a9e1b7d4c38', counts: { inserted: 3, updated: 12, unchanged: 1508, deleted: 1 } },
};

function eventSchema() {
  return {
    $id: 'Event',
    title: 'Event',
    description:
      'Written when an import ends, in the same transaction (so never lost, and never written for an import that did not end). ' +
      '`import.published`: new data is live (an import that changed nothing still publishes, with zero changes); ' +
      '`import.held`: the mass-deletion guard holds it for a person (counts: what it would do); `import.failed`: nothing changed. ' +
      `\`${TEST_EVENT_TYPE}\` is only ever sent by "send a test event", never listed.`,
    type: 'object',
    required: ['id', 'type', 'created_at', 'data'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: '^evt_[0-9A-Za-z_]+$', maxLength: 64, description: 'Unique; the same in the feed, in `Mirador-Event-Id` and on every retry.' },
      type: { type: 'string', enum: [...EVENT_TYPES, TEST_EVENT_TYPE] },
      created_at: { type: 'string', format: 'date-time', maxLength: TIMESTAMP_CHARS, description: 'When the import ended (UTC, milliseconds).' },
      data: {
        type: 'object',
        required: ['kind', 'import_id', 'snapshot', 'counts'],
        additionalProperties: false,
        properties: {
          kind: { type: ['string', 'null'], enum: ['clientes', 'articulos', 'obras', 'avisos-correctivo', null], description: 'Null on a test event.' },
          import_id: { type: ['integer', 'null'], format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Null on a test event.' },
          snapshot: { type: ['string', 'null'], maxLength: 64, description: 'The published snapshot (as list envelopes report it); null unless `import.published`.' },
          counts: {
            type: 'object',
            required: ['inserted', 'updated', 'unchanged', 'deleted'],
            additionalProperties: false,
            properties: {
              inserted: count('Records the import added.'),
              updated: count('Records whose row changed.'),
              unchanged: count('Records left as they were.'),
              deleted: count('Records the import removed.'),
            },
          },
        },
      },
    },
    examples: [EVENT_EXAMPLE],
  };
}

function eventListSchema(sandbox: boolean) {
  const name = sandbox ? 'SandboxEventList' : 'EventList';
  return {
    $id: name,
    title: name,
    description: sandbox ? 'A page of the sandbox’s fixed events.' : 'A page of the company’s events, oldest first.',
    type: 'object',
    required: ['ok', ...(sandbox ? ['sandbox'] : []), 'total', 'limit', 'offset', 'has_more', 'next_offset', 'items'],
    additionalProperties: false,
    properties: {
      ok: TRUE,
      ...(sandbox ? { sandbox: { ...TRUE, description: 'Present on sandbox responses only.' } } : {}),
      total: { ...COUNT, description: 'Events matching `updated_since` (not the page length).' },
      limit: { type: 'integer', format: 'int32', minimum: LIMIT_PARAM.minimum, maximum: LIMIT_PARAM.maximum },
      offset: { type: 'integer', format: 'int64', minimum: 0, maximum: OFFSET_PARAM.maximum },
      has_more: { type: 'boolean', description: '`offset + items.length < total`.' },
      next_offset: { ...COUNT, description: 'Always `offset + items.length`: follow it while `has_more` is true.' },
      items: { type: 'array', maxItems: LIMIT_PARAM.maximum, items: ref('Event'), description: 'Ordered by `created_at`, oldest first.' },
    },
  };
}

/** The event schemas, for `fastify.addSchema`; they become `#/components/schemas/<$id>`. */
export function eventSchemas(): { $id: string }[] {
  return [eventSchema(), eventListSchema(false), eventListSchema(true)];
}

const SIGNATURE_HEADER = {
  name: 'Mirador-Signature',
  in: 'header',
  required: true,
  description:
    '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, keyed with the endpoint’s whole signing secret ' +
    '(`whsec_…`, as UTF-8). Check it with the TypeScript client’s `verifyWebhook(rawBody, header, secret)`, which also refuses ' +
    'signatures more than 300 s from now.',
  schema: { type: 'string', pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$', maxLength: 128 },
};

const EVENT_ID_HEADER = {
  name: 'Mirador-Event-Id',
  in: 'header',
  required: true,
  description: 'The event’s `id`: the same on every retry. Deliveries are at least once: drop an id already handled.',
  schema: { type: 'string', maxLength: 64 },
};

const SUMMARY: Record<(typeof EVENT_TYPES)[number], string> = {
  'import.published': 'New data is live',
  'import.held': 'An import awaits an administrator’s confirmation',
  'import.failed': 'An import failed; nothing changed',
};

/**
 * The document's `webhooks` (OpenAPI 3.1): one POST per event type, to the
 * URL of each endpoint registered in the panel or with `mirador webhook create`.
 */
export function webhooksObject(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook${type.split('.').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}`,
          summary: SUMMARY[type],
          description:
            `Sent to every enabled endpoint that wants \`${type}\` (or every type). Any 2xx within 10 s is delivered; anything ` +
            'else (another status, a redirect, which is never followed, a timeout) is retried after 1 min, 5 min, 30 min, 2 h, 5 h, ' +
            'then every 10 h, for 3 days. An endpoint that fails for that whole period is disabled. At most 4 KiB of the answer ' +
            'is read. Only `https://` URLs to public addresses are used.',
          tags: ['events'],
          // Mirador calls the receiver, which needs no key: the request proves where it comes from by its
          // Mirador-Signature header (an HMAC of the body, below), which no OpenAPI security scheme describes.
          security: [],
          parameters: [SIGNATURE_HEADER, EVENT_ID_HEADER],
          requestBody: {
            required: true,
            description: 'The event, exactly as `GET /v1/eventos` lists it.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' }, example: { ...EVENT_EXAMPLE, type } } },
          },
          responses: {
            '2XX': { description: 'Delivered: not sent again (unless someone presses "send again").' },
            default: { description: 'Not delivered: retried later, on the schedule above.' },
          },
        },
      },
    ]),
  );
}
