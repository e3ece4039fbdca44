/**
 * The audit trail's vocabulary: who did what to which company. Every
 * administrative action — in the panel, the CLI or through an upload token —
 * becomes one `AuditEvent`, written by the store in the same transaction as
 * the action where the store allows it (see `Store.recordAudit` and the
 * `audit` parameters of the store's methods).
 *
 * An event says what it touched (ids, prefixes, kinds, counts), never a
 * secret: `auditEvent` masks anything shaped like a full key, token or
 * signing secret, so a careless caller cannot put one in the trail.
 *
 * @example
 * await store.revokeCredential(prefix, auditEvent(actor, company.id, 'key.revoke', { prefix }));
 * await store.recordAudit(auditEvent(actor, company.id, 'session.sign_out'));
 */

/** Every action the trail records, grouped by the part before the dot. */
export const AUDIT_ACTIONS = [
  'session.sign_in',
  'session.sign_in_failed',
  'session.sign_out',
  'key.create',
  'key.revoke',
  'token.create',
  'token.revoke',
  'import.upload',
  'import.confirm',
  'import.reject',
  'mapping.change',
  'user.create',
  'guard.change',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The groups: `key` selects `key.create` and `key.revoke`. */
export const AUDIT_GROUPS: readonly string[] = [...new Set(AUDIT_ACTIONS.map((a) => a.split('.')[0]!))];

/**
 * The actions a filter names: an action itself, or a group (the part before
 * the dot); null when it names neither.
 */
export function auditActionsFor(filter: string): AuditAction[] | null {
  const actions = AUDIT_ACTIONS.filter((a) => a === filter || a.startsWith(`${filter}.`));
  return actions.length > 0 ? actions : null;
}

/** The actions of a group, in catalog order. */
export const actionsOfGroup = (group: string): AuditAction[] => AUDIT_ACTIONS.filter((a) => a.startsWith(`${group}.`));

/** Who acted, and from where. */
export interface AuditActor {
  /** A panel user's email, `cli:<OS user>`, or `token:<prefix>`. */
  actor: string;
  /** The client's address for HTTP actions; null for the CLI. */
  ip: string | null;
}

export interface AuditEvent extends AuditActor {
  companyId: number;
  action: AuditAction;
  /** What it touched: ids, prefixes, kinds, counts. Never a secret. */
  details: Record<string, unknown>;
}

/** An event as stored, with its id (increasing) and time. */
export interface AuditEntry extends AuditEvent {
  id: number;
  at: Date;
}

export const cliActor = (osUser: string): AuditActor => ({ actor: `cli:${osUser || 'unknown'}`, ip: null });
export const tokenActor = (prefix: string, ip: string | null): AuditActor => ({ actor: `token:${prefix}`, ip });
export const userActor = (email: string, ip: string | null): AuditActor => ({ actor: email, ip });

/** Full credentials (`api_…`, `upl_…`) and webhook secrets (`whsec_…`) anywhere in a string. */
const SECRET = /\b(api|upl)_([a-z0-9]{8})_[0-9A-Za-z]{8,}|\bwhsec_[0-9A-Za-z_-]{4,}/g;

function mask(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.replace(SECRET, (_m, tag: string | undefined, prefix: string | undefined) => (tag ? `${tag}_${prefix}_…` : 'whsec_…'));
  }
  if (Array.isArray(value)) return value.map(mask);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v)]));
  }
  return value;
}

/** An event ready for the store, with anything secret-shaped masked. */
export function auditEvent(who: AuditActor, companyId: number, action: AuditAction, details: Record<string, unknown> = {}): AuditEvent {
  return { actor: mask(who.actor) as string, ip: who.ip, companyId, action, details: mask(details) as Record<string, unknown> };
}

/** Audit entries are kept at least this long by default (AUDIT_RETENTION_DAYS). */
export const DEFAULT_AUDIT_RETENTION_MS = 365 * 86_400_000;

/** The event of an upload; the store adds `import_id` and `size_bytes` when it is queued. */
export function uploadAudit(who: AuditActor, companyId: number, kind: string, filename: string, source: string): AuditEvent {
  return auditEvent(who, companyId, 'import.upload', { kind, filename, source });
}

/** Details on one line, `key=value` (nested values as JSON), for the CLI's table and the panel. */
export function describeDetails(details: Record<string, unknown>): string {
  return Object.entries(details)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
}
