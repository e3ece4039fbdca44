/**
 * Validation of the list query parameters (contract §1.4). Each bad value is a
 * 400 `invalid_parameter` whose message names the parameter and what it
 * accepts. Unknown parameters are ignored; a repeated one is an error.
 */
import { ApiError } from '../errors.js';
import { ISO_TIMESTAMP, LIMIT_PARAM, OFFSET_PARAM, SNAPSHOT_ID } from './api-schemas.js';

export interface ListQuery {
  limit: number;
  offset: number;
  /** Epoch ms, already rounded up to whole milliseconds; null when absent. */
  updatedSince: number | null;
  /** Add tombstones of removed records (include_deleted=true). */
  includeDeleted: boolean;
  /** A pinned snapshot's public id, or null for the live one. */
  snapshot: string | null;
}

// The bounds are the documented ones (api-schemas.ts), so the OpenAPI document cannot disagree.
export const DEFAULT_LIMIT: number = LIMIT_PARAM.default;
export const MAX_LIMIT: number = LIMIT_PARAM.maximum;
const MIN_LIMIT: number = LIMIT_PARAM.minimum;
const MIN_OFFSET: number = OFFSET_PARAM.minimum;
const MAX_OFFSET: number = OFFSET_PARAM.maximum;
// At most as many digits as the largest offset: longer input never reaches Number().
const OFFSET_DIGITS = new RegExp(`^[0-9]{1,${String(MAX_OFFSET).length}}$`);

type RawQuery = Record<string, string | string[] | undefined>;

function single(query: RawQuery, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) {
    throw new ApiError('invalid_parameter', `The parameter "${name}" was given more than once; give it at most once.`);
  }
  return value;
}

export function parseListQuery(query: RawQuery): ListQuery {
  const limitRaw = single(query, 'limit');
  const offsetRaw = single(query, 'offset');
  const sinceRaw = single(query, 'updated_since');
  const deletedRaw = single(query, 'include_deleted');
  const snapshotRaw = single(query, 'snapshot');

  let limit = DEFAULT_LIMIT;
  if (limitRaw !== undefined) {
    limit = /^[0-9]{1,7}$/.test(limitRaw) ? Number(limitRaw) : NaN;
    if (!(limit >= MIN_LIMIT && limit <= MAX_LIMIT)) {
      throw new ApiError(
        'invalid_parameter',
        `The parameter "limit" must be an integer from ${MIN_LIMIT} to ${MAX_LIMIT}; got "${clip(limitRaw)}".`,
      );
    }
  }
  let offset: number = OFFSET_PARAM.default;
  if (offsetRaw !== undefined) {
    offset = OFFSET_DIGITS.test(offsetRaw) ? Number(offsetRaw) : NaN;
    if (!(offset >= MIN_OFFSET && offset <= MAX_OFFSET)) {
      throw new ApiError(
        'invalid_parameter',
        `The parameter "offset" must be an integer from ${MIN_OFFSET} to ${MAX_OFFSET}; got "${clip(offsetRaw)}".`,
      );
    }
  }
  let updatedSince: number | null = null;
  if (sinceRaw !== undefined) {
    updatedSince = parseTimestamp(sinceRaw);
    if (updatedSince === null) {
      throw new ApiError(
        'invalid_parameter',
        `The parameter "updated_since" must be an ISO 8601 date or timestamp, such as 2026-11-21 or 2026-11-21T10:15:30Z; got "${clip(sinceRaw)}".`,
      );
    }
  }
  let includeDeleted = false;
  if (deletedRaw !== undefined) {
    if (deletedRaw !== 'true' && deletedRaw !== 'false') {
      throw new ApiError('invalid_parameter', `The parameter "include_deleted" must be true or false; got "${clip(deletedRaw)}".`);
    }
    includeDeleted = deletedRaw === 'true';
  }
  let snapshot: string | null = null;
  if (snapshotRaw !== undefined) {
    if (!SNAPSHOT_ID.test(snapshotRaw)) {
      throw new ApiError(
        'invalid_parameter',
        `The parameter "snapshot" must be the "snapshot" value of a list response; got "${clip(snapshotRaw)}".`,
      );
    }
    snapshot = snapshotRaw;
  }
  return { limit, offset, updatedSince, includeDeleted, snapshot };
}

/** Keeps echoed input short and printable in messages. */
function clip(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 40)}…` : printable;
}

/**
 * Parses an ISO 8601 date or timestamp to epoch ms, rounded up so that the
 * inclusive filter `actualizado_at >= since` is exact on millisecond values.
 * A bare date is midnight UTC; a timestamp without a zone is UTC.
 */
export function parseTimestamp(text: string): number | null {
  const m = ISO_TIMESTAMP.exec(text);
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((v) => (v === undefined ? undefined : Number(v))) as number[];
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth(year!, month!)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const fraction = m[7] ?? '';
  let ms = Date.UTC(year!, month! - 1, day!, hour, minute, second);
  if (fraction) ms += Math.ceil(Number(`0.${fraction}`) * 1000 - 1e-9);
  const zone = m[8];
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const zh = Number(digits.slice(0, 2));
    const zm = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (zh > 23 || zm > 59) return null;
    ms -= sign * (zh * 60 + zm) * 60_000;
  }
  return Number.isFinite(ms) ? ms : null;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
