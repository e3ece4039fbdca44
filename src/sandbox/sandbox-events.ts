/**
 * The sandbox's event feed (GET /v1/sandbox/eventos): fixed, fictitious and
 * deterministic, in exactly the real format, spread over several dates so
 * that `updated_since` can be tried. Every type appears.
 */
import { renderEvent, type EventCounts, type EventType } from '../store/events.js';

interface SandboxEvent {
  type: EventType;
  at: string;
  kind: string;
  importId: number;
  counts: EventCounts;
}

const c = (inserted: number, updated: number, unchanged: number, deleted: number): EventCounts => ({ inserted, updated, unchanged, deleted });

const EVENTS: SandboxEvent[] = [
  { type: 'import.published', at: '2026-11-02T07:00:12.104Z', kind: 'clientes', importId: 101, counts: c(25, 0, 0, 0) },
  { type: 'import.published', at: '2026-11-02T07:01:40.517Z', kind: 'articulos', importId: 102, counts: c(40, 0, 0, 0) },
  { type: 'import.published', at: '2026-11-02T07:02:05.930Z', kind: 'obras', importId: 103, counts: c(15, 0, 0, 0) },
  { type: 'import.published', at: '2026-11-02T07:02:51.266Z', kind: 'avisos-correctivo', importId: 104, counts: c(30, 0, 0, 0) },
  { type: 'import.failed', at: '2026-11-09T06:30:00.412Z', kind: 'articulos', importId: 111, counts: c(0, 0, 0, 0) },
  { type: 'import.published', at: '2026-11-09T06:45:09.738Z', kind: 'articulos', importId: 112, counts: c(0, 6, 34, 0) },
  { type: 'import.published', at: '2026-11-16T07:00:33.051Z', kind: 'clientes', importId: 120, counts: c(2, 4, 19, 0) },
  { type: 'import.held', at: '2026-11-16T07:03:18.625Z', kind: 'obras', importId: 121, counts: c(0, 1, 3, 11) },
  { type: 'import.published', at: '2026-11-16T09:12:44.180Z', kind: 'obras', importId: 122, counts: c(0, 2, 13, 0) },
  { type: 'import.published', at: '2026-11-20T07:00:27.893Z', kind: 'avisos-correctivo', importId: 130, counts: c(3, 5, 22, 0) },
  { type: 'import.published', at: '2026-11-21T10:15:30.123Z', kind: 'clientes', importId: 131, counts: c(0, 0, 25, 0) },
  { type: 'import.published', at: '2026-11-23T07:00:51.360Z', kind: 'articulos', importId: 132, counts: c(0, 3, 37, 0) },
];

export interface SandboxFeed {
  /** Epoch ms of each event, ascending. */
  times: number[];
  /** Each event's JSON. */
  bodies: string[];
}

/** Made once: ids and snapshots are derived from the import id, so the bytes never change. */
export function sandboxEvents(): SandboxFeed {
  const events = EVENTS.map((e) => ({ ...e, ms: Date.parse(e.at) }));
  return {
    times: events.map((e) => e.ms),
    bodies: events.map((e) =>
      renderEvent({
        publicId: `evt_sandbox${String(e.importId).padStart(13, '0')}`,
        type: e.type,
        createdAt: e.ms,
        kind: e.kind,
        importId: e.importId,
        snapshot: e.type === 'import.published' ? `sandbox-ev${String(e.importId).padStart(6, '0')}` : null,
        counts: e.counts,
      }),
    ),
  };
}
