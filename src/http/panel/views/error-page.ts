import { html, type SafeHtml } from '../html.js';
import { page, type PageContext } from './layout.js';

/** A page for a refused or failed request; `text` is already translated. */
export function errorPage(ctx: PageContext, title: string, text: string): SafeHtml {
  return page(ctx, {
    title,
    body: html`<p>${text}</p><p><a href="/panel">${ctx.t('backToOverview')}</a></p>`,
  });
}
