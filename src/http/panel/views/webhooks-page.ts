/**
 * Webhook endpoints in the panel (contract §7): the list with the create
 * form (the signing secret shown once, with a copy button), and one
 * endpoint's page with its actions and its attempts log. Words are in
 * webhook-words.ts, Spanish first.
 */
import { EVENT_TYPES, type WebhookAttempt, type WebhookDelivery, type WebhookEndpoint } from '../../../store/events.js';
import { html, type SafeHtml } from '../html.js';
import { copyable } from './credentials-page.js';
import { formatDuration, scrollTable, time } from './format.js';
import { icon } from './icons.js';
import { csrfField, page, type PageContext } from './layout.js';
import { webhookWords, type WebhookWords } from './webhook-words.js';

export const WEBHOOKS_PATH = '/panel/webhooks';

function statusBadge(w: WebhookWords, e: WebhookEndpoint): SafeHtml {
  if (e.disabledAt === null) return html`<span class="badge badge-ok">${w.enabled}</span>`;
  return html`<span class="badge badge-bad">${e.disabledReason === 'failing' ? w.disabledFailing : w.disabledManual}</span>`;
}

function eventsText(w: WebhookWords, e: WebhookEndpoint): string {
  return e.eventTypes.length === 0 ? w.allEvents : e.eventTypes.join(', ');
}

export interface WebhooksView {
  endpoints: WebhookEndpoint[];
  notice: { text: string; kind: 'success' | 'error' } | null;
  /** What the create form held, when it is shown again with an error. */
  form?: { url: string; events: string[] };
  allowHttp: boolean;
}

export function webhooksPage(ctx: PageContext, v: WebhooksView): SafeHtml {
  const { t, lang } = ctx;
  const w = webhookWords(lang);
  const checked = (type: string) => (v.form?.events ?? []).includes(type);
  const rows = v.endpoints.map(
    (e) => html`<tr>
  <td data-label="URL" class="wrap"><a href="${WEBHOOKS_PATH}/${e.id}"><code>${e.url}</code></a></td>
  <td data-label="${w.events}" class="wrap">${eventsText(w, e)}</td>
  <td data-label="${t('status')}">${statusBadge(w, e)}</td>
  <td data-label="${t('created')}">${time(lang, t, e.createdAt, 'short')}</td>
  <td data-label="${w.lastDelivered}">${time(lang, t, e.lastSuccessAt, 'short')}</td>
</tr>`,
  );
  const list =
    v.endpoints.length === 0
      ? html`<p>${w.noEndpoints}</p>`
      : scrollTable(
          t,
          w.listTitle,
          html`<table>
<caption class="visually-hidden">${w.listTitle}</caption>
<thead><tr><th scope="col">URL</th><th scope="col">${w.events}</th><th scope="col">${t('status')}</th>
<th scope="col">${t('created')}</th><th scope="col">${w.lastDelivered}</th></tr></thead>
<tbody>${rows}</tbody>
</table>`,
        );
  const body = html`<p>${w.intro}</p>
<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">${w.createTitle}</h2>
  <form class="form" method="post" action="${WEBHOOKS_PATH}">
    ${csrfField(ctx)}
    <div class="field">
      <label for="url">URL</label>
      <p class="hint" id="url-hint">${v.allowHttp ? w.urlHintHttp : w.urlHint}</p>
      <input id="url" name="url" type="url" required maxlength="2048" aria-describedby="url-hint" value="${v.form?.url ?? ''}" placeholder="https://">
    </div>
    <fieldset class="field">
      <legend>${w.events}</legend>
      <p class="hint">${w.eventsHint}</p>
      ${EVENT_TYPES.map(
        (type) => html`<label class="check"><input type="checkbox" name="events" value="${type}"${checked(type) ? html` checked` : ''}> <code>${type}</code> · ${w.describe[type]}</label>`,
      )}
    </fieldset>
    <button type="submit" class="primary">${w.createButton}</button>
  </form>
</section>
<section aria-labelledby="list-title">
  <h2 id="list-title">${w.listTitle}</h2>
  ${list}
</section>
<section aria-labelledby="verify-title">
  <h2 id="verify-title">${w.verifyTitle}</h2>
  <p>${w.verifyText}</p>
</section>`;
  return page(ctx, { title: w.title, section: 'webhooks', body, notice: v.notice });
}

export interface EndpointView {
  endpoint: WebhookEndpoint;
  deliveries: WebhookDelivery[];
  attempts: WebhookAttempt[];
  notice: { text: string; kind: 'success' | 'error' } | null;
}

function deliveryStatus(w: WebhookWords, d: WebhookDelivery | undefined): SafeHtml {
  if (!d) return html``;
  const tone = d.status === 'delivered' ? 'ok' : d.status === 'failed' ? 'bad' : 'busy';
  return html`<span class="badge badge-${tone}">${w.deliveryStatus[d.status]}</span>`;
}

export function endpointPage(ctx: PageContext, v: EndpointView): SafeHtml {
  const { t, lang } = ctx;
  const w = webhookWords(lang);
  const e = v.endpoint;
  const base = `${WEBHOOKS_PATH}/${e.id}`;
  const byDelivery = new Map(v.deliveries.map((d) => [d.id, d]));
  const action = (path: string, label: string, kind = '') =>
    html`<form method="post" action="${base}/${path}">${csrfField(ctx)}<button type="submit"${kind ? html` class="${kind}"` : ''}>${label}</button></form>`;
  const attemptRows = v.attempts.map((a) => {
    const d = byDelivery.get(a.deliveryId);
    return html`<tr>
  <td data-label="${w.time}">${time(lang, t, a.at, 'long')}</td>
  <td data-label="${w.event}"><code>${a.eventId}</code><br><span class="hint">${a.eventType}</span></td>
  <td data-label="${w.httpStatus}">${a.ok ? html`<span class="badge badge-ok">${a.statusCode ?? ''}</span>` : html`<span class="badge badge-bad">${a.statusCode === null ? w.noAnswer : String(a.statusCode)}</span>`}</td>
  <td data-label="${t('duration')}">${formatDuration(lang, a.durationMs)}</td>
  <td data-label="${w.error}" class="wrap">${a.error ?? ''}</td>
  <td data-label="${w.delivery}">${deliveryStatus(w, d)}</td>
  <td data-label="${t('actions')}"><form method="post" action="${base}/deliveries/${a.deliveryId}/resend">${csrfField(ctx)}<button type="submit">${w.sendAgain}<span class="visually-hidden"> ${a.eventId}</span></button></form></td>
</tr>`;
  });
  const attempts =
    v.attempts.length === 0
      ? html`<p>${w.noAttempts}</p>`
      : scrollTable(
          t,
          w.attemptsTitle,
          html`<table>
<caption class="visually-hidden">${w.attemptsTitle}</caption>
<thead><tr><th scope="col">${w.time}</th><th scope="col">${w.event}</th><th scope="col">${w.httpStatus}</th><th scope="col">${t('duration')}</th>
<th scope="col">${w.error}</th><th scope="col">${w.delivery}</th><th scope="col">${t('actions')}</th></tr></thead>
<tbody>${attemptRows}</tbody>
</table>`,
        );
  const pending = v.deliveries.filter((d) => d.status === 'pending').length;
  const body = html`<dl class="facts card">
  <div><dt>URL</dt><dd class="wrap"><code>${e.url}</code></dd></div>
  <div><dt>${w.events}</dt><dd>${eventsText(w, e)}</dd></div>
  <div><dt>${t('status')}</dt><dd>${statusBadge(w, e)}${e.disabledReason === 'failing' ? html` <span class="hint">${w.failingExplain}</span>` : ''}</dd></div>
  <div><dt>${t('created')}</dt><dd>${time(lang, t, e.createdAt)}</dd></div>
  <div><dt>${w.lastDelivered}</dt><dd>${time(lang, t, e.lastSuccessAt)}</dd></div>
  <div><dt>${w.pending}</dt><dd>${String(pending)}</dd></div>
</dl>
<div class="actions">
  ${action('test', w.sendTest, 'primary')}
  ${e.disabledAt === null ? action('disable', w.disable) : action('enable', w.enable)}
  <a href="${base}/delete">${w.delete}</a>
  <a href="${WEBHOOKS_PATH}">${w.back}</a>
</div>
<section aria-labelledby="attempts-title">
  <h2 id="attempts-title">${w.attemptsTitle}</h2>
  <p>${w.attemptsIntro}</p>
  ${attempts}
</section>`;
  return page(ctx, { title: w.endpointTitle.replace('{id}', String(e.id)), section: 'webhooks', body, notice: v.notice });
}

/** After creation (POST-redirect-GET): the signing secret, once; a refresh finds it gone. */
export function createdPage(ctx: PageContext, e: WebhookEndpoint, secret: string | null): SafeHtml {
  const { t } = ctx;
  const w = webhookWords(ctx.lang);
  const base = `${WEBHOOKS_PATH}/${e.id}`;
  const body = secret
    ? html`<section class="card secret" aria-labelledby="secret-title">
  <h2 id="secret-title">${icon('triangle-alert')} ${t('secretShownOnce')}</h2>
  <p>${w.secretOnce}</p>
  <p class="wrap"><code>${e.url}</code></p>
  ${copyable(t, 'new-secret', w.secretLabel, secret)}
  <p class="actions"><a class="button primary" href="${base}">${icon('circle-check')}${w.secretSaved}</a></p>
</section>`
    : html`<section class="card" aria-labelledby="gone-title">
  <h2 id="gone-title">${t('secretGoneTitle')}</h2>
  <p>${w.secretGone}</p>
  <p class="actions"><a class="button" href="${base}">${w.openEndpoint}</a></p>
</section>`;
  return page(ctx, { title: w.createdTitle.replace('{id}', String(e.id)), section: 'webhooks', body });
}

export function deletePage(ctx: PageContext, e: WebhookEndpoint): SafeHtml {
  const w = webhookWords(ctx.lang);
  const base = `${WEBHOOKS_PATH}/${e.id}`;
  const body = html`<p class="wrap"><code>${e.url}</code></p>
<p>${w.deleteWarning}</p>
<form method="post" action="${base}/delete" class="actions">
  ${csrfField(ctx)}
  <button type="submit" class="danger">${w.deleteConfirm}</button>
  <a href="${base}">${ctx.t('cancel')}</a>
</form>`;
  return page(ctx, { title: w.deleteTitle.replace('{id}', String(e.id)), section: 'webhooks', body });
}
