/** A kind's column mapping: which column of the last file feeds each highlighted field, and the override form. */
import type { Kind } from '../../../domain/kinds.js';
import type { FieldDefaults } from '../../../imports/column-mapping.js';
import type { ImportJob } from '../../../store/store.js';
import { html, type SafeHtml } from '../html.js';
import { kindLabel } from '../i18n.js';
import { formatNumber } from './format.js';
import { reapplyForm } from './import-page.js';
import { csrfField, page, type PageContext } from './layout.js';

export interface MappingView {
  kind: Kind;
  /** The last upload of this kind and its header, when there is one and it could be read. */
  last: { job: ImportJob; columns: string[] } | null;
  /** The saved override, field → exact column. */
  override: Record<string, string>;
  /** What the default mapping would pick in the last file, per field. */
  automatic: Record<string, string | null>;
  defaults: FieldDefaults[];
  notice: { text: string; kind: 'success' | 'error' } | null;
}

function fieldRow(ctx: PageContext, v: MappingView, d: FieldDefaults): SafeHtml {
  const { t } = ctx;
  const id = `map-${d.field}`;
  const columns = v.last?.columns ?? [];
  const chosen = v.override[d.field];
  const auto = v.automatic[d.field];
  const options = columns.map(
    (c) => html`<option value="${c}"${c === chosen ? html` selected` : ''}>${c}</option>`,
  );
  // A saved column the last file lacks stays visible (and selected) rather than silently dropped.
  const missing =
    chosen !== undefined && !columns.includes(chosen)
      ? html`<option value="${chosen}" selected>${t('notInFile', { column: chosen })}</option>`
      : '';
  return html`<div class="field map-field">
  <label for="${id}"><code>${d.field}</code></label>
  <select id="${id}" name="map_${d.field}" aria-describedby="${id}-hint">
    <option value=""${chosen === undefined ? html` selected` : ''}>${auto ? t('automaticWith', { column: auto }) : t('automaticNone')}</option>
    ${missing}${options}
  </select>
  <p class="hint" id="${id}-hint">${t('recognisedByDefault')}: ${[...new Set(d.columns)].join(', ')}</p>
</div>`;
}

export function mappingPage(ctx: PageContext, v: MappingView): SafeHtml {
  const { t, lang } = ctx;
  const label = kindLabel(t, v.kind);
  const last = v.last;
  const source = last
    ? html`<p>${t('mappingColumnsFrom', { file: last.job.filename, id: last.job.id, count: formatNumber(lang, last.columns.length) })}</p>`
    : html`<p>${t('mappingNoFile', { kind: label.toLowerCase() })}</p>`;
  const body = html`<p class="links"><a href="/panel/kinds/${v.kind}">${t('backToKind', { kind: label })}</a></p>
<p>${t('mappingIntro')}</p>
${source}
<form class="card form" method="post" action="/panel/kinds/${v.kind}/mapping">
  ${csrfField(ctx)}
  ${v.defaults.map((d) => fieldRow(ctx, v, d))}
  <button type="submit" class="primary">${t('saveMapping')}</button>
</form>
${last
  ? html`<section class="card" aria-labelledby="reapply-title">
  <h2 id="reapply-title">${t('reapplyTitle')}</h2>
  <p>${t('reapplyIntro', { file: last.job.filename, id: last.job.id })}</p>
  ${reapplyForm(ctx, last.job, 'reapplyButton')}
</section>`
  : ''}`;
  return page(ctx, { title: t('mappingTitle', { kind: label }), section: 'overview', body, notice: v.notice });
}
