/**
 * The overview: per kind, what the API serves now and which import put it
 * there, the last attempt when it is another one (a failed or held upload
 * does not hide the data still served), and the next step; above them, a
 * first-run checklist until each of its steps is done.
 */
import type { Kind } from '../../../domain/kinds.js';
import type { ImportJob } from '../../../store/store.js';
import { html, type SafeHtml } from '../html.js';
import { kindLabel } from '../i18n.js';
import { formatNumber, statusBadge, time } from './format.js';
import { icon } from './icons.js';
import { page, type PageContext } from './layout.js';

export interface KindSummary {
  kind: Kind;
  /** Records served now; null when nothing was ever published. */
  count: number | null;
  /** When the live data was published; null when nothing was. */
  publishedAt: Date | null;
  /** The import whose snapshot is live, when it is still in the history. */
  liveImport: ImportJob | null;
  /** The newest import of the kind, whatever its outcome. */
  lastImport: ImportJob | null;
}

export interface Checklist {
  uploadedCustomers: boolean;
  createdKey: boolean;
  triedSandbox: boolean;
}

function nextStep(ctx: PageContext, k: KindSummary): SafeHtml {
  const { t } = ctx;
  const last = k.lastImport;
  const label = kindLabel(t, k.kind);
  const hidden = html`<span class="visually-hidden">: ${label}</span>`;
  if (last && (last.status === 'queued' || last.status === 'running' || last.status === 'receiving')) {
    return html`<a class="button" href="/panel/imports/${last.id}">${icon('clock')}${t('nextFollow')}${hidden}</a>`;
  }
  if (last?.status === 'awaiting_confirmation') {
    return html`<a class="button primary" href="/panel/imports/${last.id}">${icon('shield')}${t('nextDecide')}${hidden}</a>`;
  }
  const text = last?.status === 'failed' ? t('nextUploadFixed') : k.count === null ? t('nextUploadFirst') : t('nextUploadNew');
  const primary = last?.status === 'failed' || k.count === null;
  return html`<a class="button${primary ? ' primary' : ''}" href="/panel/kinds/${k.kind}#upload-title">${icon('file-up')}${text}${hidden}</a>`;
}

function kindCard(ctx: PageContext, k: KindSummary): SafeHtml {
  const { t, lang } = ctx;
  const id = `kind-${k.kind}`;
  const last = k.lastImport;
  const live = k.liveImport;
  const liveLine = k.publishedAt === null
    ? html`${t('nothingLive')}`
    : live
      ? html`<a href="/panel/imports/${live.id}">${t('liveImport', { id: live.id })}</a> · ${time(lang, t, k.publishedAt)} ${statusBadge(t, live.status)}`
      : html`${t('livePublished')} ${time(lang, t, k.publishedAt)}`;
  // The last attempt is shown apart only when it is not the import being served.
  const attempt = last && last.id !== live?.id
    ? html`<dt>${t('lastAttempt')}</dt>
    <dd><a href="/panel/imports/${last.id}">${t('liveImport', { id: last.id })}</a> · ${time(lang, t, last.finishedAt ?? last.createdAt)} ${statusBadge(t, last.status)}</dd>`
    : '';
  const note = last && last.id !== live?.id && k.count !== null
    ? last.status === 'failed' || last.status === 'rejected'
      ? html`<p class="hint">${t('lastAttemptFailedNote')}</p>`
      : last.status === 'awaiting_confirmation'
        ? html`<p class="hint">${t('lastAttemptHeldNote')}</p>`
        : ''
    : '';
  return html`<section class="card kind-card" aria-labelledby="${id}">
  <h2 id="${id}">${kindLabel(t, k.kind)}</h2>
  <p class="big">${k.count === null ? t('noRecords') : t('recordCount', { count: formatNumber(lang, k.count) })}</p>
  <dl class="facts">
    <dt>${t('liveNow')}</dt>
    <dd>${liveLine}</dd>
    ${attempt}
  </dl>
  ${note}
  <div class="actions">
    ${nextStep(ctx, k)}
    <a href="/panel/kinds/${k.kind}/mapping">${t('columnMapping')}<span class="visually-hidden">: ${kindLabel(t, k.kind)}</span></a>
  </div>
</section>`;
}

function checklist(ctx: PageContext, c: Checklist): SafeHtml {
  const { t } = ctx;
  if (c.uploadedCustomers && c.createdKey && c.triedSandbox) return html``;
  const step = (done: boolean, href: string, text: string) =>
    html`<li data-done="${done ? 'true' : 'false'}">${icon(done ? 'circle-check' : 'circle')}<a href="${href}">${text}</a>
      <span class="visually-hidden">(${done ? t('checklistDone') : t('checklistPending')})</span></li>`;
  return html`<section class="card" aria-labelledby="checklist-title">
  <h2 id="checklist-title">${t('checklistTitle')}</h2>
  <p class="hint">${t('checklistIntro')}</p>
  <ol class="checklist">
    ${step(c.uploadedCustomers, '/panel/kinds/clientes#upload-title', t('checklistUpload'))}
    ${step(c.createdKey, '/panel/keys', t('checklistKey'))}
    ${step(c.triedSandbox, '/panel/help#sandbox', t('checklistSandbox'))}
  </ol>
</section>`;
}

export function overviewPage(ctx: PageContext, companyName: string, kinds: KindSummary[], steps: Checklist): SafeHtml {
  const { t } = ctx;
  return page(ctx, {
    title: t('overviewTitle'),
    section: 'overview',
    body: html`<p class="lead">${t('overviewIntro', { company: companyName })}</p>
${checklist(ctx, steps)}
<div class="cards">${kinds.map((k) => kindCard(ctx, k))}</div>`,
  });
}
