/** How the panel writes dates, numbers, sizes and statuses, in the page's language. */
import { html, type SafeHtml } from '../html.js';
import { statusLabel, type Lang, type Translate } from '../i18n.js';

/**
 * Times are shown in Spain's time zone, where the panel's companies are,
 * with the zone's name so nobody has to guess; `datetime` carries the UTC
 * instant.
 */
const TIME_ZONE = 'Europe/Madrid';
const LOCALE: Record<Lang, string> = { es: 'es-ES', en: 'en-GB' };

const dateFormats = new Map<string, Intl.DateTimeFormat>();
const numberFormats = new Map<Lang, Intl.NumberFormat>();

/** `long`: 21 nov 2026, 08:47:43 CET; `short`, for tables: 21/11/2026, 08:47 CET. */
function dateFormat(lang: Lang, style: 'long' | 'short') {
  const key = `${lang}:${style}`;
  let f = dateFormats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(LOCALE[lang], {
      year: 'numeric',
      month: style === 'long' ? 'short' : '2-digit',
      day: style === 'long' ? 'numeric' : '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      ...(style === 'long' ? { second: '2-digit' } : {}),
      timeZone: TIME_ZONE,
      timeZoneName: 'short',
    });
    dateFormats.set(key, f);
  }
  return f;
}

export function formatNumber(lang: Lang, n: number): string {
  let f = numberFormats.get(lang);
  if (!f) {
    f = new Intl.NumberFormat(LOCALE[lang]);
    numberFormats.set(lang, f);
  }
  return f.format(n);
}

const priceFormats = new Map<Lang, Intl.NumberFormat>();

/** A price with its two decimals at least (719,30 €-style, without the currency the ERP did not give). */
export function formatPrice(lang: Lang, n: number): string {
  let f = priceFormats.get(lang);
  if (!f) {
    f = new Intl.NumberFormat(LOCALE[lang], { minimumFractionDigits: 2, maximumFractionDigits: 4 });
    priceFormats.set(lang, f);
  }
  return f.format(n);
}

export function time(lang: Lang, t: Translate, date: Date | null, style: 'long' | 'short' = 'long'): SafeHtml {
  if (!date) return html`${t('never')}`;
  return html`<time datetime="${date.toISOString()}">${dateFormat(lang, style).format(date)}</time>`;
}

export function formatBytes(lang: Lang, bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const rounded = unit === 0 ? value : Math.round(value * 10) / 10;
  return `${formatNumber(lang, rounded)} ${units[unit]}`;
}

export function formatDuration(lang: Lang, ms: number): string {
  return ms < 1000 ? `${formatNumber(lang, ms)} ms` : `${formatNumber(lang, Math.round(ms / 100) / 10)} s`;
}

/** A status as text with a shape class: colour is never the only sign. */
export function statusBadge(t: Translate, status: string): SafeHtml {
  const tone = status === 'succeeded' ? 'ok' : status === 'failed' || status === 'rejected' ? 'bad' : 'busy';
  return html`<span class="badge badge-${tone}">${statusLabel(t, status)}</span>`;
}

/** Where an upload came from: `panel`, `cli` or `token:<prefix>`. */
export function sourceLabel(source: string): string {
  if (source.startsWith('token:')) return `token ${source.slice('token:'.length)}`;
  return source === 'cli' ? 'CLI' : source;
}

/** A table that scrolls sideways on narrow screens; focusable so the keyboard can scroll it too. */
export function scrollTable(t: Translate, caption: string, table: SafeHtml): SafeHtml {
  // "stack": under 600 px each row becomes a card, its cells labelled by their data-label.
  return html`<div class="table-wrap stack" role="region" tabindex="0" aria-label="${t('scrollTable', { name: caption })}">${table}</div>`;
}
