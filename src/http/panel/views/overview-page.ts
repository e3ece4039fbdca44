import type { Kind } from '../../../domain/kinds.js';
import type { ImportJob } from '../../../store/store.js';
import { html, type SafeHtml } from '../html.js';
import { kindLabel } from '../i18n.js';
import { formatNumber, statusBadge, time } from './format.js';
import { page, type PageContext } from './layout.js';

export interface KindSummary {
  kind: Kind;
  /** Records served now; null when nothing was ever published. */
  count: number | null;
  lastImport: ImportJob | null;
}

export function overviewPage(ctx: PageContext, companyName: string, kinds: KindSummary[]): SafeHtml {
  const { t, lang } = ctx;
  const cards = kinds.map((k) => {
    const id = `kind-${k.kind}`;
    const last = k.lastImport;
    return html`<section class="card kind-card" aria-labelledby="${id}">
  <h2 id="${id}">${kindLabel(t, k.kind)}</h2>
  <p class="big">${k.count === null ? t('noRecords') : t('recordCount', { count: formatNumber(lang, k.count) })}</p>
  <dl class="facts">
    <dt>${t('lastImport')}</dt>
    <dd>${last
      ? html`<a href="/panel/imports/${last.id}">${time(lang, t, last.finishedAt ?? last.createdAt)}</a> ${statusBadge(t, last.status)}`
      : t('noImportsYet')}</dd>
  </dl>
  <p class="links">
    <a href="/panel/kinds/${k.kind}">${t('uploadAndHistory')}<span class="visually-hidden">: ${kindLabel(t, k.kind)}</span></a>
    <a href="/panel/kinds/${k.kind}/mapping">${t('columnMapping')}<span class="visually-hidden">: ${kindLabel(t, k.kind)}</span></a>
  </p>
</section>`;
  });
  return page(ctx, {
    title: t('overviewTitle'),
    section: 'overview',
    body: html`<p>${t('overviewIntro', { company: companyName })}</p><div class="cards">${cards}</div>`,
  });
}
