/**
 * The hot path's lookups kept in memory by a store that answers requests:
 * which snapshot is live for each company and kind, and where a record sits
 * in a snapshot. A detail or a 304 then costs no query at all on PostgreSQL,
 * and on SQLite one `PRAGMA data_version` instead of a join (measured: about
 * 1.3× the details per second).
 *
 * Record positions need no invalidation: a published snapshot never changes,
 * and snapshot ids are not reused while a newer snapshot of the same kind
 * exists (a superseded one is only swept after its successor is live). Live
 * pointers do change: each adapter calls `forgetLive` when it learns of a
 * publication (SQLite: `data_version` moved or this connection published;
 * PostgreSQL: a notification, or the listener reconnected).
 *
 * When a kind's live snapshot is learnt to have changed, the positions kept
 * for the one before are dropped: only a `snapshot=` read asks for them
 * again. Kept until evicted, they filled the cache with superseded
 * snapshots' records, import after import (the soak, an import every 15 s:
 * 6,000 more entries, ~2 MB of heap, every 2.5 minutes).
 */
import { ClockMap } from '../domain/clock-map.js';
import type { Kind } from '../domain/kinds.js';
import type { RecordRef } from './store.js';

/** About 250 bytes each with their keys: ~12 MB when full. */
export const MAX_CACHED_RECORDS = 50_000;
/** Longer ids are looked up every time rather than let a few requests fill the cache with large keys. */
const MAX_CACHED_ID_LENGTH = 128;

export class LiveCache {
  private readonly live = new Map<string, number | null>();
  /** The live snapshot last learnt of per company and kind: unlike `live`, kept across `forgetLive`. */
  private readonly lastLive = new Map<string, number | null>();
  /** Positions per snapshot: a superseded snapshot's go in one `delete`. */
  private readonly records = new Map<number, ClockMap<string, RecordRef>>();
  private recordCount = 0;
  /** Moves on every `forgetLive`: a lookup started before it must not be remembered after it. */
  private epoch = 0;

  constructor(private readonly maxRecords = MAX_CACHED_RECORDS) {}

  forgetLive(): void {
    this.live.clear();
    this.epoch++;
  }

  /** The epoch to hand back to `rememberLive` once an asynchronous lookup answers. */
  get currentEpoch(): number {
    return this.epoch;
  }

  /** The live snapshot's id, null for none, or undefined when not known. */
  liveSnapshotId(companyId: number, kind: Kind): number | null | undefined {
    return this.live.get(liveKey(companyId, kind));
  }

  rememberLive(epoch: number, companyId: number, kind: Kind, snapshotId: number | null): void {
    if (epoch !== this.epoch) return;
    const key = liveKey(companyId, kind);
    this.live.set(key, snapshotId);
    const before = this.lastLive.get(key);
    this.lastLive.set(key, snapshotId);
    if (before !== undefined && before !== null && before !== snapshotId) this.dropRecords(before);
  }

  /** Drops the positions kept for `snapshotId`. */
  private dropRecords(snapshotId: number): void {
    const inSnapshot = this.records.get(snapshotId);
    if (!inSnapshot) return;
    this.recordCount -= inSnapshot.size;
    this.records.delete(snapshotId);
  }

  record(snapshotId: number, idErp: string): RecordRef | undefined {
    // Marked as used (CLOCK, domain/clock-map.ts): the snapshot's least used position leaves first.
    return this.records.get(snapshotId)?.get(idErp);
  }

  /**
   * Only records that exist are kept: ids that do not are unbounded, and a 404 is cheap enough.
   * Kept as given: the stores read hashes into memory of their own (the store contract checks it),
   * so a kept hash holds no larger buffer alive. When full, the least recently used position of
   * the snapshot first remembered goes (CLOCK: a position used since the last pass stays).
   */
  rememberRecord(snapshotId: number, idErp: string, record: RecordRef): void {
    if (idErp.length > MAX_CACHED_ID_LENGTH || this.maxRecords === 0) return;
    if (!this.records.get(snapshotId)?.has(idErp)) {
      if (this.recordCount >= this.maxRecords) this.evictOne();
      this.recordCount++;
    }
    let inSnapshot = this.records.get(snapshotId);
    if (!inSnapshot) this.records.set(snapshotId, (inSnapshot = new ClockMap()));
    inSnapshot.set(idErp, record);
  }

  private evictOne(): void {
    const [snapshotId, inSnapshot] = this.records.entries().next().value!;
    inSnapshot.evict();
    this.recordCount--;
    if (inSnapshot.size === 0) this.records.delete(snapshotId);
  }

  /** How much is kept (tests look at it). */
  get size(): { live: number; records: number } {
    return { live: this.live.size, records: this.recordCount };
  }
}

const liveKey = (companyId: number, kind: Kind) => `${companyId}:${kind}`;
