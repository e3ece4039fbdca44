/**
 * Examples for the OpenAPI document, cut from the sandbox snapshots: the very
 * bytes the sandbox serves, so an example can never drift from the format
 * (a test compares them with live sandbox responses).
 */
import { KINDS, type Kind } from '../../domain/kinds.js';
import type { SandboxSnapshots } from '../../sandbox/sandbox-snapshots.js';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';
import { sliceItems } from './snapshot-reader.js';

/** Items per list example: two, so that `has_more` and `next_offset` show paging at work. */
export const EXAMPLE_PAGE_SIZE = 2;

export interface KindExamples {
  /** The body of `GET /v1/sandbox/<kind>?limit=2`. */
  sandboxList: Record<string, unknown>;
  /** The same page as a real list: no `sandbox` key. */
  list: Record<string, unknown>;
  /** The body of `GET /v1/sandbox/<kind>/<first id>`. */
  sandboxDetail: Record<string, unknown>;
  detail: Record<string, unknown>;
  /** The id of that first record, for the path parameter's example. */
  firstId: string;
  /** `GET /v1/sandbox/<kind>?updated_since=<deletedSince>&include_deleted=true`: records and tombstones. */
  sandboxDeletedList: Record<string, unknown>;
  deletedSince: string;
}

type Row = { id_erp: string; actualizado_at: string };

export function sandboxExamples(sandbox: SandboxSnapshots): Record<Kind, KindExamples> {
  const out = {} as Record<Kind, KindExamples>;
  for (const kind of KINDS) {
    const { meta, chunks } = sandbox.byKind[kind];
    const n = Math.min(EXAMPLE_PAGE_SIZE, meta.count);
    // Parsed once at start, never on the request path.
    const items = JSON.parse(`[${Buffer.concat(sliceItems(chunks, 0, n)).toString('utf8')}]`) as { id_erp: string }[];
    const page = { total: meta.count, limit: EXAMPLE_PAGE_SIZE, offset: 0, has_more: n < meta.count, next_offset: n, snapshot: meta.publicId, items };
    const first = items[0]!;
    // The sandbox's latest import: the records it changed and the one it removed.
    const last = meta.timeline[meta.timeline.length - 1]!;
    const changed = JSON.parse(`[${Buffer.concat(sliceItems(chunks, last.firstPos, meta.count)).toString('utf8')}]`) as Row[];
    const removed = sandbox.byKind[kind].tombstones.filter((t) => t.at >= last.at).map((t) => JSON.parse(t.json.toString('utf8')) as Row);
    const merged = [...changed, ...removed].sort(
      (a, b) => (a.actualizado_at < b.actualizado_at ? -1 : a.actualizado_at > b.actualizado_at ? 1 : Buffer.compare(Buffer.from(a.id_erp), Buffer.from(b.id_erp))),
    );
    out[kind] = {
      deletedSince: new Date(last.at).toISOString(),
      sandboxDeletedList: {
        ok: true, sandbox: true, total: merged.length, limit: 100, offset: 0, has_more: false,
        next_offset: merged.length, snapshot: meta.publicId, items: merged,
      },
      sandboxList: { ok: true, sandbox: true, ...page },
      list: { ok: true, ...page },
      sandboxDetail: { ok: true, sandbox: true, item: first },
      detail: { ok: true, item: first },
      firstId: first.id_erp,
    };
  }
  return out;
}

/**
 * The body of `GET /v1/sandbox/estado` (`sandbox`), and the same state as a
 * real estado would show it (`real`, without the `sandbox` key).
 */
export function estadoExamples(sandbox: SandboxSnapshots): { sandbox: Record<string, unknown>; real: Record<string, unknown> } {
  const kinds = Object.fromEntries(
    KINDS.map((kind) => {
      const meta = sandbox.byKind[kind].meta;
      return [kind, { total: meta.count, importado_at: meta.publishedAt ? new Date(meta.publishedAt).toISOString() : null, snapshot: meta.publicId }];
    }),
  );
  return { sandbox: { ok: true, sandbox: true, kinds }, real: { ok: true, kinds } };
}

/** An error body for `code`, with the catalog's message, as `#/components/examples/<code>`. */
export function errorExample(code: ErrorCode) {
  return {
    summary: code,
    value: {
      ok: false,
      error: code,
      message: ERROR_CATALOG[code].message,
      request_id: '0f6f4d3e-7c1a-4c55-9a57-2f1b1f0e9d2a',
    },
  };
}
