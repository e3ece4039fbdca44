/**
 * The guard's decision on a held import (issue 20, point 5): why it was held,
 * what is served now beside what the file would make of it, the first
 * records that would go, then a red "apply and remove N records" and a
 * neutral "reject". Plain forms: it works without the script.
 */
import type { ImportReport } from '../../../imports/import-report.js';
import type { ImportJob } from '../../../store/store.js';
import type { RemovedRecord } from '../held-sample.js';
import { html, type SafeHtml } from '../html.js';
import { kindLabel, type Translate } from '../i18n.js';
import { formatNumber } from './format.js';
import { csrfField, type PageContext } from './layout.js';

/** `"A", "B" y 3 más`: up to 20 names of `count`. */
function someNames(t: Translate, names: readonly string[], count: number): string {
  const shown = names.slice(0, 20).map((name) => JSON.stringify(name)).join(', ');
  return count > Math.min(names.length, 20) ? t('namesMore', { names: shown, more: count - Math.min(names.length, 20) }) : shown;
}

/** Why a guard held the import: what it would remove, how its columns changed, which kind it looks like. */
function reasons(ctx: PageContext, job: ImportJob, report: ImportReport): SafeHtml {
  const { t, lang } = ctx;
  const n = (v: number) => formatNumber(lang, v);
  const { guard } = report;
  const drift = report.column_drift ?? null;
  const other = report.other_kind ?? null;
  return html`${guard ? html`<p class="notice notice-warning">${t('heldExplain', { count: n(guard.would_remove), of: n(guard.of) })}</p>` : ''}
${drift
  ? html`<p>${t('heldDrift', { shared: n(drift.shared), columns: n(drift.columns), live: n(drift.live_columns) })}</p>
${drift.appeared_count > 0 ? html`<p class="wrap">${t('heldAppeared', { names: someNames(t, drift.appeared, drift.appeared_count) })}</p>` : ''}
${drift.disappeared_count > 0 ? html`<p class="wrap">${t('heldDisappeared', { names: someNames(t, drift.disappeared, drift.disappeared_count) })}</p>` : ''}`
  : ''}
${other
  ? html`<p>${t('heldOtherKind', {
      other: kindLabel(t, other.kind),
      kind: kindLabel(t, job.kind),
      otherFed: n(other.fits[other.kind]?.fed ?? 0),
      kindFed: n(other.fits[job.kind]?.fed ?? 0),
    })}</p>`
  : ''}`;
}

/** The first records that would go, with their names where the live data has them (two columns fit a phone: not stacked into cards). */
function removedTable(ctx: PageContext, report: ImportReport, removed: readonly RemovedRecord[]): SafeHtml {
  const { t, lang } = ctx;
  if (report.deleted === 0 || removed.length === 0) return html``;
  const caption = t('heldRemovedTitle');
  const intro = removed.length < report.deleted
    ? t('heldRemovedIntro', { shown: formatNumber(lang, removed.length), count: formatNumber(lang, report.deleted) })
    : t('heldRemovedAll');
  return html`<section class="card removed" aria-labelledby="removed-title">
<h3 id="removed-title">${caption}</h3>
<p>${intro}</p>
<div class="table-wrap" role="region" tabindex="0" aria-label="${t('scrollTable', { name: caption })}"><table class="removed-list">
<thead><tr><th scope="col">id_erp</th><th scope="col">${t('heldName')}</th></tr></thead>
<tbody>${removed.map((r) => html`<tr><td data-label="id_erp" class="mono">${r.idErp}</td><td data-label="${t('heldName')}" class="wrap">${r.name ?? '—'}</td></tr>`)}</tbody>
</table></div>
</section>`;
}

export function heldDecision(ctx: PageContext, job: ImportJob, report: ImportReport, removed: readonly RemovedRecord[]): SafeHtml {
  const { t, lang } = ctx;
  const n = (v: number) => formatNumber(lang, v);
  // The file was compared with what is served: its records matched, changed or not, and those it lacks.
  const live = report.unchanged + report.updated + report.deleted;
  const after = report.inserted + report.updated + report.unchanged;
  const removes = report.deleted > 0;
  const fact = (label: string, value: number, cls = '') => html`<div${cls ? html` class="${cls}"` : ''}><dt>${label}</dt><dd>${n(value)}</dd></div>`;
  const apply = removes
    ? report.deleted === 1 ? t('heldApplyRemoveOne') : t('heldApplyRemove', { count: n(report.deleted) })
    : t('heldConfirm');
  return html`<section class="held" aria-labelledby="held-title" id="held">
<h2 id="held-title">${t('heldTitle')}</h2>
${reasons(ctx, job, report)}
<div class="decision">
  <section class="card" aria-labelledby="live-title">
    <h3 id="live-title">${t('heldLiveTitle')}</h3>
    ${live > 0
      ? html`<p class="big">${t('heldRecords', { count: n(live) })}</p>
    <p class="muted">${t('heldLiveKeeps')}</p>`
      : html`<p class="big">${t('heldNothingLive')}</p>
    <p class="muted">${t('heldNothingLiveHint', { kind: kindLabel(t, job.kind).toLowerCase() })}</p>`}
  </section>
  <section class="card${removes ? ' danger-zone' : ''}" aria-labelledby="new-title">
    <h3 id="new-title">${t('heldNewTitle')}</h3>
    <p class="big">${t('heldRecords', { count: n(after) })}</p>
    <dl class="counts">
      ${fact(t('heldWouldInsert'), report.inserted)}
      ${fact(t('heldWouldUpdate'), report.updated)}
      ${fact(t('heldWouldKeep'), report.unchanged)}
      ${fact(t('heldWouldRemove'), report.deleted, removes ? 'removes' : '')}
    </dl>
  </section>
</div>
${removedTable(ctx, report, removed)}
<div class="actions decision-actions">
  <form method="post" action="/panel/imports/${job.id}/reject">
    ${csrfField(ctx)}<button type="submit" class="secondary">${t('heldReject')}</button>
  </form>
  <form method="post" action="/panel/imports/${job.id}/confirm">
    ${csrfField(ctx)}<button type="submit" class="${removes ? 'danger' : 'primary'}">${apply}</button>
  </form>
</div>
<p class="hint">${t('heldRejectHint')}</p>
</section>`;
}
