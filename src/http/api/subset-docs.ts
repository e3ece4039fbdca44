/**
 * The OpenAPI side of subsets (contract §6): the filter, `q` and `fields`
 * parameters of each kind, the shape of an item trimmed by `fields`, and the
 * related-record operations. Kept apart from api-docs.ts and api-schemas.ts,
 * which only call in here.
 */
import { KIND_SPECS, type Kind } from '../../domain/kinds.js';
import { component } from './openapi-component.js';

const FILTER_NOTE =
  'Equals the value exactly, as served (case-sensitive). Repeat the parameter for any of several values; ' +
  'an empty value matches null.';

/** The subset parameters of a kind's list, for its querystring schema. */
export function subsetQueryProperties(kind: Kind): Record<string, unknown> {
  const fields = KIND_SPECS[kind].fields;
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.type !== 'string') continue;
    out[f.name] = { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 4096 }, description: `\`${f.name}\`: ${FILTER_NOTE}` };
  }
  if (fields.some((f) => f.name === 'fecha')) {
    out.fecha_desde = { type: 'string', format: 'date', maxLength: 10, description: '`fecha` on or after this date (inclusive); a null `fecha` never matches.' };
    out.fecha_hasta = { type: 'string', format: 'date', maxLength: 10, description: '`fecha` on or before this date (inclusive); a null `fecha` never matches.' };
  }
  if (fields.some((f) => f.name === 'precio')) {
    out.precio_min = { type: 'number', description: '`precio` at least this (inclusive; a JSON number such as `12.5`); a null `precio` never matches.' };
    out.precio_max = { type: 'number', description: '`precio` at most this (inclusive); a null `precio` never matches.' };
  }
  out.q = {
    type: 'string',
    minLength: 1,
    maxLength: 4096,
    description:
      'Search: every word is the beginning of a word of `nombre`, or of the whole `id_erp`, `codigo` or `cif`; case and ' +
      'accents are ignored (`ferr iba` finds "Ferretería Ibáñez"). A word is a run of letters and digits.',
  };
  Object.assign(out, fieldsQueryProperty(kind));
  return out;
}

/** `fields`, on lists and details. */
export function fieldsQueryProperty(kind: Kind): Record<string, unknown> {
  const names = [...KIND_SPECS[kind].fields.map((f) => f.name), 'data'];
  return {
    fields: {
      type: 'string',
      maxLength: 1024,
      pattern: `^(${[...names, 'actualizado_at'].join('|')})(,(${[...names, 'actualizado_at'].join('|')}))*$`,
      description:
        `Only these keys of each item, comma-separated: any of ${names.map((n) => `\`${n}\``).join(', ')}. ` +
        '`id_erp` and `actualizado_at` are always there; keys keep the item\'s order.',
    },
  };
}

export const partialItemName = (itemName: string) => `${itemName}Fields`;

/**
 * An item trimmed by `fields`: some of the item's keys, `id_erp` and
 * `actualizado_at` always. A whole item matches it too, so responses list
 * both with `anyOf`.
 */
export function partialItemSchema(kind: Kind, itemName: string, itemSchema: { properties: Record<string, unknown> }) {
  return {
    $id: partialItemName(itemName),
    title: partialItemName(itemName),
    description: `A record of \`${kind}\` with only the keys asked for with \`fields\` (in the item's order), \`id_erp\` and \`actualizado_at\` always.`,
    type: 'object',
    required: ['id_erp', 'actualizado_at'],
    additionalProperties: false,
    properties: itemSchema.properties,
  };
}

/** The related-record paths (contract §6). */
export const RELATED: readonly { parent: Kind; child: Kind; field: string }[] = [
  { parent: 'clientes', child: 'obras', field: 'cliente_id_erp' },
  { parent: 'clientes', child: 'avisos-correctivo', field: 'cliente_id_erp' },
  { parent: 'obras', child: 'avisos-correctivo', field: 'obra_id_erp' },
];

/** The subset parameters as OpenAPI parameter objects (an equality filter repeats: `form`, exploded). */
export function subsetParameters(kind: Kind, list = true): object[] {
  const props = list ? subsetQueryProperties(kind) : fieldsQueryProperty(kind);
  return Object.entries(props).map(([name, schema]) => {
    const { description, ...rest } = schema as { description: string } & Record<string, unknown>;
    // Shared components (issue 21): a kind's filter is the same on its list, its sandbox twin and the
    // related-record lists; names carry the kind, since `estado` of projects and of notices differ.
    return component('parameters', `${kind}_${name}${list ? '' : '_detail'}`, {
      name,
      in: 'query',
      description,
      schema: rest,
      ...(rest.type === 'array' ? { style: 'form', explode: true } : {}),
    });
  });
}
