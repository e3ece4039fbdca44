/**
 * Which column of an uploaded file feeds each highlighted field of its kind
 * (contract §2). For each field, in order:
 * 1. the company's override, which names an exact column of the file;
 * 2. a column named like the field itself (`ID_ERP`, `CLIENTE_ID_ERP`, `PRECIO`…);
 * 3. the kind's default names, best first (for `id_erp`, `CODIGO` first).
 * Names are compared through `normaliseColumnName` (case, accents, spaces,
 * underscores and a numeric prefix such as `01_` do not count). One column
 * may feed several fields: a lone `CODIGO` feeds both `id_erp` and `codigo`.
 */
import { KINDS, KIND_SPECS, normaliseColumnName, type FieldSpec, type FieldType, type Kind } from '../domain/kinds.js';
import { ImportError, listNames, quoteName } from './import-error.js';
import { auditEvent, type AuditActor, type AuditEvent } from '../domain/audit.js';

export interface ColumnMapping {
  /** One entry per `KIND_SPECS[kind].fields` entry: the column's index, or −1 when unmapped. */
  columnIndexByField: number[];
  /** Field name → the exact column name feeding it, or null. */
  sources: Record<string, string | null>;
}

/** A company's override: field name → exact column name. */
export type MappingOverride = Partial<Record<string, string>>;

export interface FieldDefaults {
  field: string;
  type: FieldType;
  /** Column names recognised, best first (the field's own name first). */
  columns: string[];
}

/** The names the default mapping recognises, per field, for the README and the panel. */
export function describeDefaults(kind: Kind): FieldDefaults[] {
  return KIND_SPECS[kind].fields.map((field) => ({ field: field.name, type: field.type, columns: candidateNames(field) }));
}

/**
 * @example
 * resolveMapping('clientes', ['CODIGO', '01_NOMBRE_COMERCIAL']).sources
 * // { id_erp: 'CODIGO', nombre: '01_NOMBRE_COMERCIAL', cif: null, … }
 */
export function resolveMapping(kind: Kind, columns: readonly string[], override: MappingOverride = {}): ColumnMapping {
  const spec = KIND_SPECS[kind];
  for (const field of Object.keys(override)) {
    if (override[field] !== undefined && !spec.fields.some((f) => f.name === field)) {
      const fields = spec.fields.map((f) => f.name).join(', ');
      throw new ImportError('bad_mapping', `The mapping of ${kind} names the field ${quoteName(field)}, which ${kind} does not have (its fields: ${fields}).`);
    }
  }
  const normalised = columns.map(normaliseColumnName);
  const columnIndexByField = spec.fields.map((field) => {
    const chosen = override[field.name];
    if (chosen === undefined) return findDefault(candidateNames(field), columns, normalised);
    const at = columns.indexOf(chosen);
    if (at !== -1) return at;
    const near = normalised.indexOf(normaliseColumnName(chosen));
    const hint = near === -1 ? '' : ` Did you mean ${quoteName(columns[near] as string)}?`;
    throw new ImportError(
      'bad_mapping',
      `The mapping of ${kind} feeds ${field.name} from column ${quoteName(chosen)}, which is not in the file (names must match exactly).${hint}`,
    );
  });

  if (columnIndexByField[0] === -1) {
    throw new ImportError(
      'no_id_column',
      `No column can serve as id_erp. Looked for ${listNames(candidateNames(spec.fields[0] as FieldSpec))} ` +
        `(ignoring case, accents, spaces, underscores and a numeric prefix such as "01_"). The file's columns are ${listNames(columns)}.`,
    );
  }
  // The id column feeding codigo too is no sign of the kind: every export has a code.
  const idColumn = columnIndexByField[0];
  if (columnIndexByField.every((at, i) => i === 0 || at === -1 || at === idColumn)) {
    const others = spec.fields.slice(1).map((f) => `${f.name} (${candidateNames(f).join(', ')})`);
    const likely = likelyKind(kind, columns, normalised);
    throw new ImportError(
      'wrong_kind',
      `No column of the file maps to a field of ${kind} besides id_erp; looked for ${others.join('; ')}. ` +
        (likely === null ? 'Is this the export of another kind?' : `It looks like an export of ${likely}.`),
    );
  }

  const sources: Record<string, string | null> = {};
  spec.fields.forEach((field, i) => {
    const at = columnIndexByField[i] as number;
    sources[field.name] = at === -1 ? null : (columns[at] as string);
  });
  return { columnIndexByField, sources };
}

function candidateNames(field: FieldSpec): string[] {
  // The field's own name first; names equal once normalised are listed once.
  const seen = new Set<string>();
  return [field.name.toUpperCase(), ...field.columns].filter((name) => {
    const key = normaliseColumnName(name);
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/**
 * The first candidate matching a column wins; among columns matching the
 * same candidate, one spelled exactly like it (ignoring case) beats one that
 * only matches once normalised, then file order decides.
 */
function findDefault(candidates: readonly string[], columns: readonly string[], normalised: readonly string[]): number {
  for (const candidate of candidates) {
    const want = normaliseColumnName(candidate);
    let found = -1;
    for (let i = 0; i < normalised.length; i++) {
      if (normalised[i] !== want) continue;
      if ((columns[i] as string).toUpperCase() === candidate) return i;
      if (found === -1) found = i;
    }
    if (found !== -1) return found;
  }
  return -1;
}

/** The other kind most of whose fields the columns would feed, if any. */
function likelyKind(kind: Kind, columns: readonly string[], normalised: readonly string[]): Kind | null {
  let best: Kind | null = null;
  let bestCount = 0;
  for (const other of KINDS) {
    if (other === kind) continue;
    const fields = KIND_SPECS[other].fields.slice(1);
    const id = findDefault(candidateNames(KIND_SPECS[other].fields[0] as FieldSpec), columns, normalised);
    const count = fields.filter((f) => ![-1, id].includes(findDefault(candidateNames(f), columns, normalised))).length;
    if (count > bestCount) {
      best = other;
      bestCount = count;
    }
  }
  return best;
}

/**
 * Which column would feed each field of `kind` for a file with `columns`,
 * field by field and without failing: for the panel's mapping page, which
 * must show a file even when it lacks an id column or the override names a
 * column the file does not have (that field shows null).
 */
export function previewMapping(kind: Kind, columns: readonly string[], override: MappingOverride = {}): Record<string, string | null> {
  const normalised = columns.map(normaliseColumnName);
  const sources: Record<string, string | null> = {};
  for (const field of KIND_SPECS[kind].fields) {
    const chosen = override[field.name];
    const at = chosen === undefined ? findDefault(candidateNames(field), columns, normalised) : columns.indexOf(chosen);
    sources[field.name] = at === -1 ? null : (columns[at] as string);
  }
  return sources;
}

/**
 * The audit event of a mapping change: the kind, and each field whose column
 * changed, `from` → `to` (null: the default mapping); undefined when none did.
 */
export function mappingAudit(
  who: AuditActor,
  companyId: number,
  kind: Kind,
  before: Record<string, string>,
  after: Record<string, string>,
): AuditEvent | undefined {
  const changes: Record<string, { from: string | null; to: string | null }> = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (from !== to) changes[field] = { from, to };
  }
  // Saving the same mapping again changes nothing: nothing to record.
  return Object.keys(changes).length === 0 ? undefined : auditEvent(who, companyId, 'mapping.change', { kind, changes });
}
