/**
 * The subset parameters of a list or detail (contract §6): equality filters on
 * highlighted string fields, `fecha_desde`/`fecha_hasta`, `precio_min`/`precio_max`,
 * `q`, and `fields`. Each is validated against the kind; a bad one is a 400
 * `invalid_parameter` naming it. The result carries a canonical key, so two
 * queries asking for the same subset share ETags and cached matches.
 */
import { createHash } from 'node:crypto';
import { KIND_SPECS, KINDS, type FieldSpec, type Kind } from '../../domain/kinds.js';
import { queryWords } from '../../domain/search-words.js';
import { ApiError } from '../errors.js';

export interface EqualFilter {
  field: string;
  /** Any of these (null: the field is null). */
  values: (string | null)[];
}

export interface Filters {
  equal: EqualFilter[];
  /** Inclusive YYYYMMDD bounds of `fecha`. */
  fecha: { min: number; max: number } | null;
  precio: { min: number; max: number } | null;
  /** Folded words, each a prefix of a term. */
  q: string[] | null;
  /** Canonical text of the filters (the cache key of their matches). */
  key: string;
}

/** Which keys an item keeps; null in a Subset means the whole item. */
export interface FieldMask {
  /** Per highlighted field of the kind, in kind order (id_erp always true). */
  keep: boolean[];
  data: boolean;
}

export interface Subset {
  filters: Filters | null;
  fields: FieldMask | null;
  /** A short digest of the normalised subset for ETags; '' when the query asks for everything. */
  tag: string;
}

type RawQuery = Record<string, string | string[] | undefined>;

/** Every highlighted string field of any kind: an equality filter's possible names. */
const STRING_FIELDS = new Set(KINDS.flatMap((k) => KIND_SPECS[k].fields.filter((f) => f.type === 'string').map((f) => f.name)));
/** Each kind's highlighted fields by name, with their index: made once, not on every list request (5% of one, profiled). */
const OWN_FIELDS = {} as Record<Kind, ReadonlyMap<string, FieldSpec & { index: number }>>;
for (const k of KINDS) OWN_FIELDS[k] = new Map(KIND_SPECS[k].fields.map((f, i) => [f.name, { ...f, index: i }]));
const RANGE_PARAMS = { fecha_desde: 'fecha', fecha_hasta: 'fecha', precio_min: 'precio', precio_max: 'precio' } as const;
/** Names that are subset parameters for some kind: given where they do not apply, they are an error, not ignored. */
export const SUBSET_PARAMS: ReadonlySet<string> = new Set([...STRING_FIELDS, ...Object.keys(RANGE_PARAMS), 'q', 'fields', 'fecha', 'precio']);

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

function invalid(message: string): ApiError {
  return new ApiError('invalid_parameter', message);
}

function one(query: RawQuery, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw invalid(`The parameter "${name}" was given more than once; give it at most once.`);
  return v;
}

/** Parses the subset parameters of a list (`list`) or of a detail (only `fields`). */
export function parseSubset(query: RawQuery, kind: Kind, list = true, given?: EqualFilter): Subset {
  const own = OWN_FIELDS[kind];
  const equal: EqualFilter[] = [];
  const ranges: Record<'fecha' | 'precio', { min: number; max: number } | null> = { fecha: null, precio: null };
  let q: string[] | null = null;
  let fields: FieldMask | null = null;

  for (const name of Object.keys(query).sort()) {
    if (!SUBSET_PARAMS.has(name)) continue;
    const raw = query[name];
    if (raw === undefined) continue;
    if (name === 'fields') {
      fields = parseFields(one(query, name)!, kind);
      continue;
    }
    if (!list) continue; // a detail takes only `fields`; filters are list parameters
    if (name === 'fecha' || name === 'precio') {
      throw invalid(`The parameter "${name}" is not a filter: use ${name === 'fecha' ? '"fecha_desde" and "fecha_hasta"' : '"precio_min" and "precio_max"'}.`);
    }
    if (name in RANGE_PARAMS) {
      const field = RANGE_PARAMS[name as keyof typeof RANGE_PARAMS];
      if (!own.has(field)) throw notHere(name, kind);
      const text = one(query, name)!;
      const value = field === 'fecha' ? parseDate(text) : parseNumber(text);
      if (value === null) {
        throw invalid(
          field === 'fecha'
            ? `The parameter "${name}" must be a date as YYYY-MM-DD, such as 2026-11-21; got "${clip(text)}".`
            : `The parameter "${name}" must be a number such as 12.5 (a JSON number: a point, no thousands separator); got "${clip(text)}".`,
        );
      }
      const r = (ranges[field] ??= { min: -Infinity, max: Infinity });
      if (name.endsWith('_desde') || name.endsWith('_min')) r.min = value;
      else r.max = value;
      continue;
    }
    if (name === 'q') {
      const text = one(query, name)!;
      const words = queryWords(text);
      if (words.length === 0) throw invalid(`The parameter "q" must hold at least one word (letters or digits); got "${clip(text)}".`);
      q = words.sort();
      continue;
    }
    // An equality filter on a highlighted string field.
    const f = own.get(name);
    if (!f || f.type !== 'string') throw notHere(name, kind);
    const values = [...new Set(Array.isArray(raw) ? raw : [raw])].sort();
    equal.push({ field: name, values: values.map((v) => (v === '' ? null : v)) });
  }

  // A related-record path's parent (`/v1/clientes/:id/obras`): one more condition, ANDed.
  if (given) equal.push(given);
  const hasFilters = equal.length > 0 || ranges.fecha !== null || ranges.precio !== null || q !== null;
  const key = hasFilters
    ? JSON.stringify([equal.map((e) => [e.field, e.values]), ranges.fecha, ranges.precio, q])
    : '';
  const filters = hasFilters ? { equal, fecha: ranges.fecha, precio: ranges.precio, q, key } : null;
  const fieldsKey = fields ? `${fields.keep.map((k) => (k ? 1 : 0)).join('')}${fields.data ? 1 : 0}` : '';
  const tag = hasFilters || fields ? subsetTag(`${key}\n${fieldsKey}`) : '';
  return { filters, fields, tag };
}

/** Tags of the subsets asked for lately: clients repeat the same few, and a SHA-1 per request showed in profiles. */
const TAGS = new Map<string, string>();

/** A subset's part of the ETag: a short hash of its canonical form. */
function subsetTag(canonical: string): string {
  let tag = TAGS.get(canonical);
  if (tag === undefined) {
    tag = createHash('sha1').update(canonical).digest('base64url').slice(0, 16);
    // A bound, not a tuning: a client cycling through more subsets than this pays the hash again.
    if (TAGS.size >= 4096) TAGS.clear();
    TAGS.set(canonical, tag);
  }
  return tag;
}

function parseFields(text: string, kind: Kind): FieldMask | null {
  const spec = KIND_SPECS[kind].fields;
  const keep = spec.map((f) => f.name === 'id_erp');
  let data = false;
  const unknown: string[] = [];
  for (const name of text.split(',')) {
    const i = spec.findIndex((f) => f.name === name);
    if (i >= 0) keep[i] = true;
    else if (name === 'data') data = true;
    else if (name !== 'actualizado_at') unknown.push(name);
  }
  if (unknown.length > 0 || text === '') {
    const allowed = [...spec.map((f) => f.name), 'data', 'actualizado_at'].join(', ');
    throw invalid(
      text === ''
        ? `The parameter "fields" must name at least one field (${allowed}).`
        : `The parameter "fields" names ${unknown.map((u) => `"${clip(u)}"`).join(', ')}, not a field of ${kind}; its fields are ${allowed}.`,
    );
  }
  // Everything asked for: the whole item, served as is.
  return keep.every(Boolean) && data ? null : { keep, data };
}

function notHere(name: string, kind: Kind): ApiError {
  const spec = KIND_SPECS[kind].fields;
  const filters = [
    ...spec.filter((f) => f.type === 'string').map((f) => f.name),
    ...Object.entries(RANGE_PARAMS)
      .filter(([, field]) => spec.some((f) => f.name === field))
      .map(([p]) => p),
    'q',
  ];
  return invalid(`The parameter "${name}" does not apply to ${kind}; its filters are ${filters.join(', ')}.`);
}

/** A real YYYY-MM-DD date as YYYYMMDD; null otherwise. */
function parseDate(text: string): number | null {
  const m = DATE.exec(text);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  if (days === undefined || d < 1 || d > days) return null;
  return y * 10000 + mo * 100 + d;
}

function parseNumber(text: string): number | null {
  if (text.length > 64 || !JSON_NUMBER.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

function clip(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 40)}…` : printable;
}
