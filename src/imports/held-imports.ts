/** An administrator's decision on an import held by the mass-deletion guard. */
import { DEFAULT_TOMBSTONE_RETENTION_MS, type ImportJob, type Store } from '../store/store.js';
import type { ImportReport } from './import-report.js';

export class HeldImportError extends Error {}

async function heldImport(store: Store, companyId: number, importId: number): Promise<ImportJob> {
  const job = await store.importById(importId);
  // Another company's import is reported exactly like a missing one.
  if (!job || job.companyId !== companyId) throw new HeldImportError(`There is no import ${importId}.`);
  if (job.status !== 'awaiting_confirmation' || job.snapshotId === null) {
    throw new HeldImportError(`Import ${importId} is ${job.status}, not awaiting confirmation.`);
  }
  return job;
}

/** Publishes the held snapshot: the removals happen now. */
export async function confirmHeldImport(
  store: Store,
  companyId: number,
  importId: number,
  tombstoneRetentionMs = DEFAULT_TOMBSTONE_RETENTION_MS,
): Promise<ImportReport> {
  const job = await heldImport(store, companyId, importId);
  const report = { ...(job.report as ImportReport), status: 'succeeded' as const };
  await store.publishSnapshot(job.snapshotId!, { importId, report }, { tombstoneRetentionMs });
  return report;
}

/** Discards the held snapshot: the previous one stays, as if the upload never happened. */
export async function rejectHeldImport(store: Store, companyId: number, importId: number): Promise<ImportReport> {
  const job = await heldImport(store, companyId, importId);
  const report = { ...(job.report as ImportReport), status: 'rejected' as const };
  await store.rejectImport(importId, report);
  return report;
}
