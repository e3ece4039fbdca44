/**
 * The last step of the OpenAPI document, after @fastify/swagger has collected
 * the routes: each operation gets the parameters and responses its route
 * schema carries (`x-parameters`, `x-responses`, see api/api-docs.ts), every
 * piece marked as a component moves to `#/components/<section>/<name>` once
 * with a `$ref` left in its place, and each GET marked for it gets its `HEAD`
 * twin: the same parameters and statuses, the same headers, no bodies.
 */
import { isDeepStrictEqual } from 'node:util';
import { COMPONENT } from '../api/api-components.js';
import { HEAD_TWIN } from '../api/api-docs.js';

type Json = Record<string, any>;

export function finishDocument<T extends { paths?: unknown; components?: unknown }>(doc: T): T {
  const components = ((doc as Json).components ??= {}) as Json;
  const hoist = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(hoist);
    if (value === null || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [key, inner] of Object.entries(value)) if (key !== COMPONENT) out[key] = hoist(inner);
    const id = (value as Json)[COMPONENT];
    if (typeof id !== 'string') return out;
    const [section, name] = id.split('/') as [string, string];
    const bucket = (components[section] ??= {}) as Json;
    if (bucket[name] !== undefined && !isDeepStrictEqual(bucket[name], out)) {
      throw new Error(`Two different OpenAPI components are named #/components/${id}`);
    }
    bucket[name] = out;
    return { $ref: `#/components/${id}` };
  };

  for (const item of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const op of Object.values(item)) {
      if (op['x-parameters']) op.parameters = op['x-parameters'];
      if (op['x-responses']) op.responses = op['x-responses'];
      delete op['x-parameters'];
      delete op['x-responses'];
    }
    if (item.get?.[HEAD_TWIN]) {
      delete item.get[HEAD_TWIN];
      item.head = headTwin(item.get);
    }
    for (const op of Object.values(item)) {
      if (op.parameters) op.parameters = hoist(op.parameters);
      op.responses = hoist(op.responses);
    }
  }
  for (const section of Object.keys(components)) {
    if (section === 'schemas' || section === 'securitySchemes') continue;
    components[section] = Object.fromEntries(Object.entries(components[section] as Json).sort(([a], [b]) => (a < b ? -1 : 1)));
  }
  return doc;
}

/** `HEAD`: what the GET answers, without its bodies (a marked response becomes `<name>_head`). */
function headTwin(get: Json): Json {
  const responses: Json = {};
  for (const [status, response] of Object.entries(get.responses as Json)) {
    if (!response.content) {
      responses[status] = response;
      continue;
    }
    const { content: _content, [COMPONENT]: id, ...rest } = response;
    responses[status] = typeof id === 'string' ? { [COMPONENT]: `${id}_head`, ...rest } : rest;
  }
  const { operationId, summary, description, ...same } = get;
  return {
    ...same,
    operationId: `head${operationId.charAt(0).toUpperCase()}${operationId.slice(1)}`,
    summary: `${summary}: headers only`,
    description: `${description} \`HEAD\`: the same status and headers as \`GET\`, without a body.`,
    responses,
  };
}
