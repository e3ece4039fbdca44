/**
 * The column-drift guard (contract §2): an upload whose header does not look
 * like the kind it was uploaded as is held for an administrator's decision,
 * like the mass-deletion guard's, whatever the record counts. Uploading
 * articulos.csv as obras would otherwise replace every work with articles
 * whose names, customers and states are all null.
 *
 * - The kind has data: the header must share at least half of its column
 *   names (exactly, as `data` keys them) with the live snapshot's header.
 * - The kind has no data yet: no other kind's default mapping may fit the
 *   header clearly better (see `kindFit` and `clearlyBetter`).
 */
import { KINDS, KIND_SPECS, type Kind } from '../domain/kinds.js';
import { previewMapping } from './column-mapping.js';

/** Names listed in a report, at most, per list (the counts are always whole). */
const LISTED_NAMES = 100;

export interface ColumnDrift {
  /** Column names of the upload also in the live header. */
  shared: number;
  /** Columns of the upload. */
  columns: number;
  /** Columns of the live snapshot. */
  live_columns: number;
  /** In the upload, not in the live header (the first LISTED_NAMES, in file order). */
  appeared: string[];
  appeared_count: number;
  /** In the live header, not in the upload (the first LISTED_NAMES, in the live file's order). */
  disappeared: string[];
  disappeared_count: number;
}

/**
 * The drift of `columns` from the live header `liveColumns`, when it is
 * enough to hold the import: fewer than half of the upload's column names
 * are in the live header. Null otherwise.
 *
 * @example
 * columnDrift(['CODIGO', 'NOMBRE', 'ESTADO'], ['CODIGO', 'PVP', 'UNIDAD']) // { shared: 1, columns: 3, … }
 */
export function columnDrift(liveColumns: readonly string[], columns: readonly string[]): ColumnDrift | null {
  const live = new Set(liveColumns);
  const upload = new Set(columns);
  const shared = columns.filter((name) => live.has(name)).length;
  if (shared * 2 >= columns.length) return null;
  const appeared = columns.filter((name) => !live.has(name));
  const disappeared = liveColumns.filter((name) => !upload.has(name));
  return {
    shared,
    columns: columns.length,
    live_columns: liveColumns.length,
    appeared: appeared.slice(0, LISTED_NAMES),
    appeared_count: appeared.length,
    disappeared: disappeared.slice(0, LISTED_NAMES),
    disappeared_count: disappeared.length,
  };
}

/**
 * How well a header fits a kind, from the columns its mapping feeds each
 * field with (`sources`: field → column or null). Only the fields that can
 * tell kinds apart count: `id_erp` is left out (every kind looks for the same
 * names), and so is a field fed by the id column itself (`codigo` from
 * `CODIGO`: every export has a code).
 */
export interface KindFit {
  /** Fields fed from a column of the file. */
  fed: number;
  /** Fields no column feeds. */
  unfed: number;
}

export function kindFit(kind: Kind, sources: Readonly<Record<string, string | null>>): KindFit {
  const idColumn = sources.id_erp ?? null;
  const fit = { fed: 0, unfed: 0 };
  for (const field of KIND_SPECS[kind].fields.slice(1)) {
    const column = sources[field.name] ?? null;
    if (column === null) fit.unfed++;
    else if (column !== idColumn) fit.fed++;
  }
  return fit;
}

/**
 * Kind `other` fits clearly better than `uploaded` when its mapping feeds
 * more of its fields *and* leaves fewer of them unfed: better on both counts,
 * so a header that merely shares a few common names (`DESCRIPCION`,
 * `CLIENTE`, `ESTADO` are works' and notices' alike) is never held.
 */
export function clearlyBetter(other: KindFit, uploaded: KindFit): boolean {
  return other.fed > uploaded.fed && other.unfed < uploaded.unfed;
}

export interface OtherKind {
  /** The kind the header fits clearly better. */
  kind: Kind;
  /** Every kind's fit (the uploaded kind's with the company's mapping, the others' with their defaults). */
  fits: Record<string, KindFit>;
}

/**
 * The kind that `columns` looks like instead of `kind`, if another kind's
 * default mapping fits them clearly better than `kind`'s mapping
 * (`sources`, the company's override included); null otherwise. Among
 * several, the one feeding most fields, then leaving fewest unfed, then the
 * first in KINDS.
 *
 * @example
 * otherKind('obras', articulosHeader, sourcesAsObras) // { kind: 'articulos', fits: { … } }
 */
export function otherKind(kind: Kind, columns: readonly string[], sources: Readonly<Record<string, string | null>>): OtherKind | null {
  const fits: Record<string, KindFit> = {};
  const uploaded = kindFit(kind, sources);
  let best: Kind | null = null;
  for (const other of KINDS) {
    if (other === kind) {
      fits[other] = uploaded;
      continue;
    }
    const preview = previewMapping(other, columns);
    const fit = (fits[other] = kindFit(other, preview));
    // A kind with no id column could not import the file at all.
    if (preview.id_erp === null || !clearlyBetter(fit, uploaded)) continue;
    const top = best === null ? null : (fits[best] as KindFit);
    if (top === null || fit.fed > top.fed || (fit.fed === top.fed && fit.unfed < top.unfed)) best = other;
  }
  return best === null ? null : { kind: best, fits };
}
