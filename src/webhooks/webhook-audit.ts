/**
 * The audit events of webhook endpoints (`webhook.create`, `webhook.update`,
 * `webhook.delete`), the same from the panel and the CLI. The URL is recorded
 * without its query string or fragment: a receiver may take a token there,
 * and the trail never holds a secret. The signing secret is never passed.
 */
import { auditEvent, type AuditActor, type AuditEvent } from '../domain/audit.js';
import type { EventType } from '../store/events.js';

/** The URL as the trail shows it: scheme, host, port and path. */
export function auditedUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '';
  }
}

/** A new endpoint's event; the store adds its `webhook_id`. */
export function webhookCreateAudit(who: AuditActor, companyId: number, url: string, eventTypes: readonly EventType[]): AuditEvent {
  return auditEvent(who, companyId, 'webhook.create', { url: auditedUrl(url), events: eventTypes.length === 0 ? ['*'] : [...eventTypes] });
}

/** Enabling or disabling an endpoint (written only when it changed). */
export function webhookUpdateAudit(who: AuditActor, endpoint: { id: number; companyId: number; url: string }, enabled: boolean): AuditEvent {
  return auditEvent(who, endpoint.companyId, 'webhook.update', { webhook_id: endpoint.id, url: auditedUrl(endpoint.url), enabled });
}

export function webhookDeleteAudit(who: AuditActor, endpoint: { id: number; companyId: number; url: string }): AuditEvent {
  return auditEvent(who, endpoint.companyId, 'webhook.delete', { webhook_id: endpoint.id, url: auditedUrl(endpoint.url) });
}
