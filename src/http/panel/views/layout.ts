/**
 * The page frame every panel page shares: language, skip link, navigation,
 * account and language forms, and the one stylesheet and script (files
 * served from /panel/assets, never inline: the CSP forbids inline scripts).
 */
import { html, type SafeHtml } from '../html.js';
import type { Lang, Translate } from '../i18n.js';
import { icon, type IconName } from './icons.js';
import { mark } from './mark.js';

export interface PageContext {
  lang: Lang;
  t: Translate;
  /** The CSRF token for this page's forms. */
  csrf: string;
  /** The signed-in administrator, or null on the sign-in and error pages. */
  account: { email: string; companyName: string } | null;
  /** Path (and query) of this page: the language switch returns here. */
  path: string;
  assets: { css: string; js: string };
}

export type Section = 'overview' | 'keys' | 'tokens' | 'webhooks' | 'help' | 'audit' | null;

export interface PageOptions {
  title: string;
  body: SafeHtml;
  section?: Section;
  /** A message shown above the title (a result of the previous action). */
  notice?: { text: string; kind: 'success' | 'error' } | null;
}

export function csrfField(ctx: PageContext): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf}">`;
}

function nav(ctx: PageContext, section: Section): SafeHtml {
  const { t } = ctx;
  const link = (href: string, label: string, name: Section, glyph: IconName) =>
    html`<li><a href="${href}"${section === name ? html` aria-current="page"` : ''}>${icon(glyph)}${label}</a></li>`;
  return html`<nav class="nav" aria-label="${t('mainNav')}"><ul>
    ${link('/panel', t('navOverview'), 'overview', 'layout-dashboard')}
    ${link('/panel/keys', t('navKeys'), 'keys', 'key')}
    ${link('/panel/tokens', t('navTokens'), 'tokens', 'upload')}
    ${link('/panel/webhooks', t('navWebhooks'), 'webhooks', 'webhook')}
    ${link('/panel/help', t('navHelp'), 'help', 'book-open')}
    ${link('/panel/audit', t('navAudit'), 'audit', 'scroll-text')}
  </ul></nav>`;
}

function languageForm(ctx: PageContext): SafeHtml {
  const other: Lang = ctx.lang === 'es' ? 'en' : 'es';
  return html`<form class="lang" method="post" action="/panel/lang">
    ${csrfField(ctx)}
    <input type="hidden" name="lang" value="${other}">
    <input type="hidden" name="back" value="${ctx.path}">
    <button type="submit" class="link-button" lang="${other}">${ctx.t('otherLanguage')}</button>
  </form>`;
}

export function page(ctx: PageContext, options: PageOptions): SafeHtml {
  const { t } = ctx;
  const notice = options.notice
    ? html`<p class="notice notice-${options.notice.kind}" role="${options.notice.kind === 'error' ? 'alert' : 'status'}">${options.notice.text}</p>`
    : '';
  const account = ctx.account
    ? html`<div class="account">
        <span class="who">${t('signedInAs', { email: ctx.account.email, company: ctx.account.companyName })}</span>
        <form method="post" action="/panel/sign-out">${csrfField(ctx)}<button type="submit" class="link-button">${icon('log-out')}${t('signOut')}</button></form>
      </div>`
    : '';
  return html`<!doctype html>
<html lang="${ctx.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Mirador</title>
<link rel="icon" href="/panel/assets/mark.svg" type="image/svg+xml">
<link rel="stylesheet" href="${ctx.assets.css}">
<script src="${ctx.assets.js}" defer></script>
</head>
<body>
<a class="skip" href="#main">${t('skipToContent')}</a>
<header class="top">
  <div class="top-row">
    <a class="brand" href="/panel">${mark()}Mirador</a>
    ${languageForm(ctx)}
    ${account}
  </div>
  ${ctx.account ? nav(ctx, options.section ?? null) : ''}
</header>
<main id="main" tabindex="-1">
${notice}
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>
`;
}
