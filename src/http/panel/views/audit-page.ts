/** A company's audit trail: newest first, filtered by action, a page at a time. */
import { actionsOfGroup, AUDIT_GROUPS, describeDetails, type AuditEntry } from '../../../domain/audit.js';
import { html, type SafeHtml } from '../html.js';
import { auditLabel } from '../i18n.js';
import { scrollTable, time } from './format.js';
import { page, type PageContext } from './layout.js';

export interface AuditView {
  companyName: string;
  retentionDays: number;
  entries: AuditEntry[];
  /** The filter as given (an action or a group), or null for all. */
  action: string | null;
  /** The id to ask older entries before, when there are any. */
  olderBefore: number | null;
  /** Whether this is a later page (a link back to the newest is shown). */
  paged: boolean;
  error: string | null;
}

function filterForm(ctx: PageContext, v: AuditView): SafeHtml {
  const { t } = ctx;
  const option = (value: string, label: string) =>
    html`<option value="${value}"${v.action === value ? html` selected` : ''}>${label}</option>`;
  // A group of several actions can be chosen whole, or one action of it.
  const choices = AUDIT_GROUPS.map((g) => {
    const actions = actionsOfGroup(g);
    if (actions.length === 1) return option(actions[0]!, auditLabel(t, actions[0]!));
    const label = auditLabel(t, g, true);
    return html`<optgroup label="${label}">${option(g, `${label}: ${t('auditAllActions').toLowerCase()}`)}${actions.map((a) => option(a, auditLabel(t, a)))}</optgroup>`;
  });
  return html`<form class="form filter" method="get" action="/panel/audit">
  <div class="field">
    <label for="action">${t('auditFilter')}</label>
    <select id="action" name="action">
      ${option('', t('auditAllActions'))}
      ${choices}
    </select>
  </div>
  <button type="submit">${t('auditApply')}</button>
</form>`;
}

function entriesTable(ctx: PageContext, entries: AuditEntry[]): SafeHtml {
  const { t, lang } = ctx;
  const caption = t('auditTitle');
  const rows = entries.map(
    (e) => html`<tr>
  <td data-label="${t('auditWhen')}">${time(lang, t, e.at, 'long')}</td>
  <td data-label="${t('auditWho')}" class="wrap">${e.actor}${e.ip ? html`<br><span class="when">${e.ip}</span>` : ''}</td>
  <td data-label="${t('auditWhat')}">${auditLabel(t, e.action)}<br><code>${e.action}</code></td>
  <td data-label="${t('auditDetails')}" class="wrap"><code>${describeDetails(e.details)}</code></td>
</tr>`,
  );
  return scrollTable(
    t,
    caption,
    html`<table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">${t('auditWhen')}</th><th scope="col">${t('auditWho')}</th><th scope="col">${t('auditWhat')}</th><th scope="col">${t('auditDetails')}</th></tr></thead>
<tbody>${rows}</tbody>
</table>`,
  );
}

export function auditPage(ctx: PageContext, v: AuditView): SafeHtml {
  const { t } = ctx;
  const query = (before: number | null) => {
    const params = new URLSearchParams();
    if (v.action) params.set('action', v.action);
    if (before !== null) params.set('before', String(before));
    const text = params.toString();
    return `/panel/audit${text ? `?${text}` : ''}`;
  };
  const pager =
    v.olderBefore !== null || v.paged
      ? html`<nav class="actions" aria-label="${t('auditPages')}">
  ${v.paged ? html`<a href="${query(null)}">${t('auditNewest')}</a>` : ''}
  ${v.olderBefore !== null ? html`<a href="${query(v.olderBefore)}" rel="next">${t('auditOlder')}</a>` : ''}
</nav>`
      : '';
  const body = html`<p>${t('auditIntro', { company: v.companyName, days: v.retentionDays })}</p>
${filterForm(ctx, v)}
${v.entries.length === 0 ? html`<p>${t('auditEmpty')}</p>` : entriesTable(ctx, v.entries)}
${pager}`;
  return page(ctx, {
    title: t('auditTitle'),
    section: 'audit',
    body,
    notice: v.error ? { text: v.error, kind: 'error' } : null,
  });
}
