/** The event "send a test event" delivers: the shape of every event, type `webhook.test`, never in the feed. */
import { EVENT_TYPES, isEventType, newEventId, renderEvent, TEST_EVENT_TYPE, type EventType } from '../store/events.js';

export function testEvent(now = Date.now()): { publicId: string; type: string; body: string } {
  const publicId = newEventId();
  return {
    publicId,
    type: TEST_EVENT_TYPE,
    body: renderEvent({
      publicId,
      type: TEST_EVENT_TYPE,
      createdAt: now,
      kind: null,
      importId: null,
      snapshot: null,
      counts: { inserted: 0, updated: 0, unchanged: 0, deleted: 0 },
    }),
  };
}

/** `a,b` from a form or the command line: known event types, or an error naming the unknown one. */
export function parseEventTypes(raw: string | readonly string[] | undefined): EventType[] {
  const parts = (Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : []).map((p) => p.trim()).filter(Boolean);
  const out: EventType[] = [];
  for (const p of parts) {
    if (!isEventType(p)) throw new UnknownEventTypeError(p);
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

export class UnknownEventTypeError extends Error {
  constructor(readonly type: string) {
    super(`"${type.slice(0, 60)}" is not an event type: use ${EVENT_TYPES.join(', ')}.`);
  }
}
