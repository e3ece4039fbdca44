/**
 * Events and webhooks in the store (contract §7). An event row is inserted in
 * the same transaction that ends its import (an outbox), together with one
 * delivery row per webhook endpoint that wants it; the delivery loop
 * (webhooks/delivery-loop.ts) claims deliveries like the import worker claims
 * imports. Both adapters share the types and the rendering here.
 */
import { randomBytes } from 'node:crypto';
import type { AuditEvent } from '../domain/audit.js';

export const EVENT_TYPES = ['import.published', 'import.held', 'import.failed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** Sent only by "send a test event" (panel, `mirador webhook test`); never in the feed. */
export const TEST_EVENT_TYPE = 'webhook.test';

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** Events are kept at least this long by default (contract §7: at least 30 days). */
export const DEFAULT_EVENT_RETENTION_MS = 30 * 24 * 3600 * 1000;

export interface EventCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

/** An event as the store keeps it: `body` is its JSON exactly as served and delivered. */
export interface StoredEvent {
  id: number;
  publicId: string;
  companyId: number;
  type: string;
  createdAt: number;
  body: string;
}

export interface EventPage {
  /** Events matching the filter (not the page length). */
  total: number;
  /** Their bodies, oldest first (created_at, then id). */
  bodies: string[];
}

export function newEventId(): string {
  // 24 hex characters: unique across databases and instances without coordination.
  return `evt_${randomBytes(12).toString('hex')}`;
}

/** An event's JSON, keys in the contract's order. */
export function renderEvent(e: {
  publicId: string;
  type: string;
  createdAt: number;
  kind: string | null;
  importId: number | null;
  snapshot: string | null;
  counts: EventCounts;
}): string {
  return JSON.stringify({
    id: e.publicId,
    type: e.type,
    created_at: new Date(e.createdAt).toISOString(),
    data: {
      kind: e.kind,
      import_id: e.importId,
      snapshot: e.snapshot,
      counts: { inserted: e.counts.inserted, updated: e.counts.updated, unchanged: e.counts.unchanged, deleted: e.counts.deleted },
    },
  });
}

const ZERO: EventCounts = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };

/**
 * The counts an event reports: a published or held import's from its report
 * (what happened, or would happen on confirmation); a failed import changed
 * nothing for readers, so zeros.
 */
export function eventCounts(type: EventType, report: unknown): EventCounts {
  if (type === 'import.failed' || typeof report !== 'object' || report === null) return ZERO;
  const r = report as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return { inserted: n(r.inserted), updated: n(r.updated), unchanged: n(r.unchanged), deleted: n(r.deleted) };
}

/** What ends an import, for the event the store writes with it. */
export interface ImportEnd {
  importId: number;
  type: EventType;
  /** The published snapshot's public id; null unless published. */
  snapshot: string | null;
  report: unknown;
  at: number;
}

// --- Webhooks ---------------------------------------------------------------------------------

export interface WebhookEndpoint {
  id: number;
  companyId: number;
  url: string;
  /** The types it receives; empty: every type. */
  eventTypes: EventType[];
  /** `whsec_…`: signs deliveries. Kept in the store (HMAC needs it), never logged. */
  secret: string;
  createdAt: Date;
  /** When it stopped receiving deliveries; null while enabled. */
  disabledAt: Date | null;
  /** `manual` (an administrator), `failing` (every attempt failed for the whole retry period). */
  disabledReason: 'manual' | 'failing' | null;
  lastSuccessAt: Date | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  id: number;
  endpointId: number;
  companyId: number;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  createdAt: Date;
  nextAttemptAt: Date | null;
  finishedAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

/** A delivery claimed for one attempt, with what the attempt needs. */
export interface ClaimedDelivery {
  id: number;
  endpointId: number;
  url: string;
  secret: string;
  eventId: string;
  eventType: string;
  body: string;
  /** Attempts made before this one. */
  attempts: number;
  /** When the current retry period began (creation, or the last "send again"). */
  windowStartedAt: number;
}

export interface WebhookAttempt {
  id: number;
  deliveryId: number;
  endpointId: number;
  eventId: string;
  eventType: string;
  at: Date;
  durationMs: number;
  /** The HTTP status; null when no response came (timeout, refused, unsafe address). */
  statusCode: number | null;
  ok: boolean;
  error: string | null;
}

/** The result of one attempt, as `finishDelivery` records it. */
export interface AttemptResult {
  at: number;
  durationMs: number;
  statusCode: number | null;
  ok: boolean;
  error: string | null;
  /** At most 4 KiB of the response body, as text. */
  responseBody: string | null;
  /**
   * When a failed attempt is retried; null: never again (the retry period is
   * over), and the endpoint is disabled if it failed for the whole period.
   */
  retryAt: number | null;
}

/** The store's part of events and webhooks; `Store` extends it. */
export interface EventStore {
  /**
   * A company's events, oldest first, from `since` (created_at, inclusive) on.
   *
   * @example
   * const { total, bodies } = await store.listEvents(company.id, null, 0, 100);
   */
  listEvents(companyId: number, since: number | null, offset: number, limit: number): Promise<EventPage>;
  /** Deletes events created before `before`, and finished deliveries and attempts older than it. */
  sweepEvents(before: number): Promise<number>;

  /**
   * Audit events (`webhook.create`, `webhook.update`, `webhook.delete`) are
   * written in the same transaction as the change, and only when something
   * changed; `webhook.create` gains the new endpoint's `webhook_id`.
   */
  createWebhookEndpoint(input: { companyId: number; url: string; eventTypes: EventType[]; secret: string }, audit?: AuditEvent): Promise<WebhookEndpoint>;
  webhookEndpointById(id: number): Promise<WebhookEndpoint | null>;
  /** Oldest first. */
  listWebhookEndpoints(companyId: number): Promise<WebhookEndpoint[]>;
  /** Whether any company has an enabled endpoint: a server without one starts no delivery thread (webhooks/delivery-thread.ts). */
  hasEnabledWebhookEndpoint(): Promise<boolean>;
  /**
   * Disables (manually) or enables an endpoint. Enabling gives its pending
   * deliveries a fresh retry period, due now. Returns it, or null if unknown.
   */
  setWebhookEndpointEnabled(id: number, enabled: boolean, audit?: AuditEvent): Promise<WebhookEndpoint | null>;
  /** Deletes an endpoint with its deliveries and attempts; false when unknown. */
  deleteWebhookEndpoint(id: number, audit?: AuditEvent): Promise<boolean>;
  /**
   * Queues a delivery of an event that is not in the feed (a test event) to
   * one endpoint. `claimedBy` claims it at once for that worker (the CLI
   * sends it itself).
   */
  queueDelivery(
    endpointId: number,
    event: { publicId: string; type: string; body: string },
    claim?: { worker: string; leaseMs: number },
  ): Promise<WebhookDelivery>;
  /** "Send again": the delivery is pending again, due now, with a fresh retry period. Null when unknown. */
  redeliver(deliveryId: number): Promise<WebhookDelivery | null>;
  deliveryById(id: number): Promise<WebhookDelivery | null>;
  /** Newest first. */
  listDeliveries(endpointId: number, limit: number): Promise<WebhookDelivery[]>;
  /** Newest first. */
  listAttempts(endpointId: number, limit: number): Promise<WebhookAttempt[]>;
  /**
   * Claims up to `limit` due deliveries of enabled endpoints for `worker`
   * until `now + leaseMs` (PostgreSQL: FOR UPDATE SKIP LOCKED, so instances
   * never take the same one), leaving out the endpoints in `skipEndpoints`.
   */
  claimDeliveries(worker: string, limit: number, leaseMs: number, skipEndpoints: readonly number[], now?: number): Promise<ClaimedDelivery[]>;
  /** Records an attempt of a delivery `worker` claimed and ends the claim. False when the claim was lost. */
  finishDelivery(deliveryId: number, worker: string, result: AttemptResult): Promise<boolean>;
  /** Frees the claims of workers that `isGone` says are dead (a killed process): retried at once. */
  releaseDeliveries(isGone: (worker: string) => boolean): Promise<number>;
}
