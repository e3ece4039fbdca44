/** An administrator's decision on an import held by the mass-deletion guard. */
import { auditEvent, type AuditActor } from '../domain/audit.js';
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

/**
 * What the trail says of a decision: the import and what it does to the
 * records. A rejection did nothing to them: its counts are what the file
 * would have done (`would_…`), so no entry reads as records deleted.
 */
function decisionDetails(job: ImportJob, report: ImportReport, decision: 'confirm' | 'reject') {
  const base = { import_id: job.id, kind: job.kind, filename: job.filename };
  return decision === 'confirm'
    ? { ...base, inserted: report.inserted, updated: report.updated, deleted: report.deleted }
    : { ...base, would_insert: report.inserted, would_update: report.updated, would_delete: report.deleted };
}

/** Publishes the held snapshot: the removals happen now. `who` decided (recorded in the audit trail). */
export async function confirmHeldImport(
  store: Store,
  companyId: number,
  importId: number,
  tombstoneRetentionMs = DEFAULT_TOMBSTONE_RETENTION_MS,
  who?: AuditActor,
): Promise<ImportReport> {
  const job = await heldImport(store, companyId, importId);
  const report = { ...(job.report as ImportReport), status: 'succeeded' as const };
  const audit = who && auditEvent(who, companyId, 'import.confirm', decisionDetails(job, report, 'confirm'));
  await store.publishSnapshot(job.snapshotId!, { importId, report }, { tombstoneRetentionMs, ...(audit ? { audit } : {}) });
  return report;
}

/** Discards the held snapshot: the previous one stays, as if the upload never happened. */
export async function rejectHeldImport(store: Store, companyId: number, importId: number, who?: AuditActor): Promise<ImportReport> {
  const job = await heldImport(store, companyId, importId);
  const report = { ...(job.report as ImportReport), status: 'rejected' as const };
  await store.rejectImport(importId, report, who && auditEvent(who, companyId, 'import.reject', decisionDetails(job, report, 'reject')));
  return report;
}
