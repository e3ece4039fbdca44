/** A kind's page: upload a CSV (with progress), its import history, and a preview of what is served. */
import { KIND_SPECS, type Kind } from '../../../domain/kinds.js';
import type { ImportJob } from '../../../store/store.js';
import { html, type SafeHtml } from '../html.js';
import { kindLabel, type Translate } from '../i18n.js';
import { formatBytes, formatNumber, formatPrice, scrollTable, sourceLabel, statusBadge, time } from './format.js';
import { icon } from './icons.js';
import { csrfField, page, type PageContext } from './layout.js';

export interface Preview {
  count: number;
  /** The first items as the API serves them (highlighted fields are what is shown). */
  items: Record<string, unknown>[];
}

/**
 * The steps of an upload (upload, read, publish) the client script moves
 * through, with counts, and one bar for the step under way. Without the
 * script the form posts and the import page follows the import instead.
 */
export function progressBlock(t: Translate, options: { upload: boolean; hidden: boolean }): SafeHtml {
  const step = (name: string, label: string) =>
    html`<li data-step="${name}" data-state="waiting">${icon('circle')}<span>${label}</span> <span class="step-count" data-step-count="${name}"></span></li>`;
  return html`<div class="progress-block" data-progress${options.hidden ? html` hidden` : ''}>
  <ol class="steps" aria-label="${t('progressSteps')}">
    ${options.upload ? step('upload', t('stepUpload')) : ''}
    ${step('read', t('stepRead'))}
    ${step('publish', t('stepPublish'))}
  </ol>
  <div class="progress-row">
    <label for="import-progress" class="visually-hidden">${t('importProgress')}</label>
    <progress id="import-progress" max="100" value="0"></progress>
    <span class="progress-text" id="import-status" role="status"></span>
  </div>
</div>`;
}

/** Texts the client script needs, as data attributes (no inline script carries them). */
export function clientMessages(t: Translate): SafeHtml {
  return html`data-msg-uploading="${t('uploading')}" data-msg-uploaded="${t('uploaded')}"
    data-msg-upload-failed="${t('uploadFailed')}" data-msg-waiting="${t('importWaiting')}"
    data-msg-running="${t('importRunning')}" data-msg-done="${t('importDone')}"
    data-msg-choose="${t('uploadChooseFile')}" data-msg-chosen="${t('dropChosen')}" data-msg-read-count="${t('stepReadCount')}"
    data-msg-published="${t('stepPublished')}" data-msg-failed="${t('stepFailed')}" data-msg-held="${t('stepHeld')}" data-msg-decide="${t('nextDecide')}"`;
}

export function historyTable(ctx: PageContext, jobs: ImportJob[], caption: string): SafeHtml {
  const { t, lang } = ctx;
  const rows = jobs.map(
    (j) => html`<tr>
  <td data-label="${t('importNumber')}"><a href="/panel/imports/${j.id}">${j.id}</a></td>
  <td data-label="${t('date')}">${time(lang, t, j.createdAt, 'short')}</td>
  <td data-label="${t('file')}" class="wrap">${j.filename}</td>
  <td data-label="${t('source')}">${sourceLabel(j.source)}</td>
  <td data-label="${t('status')}">${statusBadge(t, j.status)}</td>
  <td data-label="${t('rows')}" class="num">${formatNumber(lang, j.rowsRead)}</td>
</tr>`,
  );
  return scrollTable(
    t,
    caption,
    html`<table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">${t('importNumber')}</th><th scope="col">${t('date')}</th><th scope="col">${t('file')}</th>
<th scope="col">${t('source')}</th><th scope="col">${t('status')}</th><th scope="col" class="num">${t('rows')}</th></tr></thead>
<tbody>${rows}</tbody>
</table>`,
  );
}

function previewTable(ctx: PageContext, kind: Kind, preview: Preview): SafeHtml {
  const { t, lang } = ctx;
  const fields = KIND_SPECS[kind].fields.map((f) => f.name);
  // Prices keep their decimals (719,30, not 719,3).
  const cell = (field: string, v: unknown) =>
    v === null || v === undefined ? '' : typeof v === 'number' ? (field === 'precio' ? formatPrice(lang, v) : formatNumber(lang, v)) : String(v);
  return html`<section aria-labelledby="preview-title">
<h2 id="preview-title">${t('previewTitle')}</h2>
<p>${t('previewIntro', { shown: preview.items.length, count: formatNumber(lang, preview.count) })}</p>
${scrollTable(
  t,
  t('previewTitle'),
  html`<table class="preview">
<thead><tr>${fields.map((f) => html`<th scope="col">${f}</th>`)}</tr></thead>
<tbody>${preview.items.map((item) => html`<tr>${fields.map((f) => html`<td data-label="${f}" class="wrap">${cell(f, item[f])}</td>`)}</tr>`)}</tbody>
</table>`,
)}
</section>`;
}

export function kindPage(ctx: PageContext, kind: Kind, jobs: ImportJob[], preview: Preview | null, maxBytes: number): SafeHtml {
  const { t, lang } = ctx;
  const label = kindLabel(t, kind);
  const body = html`<p class="links"><a href="/panel/kinds/${kind}/mapping">${t('columnMapping')}</a></p>
<section class="card" id="upload" aria-labelledby="upload-title">
  <h2 id="upload-title">${t('uploadTitle')}</h2>
  <form id="upload-form" class="form" novalidate method="post" action="/panel/kinds/${kind}/imports" enctype="multipart/form-data"
    data-max-bytes="${maxBytes}" data-msg-too-large="${t('uploadTooLarge', { size: formatBytes(lang, maxBytes) })}" ${clientMessages(t)}>
    ${csrfField(ctx)}
    <div class="field">
      <label for="file" id="file-label">${t('uploadLabel')}</label>
      <p class="hint" id="file-hint">${t('uploadHint', { kind: label.toLowerCase(), size: formatBytes(lang, maxBytes) })}</p>
      <div class="drop" data-drop>
        ${icon('file-up')}
        <span class="drop-title" aria-hidden="true">${t('dropTitle')}</span>
        <span class="hint" aria-hidden="true">${t('dropHint')}</span>
        <span class="drop-file" data-drop-file role="status"></span>
        <input id="file" name="file" type="file" accept=".csv,.txt,.gz,text/csv,text/plain,application/gzip" aria-describedby="file-hint">
      </div>
    </div>
    <button type="submit" class="primary">${icon('upload')}${t('uploadButton')}</button>
    ${progressBlock(t, { upload: true, hidden: true })}
    <a class="button primary" id="report-link" href="#" hidden>${icon('file-text')}<span id="report-link-text">${t('seeReport')}</span></a>
    <p class="notice notice-error" id="upload-error" role="alert" hidden></p>
  </form>
</section>
<section aria-labelledby="history-title">
  <h2 id="history-title">${t('historyTitle')}</h2>
  ${jobs.length === 0 ? html`<p>${t('historyEmpty', { kind: label.toLowerCase() })}</p>` : historyTable(ctx, jobs, t('historyTitle'))}
</section>
${preview && preview.items.length > 0 ? previewTable(ctx, kind, preview) : ''}`;
  return page(ctx, { title: label, section: 'overview', body });
}
