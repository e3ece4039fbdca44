/** Row ↔ object conversions of the event and webhook tables, shared by both adapters. */
import { isEventType, type ClaimedDelivery, type DeliveryStatus, type WebhookAttempt, type WebhookDelivery, type WebhookEndpoint } from './events.js';

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

export interface EndpointRow {
  id: number; company_id: number; url: string; event_types: string; secret: string; created_at: number;
  disabled_at: number | null; disabled_reason: string | null; last_success_at: number | null;
}
export const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  companyId: r.company_id,
  url: r.url,
  eventTypes: (JSON.parse(r.event_types) as string[]).filter(isEventType),
  secret: r.secret,
  createdAt: new Date(r.created_at),
  disabledAt: date(r.disabled_at),
  disabledReason: r.disabled_reason === 'manual' || r.disabled_reason === 'failing' ? r.disabled_reason : null,
  lastSuccessAt: date(r.last_success_at),
});

export interface DeliveryRow {
  id: number; endpoint_id: number; company_id: number; event_id: string; event_type: string; body: string;
  status: DeliveryStatus; attempts: number; created_at: number; window_started_at: number; next_attempt_at: number | null;
  claimed_by: string | null; claimed_until: number | null; finished_at: number | null;
  last_status_code: number | null; last_error: string | null;
}
export const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  companyId: r.company_id,
  eventId: r.event_id,
  eventType: r.event_type,
  status: r.status,
  attempts: r.attempts,
  createdAt: new Date(r.created_at),
  nextAttemptAt: r.status === 'pending' ? date(r.next_attempt_at) : null,
  finishedAt: date(r.finished_at),
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
});

export const toClaimed = (r: DeliveryRow & { url: string; secret: string }): ClaimedDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  url: r.url,
  secret: r.secret,
  eventId: r.event_id,
  eventType: r.event_type,
  body: r.body,
  attempts: r.attempts,
  windowStartedAt: r.window_started_at,
});

export interface AttemptRow {
  id: number; delivery_id: number; endpoint_id: number; event_id: string; event_type: string; at: number;
  duration_ms: number; status_code: number | null; ok: number | boolean; error: string | null;
}
export const toAttempt = (r: AttemptRow): WebhookAttempt => ({
  id: r.id,
  deliveryId: r.delivery_id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventType: r.event_type,
  at: new Date(r.at),
  durationMs: r.duration_ms,
  statusCode: r.status_code,
  ok: r.ok === true || r.ok === 1,
  error: r.error,
});

/** The attempt columns shown in lists (not the response body). */
export const ATTEMPT_COLUMNS = 'id, delivery_id, endpoint_id, event_id, event_type, at, duration_ms, status_code, ok, error';
