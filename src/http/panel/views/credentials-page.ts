/** API keys and upload tokens: the same page for both, told apart by scope. */
import type { CredentialScope } from '../../../domain/api-keys.js';
import type { Credential } from '../../../store/store.js';
import { html, type SafeHtml } from '../html.js';
import type { Translate } from '../i18n.js';
import { scrollTable, time } from './format.js';
import { icon } from './icons.js';
import { csrfField, page, type PageContext } from './layout.js';

export const CREDENTIAL_PATH: Record<CredentialScope, string> = { read: '/panel/keys', upload: '/panel/tokens' };

/** The curl command an ERP's scheduled export runs (README, "Panel"). */
export function uploadCommand(baseUrl: string, token: string, kind = 'clientes'): string {
  return `curl -T export.csv -H "Authorization: Bearer ${token}" ${baseUrl}/panel/api/imports/${kind}`;
}

/** A read-only value with a copy button (the client script copies; without it, the value can be selected). */
export function copyable(t: Translate, id: string, label: string, value: string, multiline = false): SafeHtml {
  const field = multiline
    ? html`<textarea id="${id}" readonly rows="3" spellcheck="false">${value}</textarea>`
    : html`<input id="${id}" class="mono" type="text" readonly value="${value}" spellcheck="false">`;
  return html`<div class="field copy-field">
  <label for="${id}">${label}</label>
  <div class="copy-row">${field}
    <button type="button" data-copy="${id}" data-msg-copied="${t('copied')}" data-msg-copy-failed="${t('copyFailed')}">${t('copy')}<span class="visually-hidden">: ${label}</span></button>
  </div>
  <span class="copy-status" role="status" data-copy-status="${id}"></span>
</div>`;
}

export interface CredentialsView {
  scope: CredentialScope;
  companyName: string;
  baseUrl: string;
  credentials: Credential[];
  notice: string | null;
  /** A refused form (an expiry that cannot be read). */
  error?: string | null;
}

/** The lifetimes the key form offers (any `Nd`/`Nh` is accepted when posted). */
const EXPIRY_CHOICES = ['30d', '90d', '180d', '365d'];

function expiryField(ctx: PageContext): SafeHtml {
  const { t } = ctx;
  return html`<div class="field">
      <label for="expires_in">${t('expiresIn')}</label>
      <p class="hint" id="expires-hint">${t('expiresInHint')}</p>
      <select id="expires_in" name="expires_in" aria-describedby="expires-hint">
        <option value="">${t('expiresNever')}</option>
        ${EXPIRY_CHOICES.map((c) => html`<option value="${c}">${t('expiresDays', { days: c.slice(0, -1) })}</option>`)}
      </select>
    </div>`;
}

function statusCell(ctx: PageContext, isKey: boolean, c: Credential): SafeHtml {
  const { t, lang } = ctx;
  if (c.revokedAt) {
    return html`<span class="badge badge-bad">${isKey ? t('revoked') : t('revokedToken')}</span> <span class="when">${time(lang, t, c.revokedAt, 'short')}</span>`;
  }
  if (c.expiresAt && c.expiresAt.getTime() <= Date.now()) return html`<span class="badge badge-bad">${t('expired')}</span>`;
  return html`<span class="badge badge-ok">${isKey ? t('active') : t('activeToken')}</span>`;
}

function listTable(ctx: PageContext, v: CredentialsView): SafeHtml {
  const { t, lang } = ctx;
  const isKey = v.scope === 'read';
  const caption = isKey ? t('keysList') : t('tokensList');
  const rows = v.credentials.map(
    (c) => html`<tr>
  <td data-label="${t('prefix')}"><code>${c.prefix}</code></td>
  <td data-label="${t('label')}" class="wrap">${c.label ?? ''}</td>
  <td data-label="${t('created')}">${time(lang, t, c.createdAt, 'short')}</td>
  <td data-label="${t('lastUsed')}">${time(lang, t, c.lastUsedAt, 'short')}</td>
  <td data-label="${t('expires')}">${c.expiresAt ? time(lang, t, c.expiresAt, 'short') : t('expiresNever')}</td>
  <td data-label="${t('status')}">${statusCell(ctx, isKey, c)}</td>
  <td data-label="${t('actions')}">${c.revokedAt
    ? ''
    : html`<a href="${CREDENTIAL_PATH[v.scope]}/${c.prefix}/revoke">${t('revoke')}<span class="visually-hidden"> ${c.prefix}</span></a>`}</td>
</tr>`,
  );
  return scrollTable(
    t,
    caption,
    html`<table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">${t('prefix')}</th><th scope="col">${t('label')}</th><th scope="col">${t('created')}</th>
<th scope="col">${t('lastUsed')}</th><th scope="col">${t('expires')}</th><th scope="col">${t('status')}</th><th scope="col">${t('actions')}</th></tr></thead>
<tbody>${rows}</tbody>
</table>`,
  );
}

export function credentialsPage(ctx: PageContext, v: CredentialsView): SafeHtml {
  const { t } = ctx;
  const isKey = v.scope === 'read';
  const usage = isKey
    ? ''
    : html`<h2>${t('tokenUsage')}</h2><pre class="code"><code>${uploadCommand(v.baseUrl, '<token>')}</code></pre>`;
  const body = html`<p>${isKey ? t('keysIntro', { company: v.companyName }) : t('tokensIntro')}</p>
<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">${isKey ? t('createKey') : t('createToken')}</h2>
  <form class="form" method="post" action="${CREDENTIAL_PATH[v.scope]}">
    ${csrfField(ctx)}
    <div class="field">
      <label for="label">${t('label')}</label>
      <p class="hint" id="label-hint">${t('labelHint')}</p>
      <input id="label" name="label" type="text" maxlength="200" aria-describedby="label-hint">
    </div>
    ${isKey ? expiryField(ctx) : ''}
    <button type="submit" class="primary">${isKey ? t('createKeyButton') : t('createTokenButton')}</button>
  </form>
</section>
<section aria-labelledby="list-title">
  <h2 id="list-title">${isKey ? t('keysList') : t('tokensList')}</h2>
  ${v.credentials.length === 0 ? html`<p>${isKey ? t('noKeys') : t('noTokens')}</p>` : listTable(ctx, v)}
</section>
${usage}`;
  return page(ctx, {
    title: isKey ? t('keysTitle') : t('tokensTitle'),
    section: isKey ? 'keys' : 'tokens',
    body,
    notice: v.error ? { text: v.error, kind: 'error' } : v.notice ? { text: v.notice, kind: 'success' } : null,
  });
}

export function revokePage(ctx: PageContext, scope: CredentialScope, credential: Credential): SafeHtml {
  const { t } = ctx;
  const path = CREDENTIAL_PATH[scope];
  const title = scope === 'read' ? t('revokeKeyTitle', { prefix: credential.prefix }) : t('revokeTokenTitle', { prefix: credential.prefix });
  const body = html`${credential.label ? html`<p class="wrap">${t('label')}: ${credential.label}</p>` : ''}
<p>${t('revokeWarning')}</p>
<form method="post" action="${path}/${credential.prefix}/revoke" class="actions">
  ${csrfField(ctx)}
  <button type="submit" class="danger">${t('revokeConfirm')}</button>
  <a href="${path}">${t('cancel')}</a>
</form>`;
  return page(ctx, { title, section: scope === 'read' ? 'keys' : 'tokens', body });
}

/**
 * The page a creation redirects to: the new value once (highlighted, with a
 * copy button and an "I have saved it" step), or, when it was already shown,
 * what to do if it was not saved. `secret` is null in that second case.
 */
export function createdPage(ctx: PageContext, scope: CredentialScope, credential: Credential, secret: string | null, baseUrl: string): SafeHtml {
  const { t } = ctx;
  const isKey = scope === 'read';
  const path = CREDENTIAL_PATH[scope];
  const title = isKey ? t('keyCreatedTitle', { prefix: credential.prefix }) : t('tokenCreatedTitle', { prefix: credential.prefix });
  const body = secret
    ? html`<section class="card secret" aria-labelledby="secret-title">
  <h2 id="secret-title">${icon('triangle-alert')} ${t('secretShownOnce')}</h2>
  <p>${isKey ? t('keySaveIt') : t('tokenSaveIt')}</p>
  ${credential.expiresAt ? html`<p>${t('keyCreatedUntil')} ${time(ctx.lang, t, credential.expiresAt, 'long')}.</p>` : ''}
  ${copyable(t, 'new-secret', isKey ? t('newKey') : t('newToken'), secret, true)}
  ${isKey ? '' : copyable(t, 'new-command', t('tokenUsage'), uploadCommand(baseUrl, secret), true)}
  <p class="actions"><a class="button primary" href="${path}">${icon('circle-check')}${isKey ? t('secretSavedKey') : t('secretSavedToken')}</a></p>
</section>`
    : html`<section class="card" aria-labelledby="gone-title">
  <h2 id="gone-title">${t('secretGoneTitle')}</h2>
  <p>${t('secretGone')}</p>
  <p class="actions"><a class="button" href="${path}">${isKey ? t('backToKeys') : t('backToTokens')}</a>
  ${credential.revokedAt ? '' : html`<a href="${path}/${credential.prefix}/revoke">${t('revoke')}<span class="visually-hidden"> ${credential.prefix}</span></a>`}</p>
</section>`;
  return page(ctx, { title, section: isKey ? 'keys' : 'tokens', body });
}
