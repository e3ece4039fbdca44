/** One import: its progress while it runs (the client script polls), then its report. */
import type { ImportReport } from '../../../imports/import-report.js';
import type { ImportWarning } from '../../../imports/normalise.js';
import type { ImportJob } from '../../../store/store.js';
import { html, type SafeHtml } from '../html.js';
import type { RemovedRecord } from '../held-sample.js';
import { importErrorLabel, kindLabel, type Translate } from '../i18n.js';
import { formatBytes, formatDuration, formatNumber, sourceLabel, statusBadge, time } from './format.js';
import { clientMessages, progressBlock } from './kind-page.js';
import { heldDecision } from './held-decision.js';
import { icon } from './icons.js';
import { csrfField, page, type PageContext } from './layout.js';

export const FINAL_STATUSES = new Set(['succeeded', 'failed', 'awaiting_confirmation', 'rejected']);

function warningText(t: Translate, w: ImportWarning, expected: string): string {
  return t('warningLine', { line: w.line, value: w.value, column: w.column, expected, field: w.field });
}

function reportSection(ctx: PageContext, job: ImportJob, report: ImportReport): SafeHtml {
  const { t, lang } = ctx;
  const n = (v: number) => formatNumber(lang, v);
  const fact = (label: string, value: string | SafeHtml) => html`<div><dt>${label}</dt><dd>${value}</dd></div>`;
  const failure = report.error
    ? html`<div class="failure" role="alert">
  <p><strong>${t('failedBecause')}</strong></p>
  <p>${importErrorLabel(t, report.error.code) ?? ''} ${report.error.line ? t('failureLine', { line: report.error.line }) : ''}</p>
  <p class="detail"><span class="detail-label">${t('failureDetail')}:</span> <span lang="en">${report.error.message}</span></p>
</div>`
    : '';
  // A failed or rejected import changed nothing: its would-be counts are not shown as if it had.
  // A held one's are in the decision above, as what would happen.
  const applied = job.status !== 'failed' && job.status !== 'rejected';
  const changed = applied && job.status !== 'awaiting_confirmation';
  // Under a failure, what the importer never got to (rows, columns, encoding) is left out rather than shown as zeros.
  const known = (v: number | string | null) => job.status !== 'failed' || (v !== null && v !== 0);
  const warnings = report.warnings.items;
  const expectedFor = (w: ImportWarning) => (w.field === 'precio' ? t('expectNumber') : t('expectDate'));
  return html`<section class="card report" aria-labelledby="report-title" id="report">
<h2 id="report-title">${t('reportTitle')} ${statusBadge(t, job.status)}</h2>
${failure}
${report.unchanged_snapshot ? html`<p class="notice notice-success" id="unchanged-snapshot" role="status">${t('unchangedSnapshot')}</p>` : ''}
${applied ? '' : html`<p class="notice notice-warning">${job.status === 'rejected' ? t('rejectedNothingApplied') : t('failedNothingApplied')}</p>`}
<dl class="counts">
  ${known(report.rows_read) ? fact(t('rowsRead'), n(report.rows_read)) : ''}
  ${changed
    ? html`${fact(t('inserted'), n(report.inserted))}
  ${fact(t('updated'), n(report.updated))}
  ${fact(t('unchanged'), n(report.unchanged))}
  ${fact(t('deleted'), n(report.deleted))}`
    : ''}
  ${known(report.warnings.count) ? fact(t('warnings'), n(report.warnings.count)) : ''}
  ${fact(t('duration'), formatDuration(lang, report.duration_ms))}
  ${known(report.encoding) ? fact(t('encoding'), report.encoding ?? '—') : ''}
  ${known(report.delimiter) ? fact(t('delimiter'), report.delimiter === null ? '—' : report.delimiter === '\t' ? 'TAB' : report.delimiter) : ''}
  ${known(report.columns) ? fact(t('columnsCount'), n(report.columns)) : ''}
</dl>
${warnings.length > 0
  ? html`<h3>${t('warnings')}</h3>
<ul class="warnings">${warnings.map((w) => html`<li>${warningText(t, w, expectedFor(w))}</li>`)}</ul>
${report.warnings.count > warnings.length ? html`<p>${t('warningsShown', { shown: warnings.length, count: n(report.warnings.count) })}</p>` : ''}`
  : ''}
</section>`;
}

/** `removed`: the first records a held import would remove, with their names (held-sample.ts). */
export function importPage(ctx: PageContext, job: ImportJob, notice: string | null, removed: readonly RemovedRecord[] = []): SafeHtml {
  const { t, lang } = ctx;
  const label = kindLabel(t, job.kind);
  const done = FINAL_STATUSES.has(job.status);
  const report = job.report as ImportReport | null;
  const body = html`<p class="links"><a href="/panel/kinds/${job.kind}">${t('backToKind', { kind: label })}</a>
  <a href="/panel/kinds/${job.kind}/mapping">${t('columnMapping')}</a></p>
<dl class="facts card">
  <div><dt>${t('status')}</dt><dd id="import-state">${statusBadge(t, job.status)}</dd></div>
  <div><dt>${t('file')}</dt><dd class="wrap">${job.filename}</dd></div>
  <div><dt>${t('size')}</dt><dd>${formatBytes(lang, job.sizeBytes)}</dd></div>
  <div><dt>${t('source')}</dt><dd>${sourceLabel(job.source)}</dd></div>
  <div><dt>${t('queuedAt')}</dt><dd>${time(lang, t, job.createdAt)}</dd></div>
  ${job.startedAt ? html`<div><dt>${t('startedAt')}</dt><dd>${time(lang, t, job.startedAt)}</dd></div>` : ''}
  ${job.finishedAt && job.status !== 'awaiting_confirmation'
    ? html`<div><dt>${t('finishedAt')}</dt><dd>${time(lang, t, job.finishedAt)}</dd></div>`
    : ''}
</dl>
${done
  ? ''
  : html`<div id="import-watch" data-status-url="/panel/api/imports/${job.id}" data-page-url="/panel/imports/${job.id}" ${clientMessages(t)}>
  ${progressBlock(t, { upload: false, hidden: false })}
  <p><a href="/panel/imports/${job.id}">${t('refresh')}</a></p>
</div>`}
${job.status === 'awaiting_confirmation' && report ? heldDecision(ctx, job, report, removed) : ''}
${report ? reportSection(ctx, job, report) : done ? html`<p>${job.error ?? t('noReport')}</p>` : ''}
${job.status === 'failed'
  ? html`<p class="actions"><a class="button primary" href="/panel/kinds/${job.kind}#upload-title">${icon('file-up')}${t('nextUploadFixed')}</a></p>`
  : done && job.status !== 'awaiting_confirmation'
    ? reapplyForm(ctx, job)
    : ''}`;
  return page(ctx, {
    title: t('importTitle', { id: job.id, kind: label }),
    section: 'overview',
    body,
    notice: notice ? { text: notice, kind: 'success' } : null,
  });
}

/** "Import this file again", or, once the stored upload is gone (UPLOAD_RETENTION_DAYS), when it went. */
export function reapplyForm(ctx: PageContext, job: ImportJob, label: 'reapplyThisFile' | 'reapplyButton' = 'reapplyThisFile'): SafeHtml {
  const { t } = ctx;
  if (job.fileRemovedAt) {
    const days = Math.round((job.fileRemovedAt.getTime() - (job.finishedAt ?? job.fileRemovedAt).getTime()) / 86_400_000);
    return html`<p class="file-removed">${t('fileRemoved', { date: job.fileRemovedAt.toISOString().slice(0, 10), days })}</p>`;
  }
  return html`<form method="post" action="/panel/imports/${job.id}/reapply" class="inline-form">
  ${csrfField(ctx)}<button type="submit">${t(label)}</button>
</form>`;
}
