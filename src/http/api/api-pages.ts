/**
 * The bodies of /v1 pages: a list page (plain, filtered, thin or with
 * tombstones) and a detail, as pieces of existing item bytes around the
 * envelope, with their ETag tags. api-routes.ts decides what to send.
 */
import type { RecordRef, SnapshotMeta } from '../../store/store.js';
import type { ListQuery } from './list-query.js';
import type { Subset } from './subset-query.js';
import { renderEntries, type MatchCache } from './subset-page.js';
import { renderThinRange } from './thin-page.js';
import { gatheredItems } from './gathered-page.js';
import type { ProjectionCache } from './thin-projection.js';
import { firstAtLeast } from '../../store/snapshot-index.js';
import type { CacheableBody, Meter } from './send-body.js';
import { assembleGzip } from './gzip-segments.js';
import { cachedItem, firstPositionSince, readBodyParts, readItem, readItems, type ChunkSource } from './snapshot-reader.js';
import { mergedPage, type RenderedTombstone } from './merged-page.js';


export const REAL_CACHE = 'private, max-age=300';
export const REAL_VARY = 'Authorization, X-API-Key, Accept-Encoding';
export const SANDBOX_CACHE = 'public, max-age=3600';
export const SANDBOX_VARY = 'Accept-Encoding';
const ITEMS_CLOSE = Buffer.from(']}');
const ITEM_CLOSE = Buffer.from('}');
const ITEM_HEAD = Buffer.from('{"ok":true,"item":');
const SANDBOX_ITEM_HEAD = Buffer.from('{"ok":true,"sandbox":true,"item":');

export interface View {
  meta: SnapshotMeta | null;
  source: ChunkSource;
  sandbox: boolean;
  /** The reader's company; null on the sandbox. */
  companyId: number | null;
  meter: Meter;
  /** The record a detail asked for, when the view looked it up already. */
  record?: RecordRef | null;
}

/**
 * One page of a list: its ETag's tag, whether more follow, and its body, read
 * only when needed. With tombstones (include_deleted) the counts come from
 * merging both sequences, so `hasMore` is only known for live-only pages and
 * no next page is prepared for the others. A subset's matches are known
 * before the page (they are cached per snapshot and filter).
 */
/** What subset pages keep between requests: a filter's matches, and chunks trimmed to a `fields=` set. */
export interface SubsetCaches {
  matches: MatchCache;
  projections: ProjectionCache;
}

export async function listPage(v: View, q: ListQuery, subset: Subset, tombstones: readonly RenderedTombstone[] | null, caches: SubsetCaches) {
  const { matches, projections } = caches;
  const meta = v.meta;
  const tag =
    `${meta?.publicId ?? 'empty'}.${q.limit}.${q.offset}.${q.updatedSince ?? ''}${tombstones ? '.d' : ''}` +
    (subset.tag ? `.${subset.tag}` : '');
  const envelope = (total: number, returned: number) => {
    const nextOffset = q.offset + returned;
    return (
      `{"ok":true,${v.sandbox ? '"sandbox":true,' : ''}"total":${total},"limit":${q.limit},` +
      `"offset":${q.offset},"has_more":${nextOffset < total},"next_offset":${nextOffset},` +
      `"snapshot":${meta ? JSON.stringify(meta.publicId) : 'null'},"items":[`
    );
  };
  const source = v.source;
  const { filters, fields } = subset;
  if (tombstones) {
    return {
      tag,
      hasMore: false,
      nextOffset: q.offset,
      pieces: async () => {
        const page = await mergedPage(source, meta, tombstones, q.updatedSince, q.offset, q.limit);
        // Filtered: a live record that does not match is sent as a tombstone (contract §6, convergence).
        const matched = meta && filters ? await matches.matches(source, meta, filters) : null;
        const isItem = matched ? (pos: number) => matched[firstAtLeast(matched, pos)] === pos : null;
        const items = meta ? await renderEntries(source, meta, page.entries, fields, isItem, projections) : [];
        return [Buffer.from(envelope(page.total, page.entries.length)), ...items, ITEMS_CLOSE];
      },
      gzip: undefined,
    };
  }
  const count = meta?.count ?? 0;
  const first = meta && q.updatedSince !== null ? firstPositionSince(meta, q.updatedSince) : 0;
  if (meta && (filters || fields)) {
    let total: number;
    let size: number;
    let items: () => Promise<Buffer[]>;
    if (filters) {
      const matched = await matches.matches(source, meta, filters);
      const k0 = firstAtLeast(matched, first);
      total = matched.length - k0;
      const a = Math.min(k0 + q.offset, matched.length);
      const page = matched.subarray(a, Math.min(a + q.limit, matched.length));
      size = page.length;
      // Whole items: slices of the filter's blocks, where the source gathers them (gathered-page.ts).
      const blocks = source.blocks;
      items =
        fields === null && blocks
          ? () => gatheredItems(source, blocks, meta, filters.key, matched, a, a + page.length)
          : () => renderEntries(source, meta, page, fields, null, projections);
    } else {
      total = count - first;
      const a = Math.min(first + q.offset, count);
      const b = Math.min(a + q.limit, count);
      size = b - a;
      // Consecutive thin items are walked by chunk (thin-page.ts).
      items = fields!.data ? () => renderEntries(source, meta, positionRange(a, b), fields, null, projections) : () => renderThinRange(source, meta, a, b, fields!, projections);
    }
    const nextOffset = q.offset + size;
    return {
      tag,
      hasMore: nextOffset < total,
      nextOffset,
      // Items are not contiguous, so chunk segments do not apply: the body is compressed whole, and cached by ETag.
      pieces: async () => [Buffer.from(envelope(total, size)), ...(await items()), ITEMS_CLOSE],
      gzip: undefined,
    };
  }
  const total = count - first;
  const start = Math.min(first + q.offset, count);
  const end = Math.min(start + q.limit, count);
  const nextOffset = q.offset + (end - start);
  return {
    tag,
    hasMore: nextOffset < total,
    nextOffset,
    pieces: async () => {
      const items = meta ? await readItems(source, meta, start, end) : [];
      return [Buffer.from(envelope(total, end - start)), ...items, ITEMS_CLOSE];
    },
    // The same bytes, gzipped from the chunks' segments (made once, after publication).
    gzip:
      meta && source.segments
        ? async () => {
            const head = Buffer.from(envelope(total, end - start));
            return assembleGzip(await readBodyParts(source, meta, start, end, head, ITEMS_CLOSE));
          }
        : undefined,
  };
}

/** A detail: `{"ok":true,"item":…}` around the record's bytes. */
export function detailBody(v: View, meta: SnapshotMeta, record: RecordRef, subset?: Subset, projections: ProjectionCache | null = null): CacheableBody {
  const head = v.sandbox ? SANDBOX_ITEM_HEAD : ITEM_HEAD;
  const fields = subset?.fields;
  if (fields) {
    return {
      tag: `i${record.hash.toString('hex', 0, 12)}.${record.actualizadoAt.toString(36)}${v.sandbox ? '.s' : ''}.${subset!.tag}`,
      cacheControl: v.sandbox ? SANDBOX_CACHE : REAL_CACHE,
      vary: v.sandbox ? SANDBOX_VARY : REAL_VARY,
      meter: v.meter,
      pieces: async () => [head, ...(await renderEntries(v.source, meta, [record.pos], fields, null, projections)), ITEM_CLOSE],
    };
  }
  return {
    // The item is a function of its content and time: the tag survives imports that leave it alone.
    tag: `i${record.hash.toString('hex', 0, 12)}.${record.actualizadoAt.toString(36)}${v.sandbox ? '.s' : ''}`,
    cacheControl: v.sandbox ? SANDBOX_CACHE : REAL_CACHE,
    vary: v.sandbox ? SANDBOX_VARY : REAL_VARY,
    meter: v.meter,
    pieces: async () => [head, ...(await readItem(v.source, meta, record.pos)), ITEM_CLOSE],
    cachedPieces: () => {
      const item = cachedItem(v.source, meta, record.pos);
      return item && [head, ...item, ITEM_CLOSE];
    },
  };
}

/** Positions `from..to - 1`. */
function positionRange(from: number, to: number): Uint32Array {
  const out = new Uint32Array(Math.max(0, to - from));
  for (let i = 0; i < out.length; i++) out[i] = from + i;
  return out;
}

export function clip(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
