/**
 * The mass-deletion guard: an import that would remove more than a fraction of
 * a kind's records *and* more than a number of them is usually a partial
 * export, not a decision. It is held until an administrator confirms it; the
 * previous snapshot keeps serving meanwhile. Thresholds are per company.
 */
import type { AuditEvent, SnapshotChanges, Store } from '../store/store.js';

export interface DeletionGuard {
  enabled: boolean;
  /** Hold when more than this many records would go… */
  minRecords: number;
  /** …and more than this fraction of the kind's records (0–1). */
  maxFraction: number;
}

export const DEFAULT_GUARD: DeletionGuard = { enabled: true, minRecords: 100, maxFraction: 0.2 };

const settingName = (companyId: number) => `deletion_guard:${companyId}`;

export async function readGuard(store: Store, companyId: number): Promise<DeletionGuard> {
  const raw = await store.getSetting(settingName(companyId));
  return raw ? { ...DEFAULT_GUARD, ...(JSON.parse(raw) as Partial<DeletionGuard>) } : DEFAULT_GUARD;
}

export async function writeGuard(store: Store, companyId: number, guard: DeletionGuard, audit?: AuditEvent): Promise<void> {
  await store.setSetting(settingName(companyId), JSON.stringify(guard), audit);
}

/** The guard as the CLI prints it and the audit trail records it. */
export function guardJson(guard: DeletionGuard) {
  return { enabled: guard.enabled, min_records: guard.minRecords, max_fraction: guard.maxFraction };
}

/** The records the live snapshot had before this import. */
export function previousCount(changes: SnapshotChanges): number {
  return changes.updated + changes.unchanged + changes.deleted;
}

export function guardTrips(guard: DeletionGuard, changes: SnapshotChanges): boolean {
  if (!guard.enabled) return false;
  return changes.deleted > guard.minRecords && changes.deleted > guard.maxFraction * previousCount(changes);
}
