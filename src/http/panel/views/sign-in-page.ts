import { html, type SafeHtml } from '../html.js';
import { csrfField, page, type PageContext } from './layout.js';

export function signInPage(
  ctx: PageContext,
  options: { email?: string; error?: string | null; notice?: string | null; next?: string },
): SafeHtml {
  const { t } = ctx;
  // The email field takes focus on load and, after a failed attempt, as the first field marked in error.
  const body = html`<p>${t('signInIntro')}</p>
<form class="card form sign-in" method="post" action="/panel/sign-in" novalidate>
  ${csrfField(ctx)}
  ${options.next ? html`<input type="hidden" name="next" value="${options.next}">` : ''}
  <div class="field">
    <label for="email">${t('email')}</label>
    <input id="email" name="email" type="email" autocomplete="username" required autofocus value="${options.email ?? ''}"
      ${options.error ? html`aria-invalid="true" aria-describedby="sign-in-error"` : ''}>
  </div>
  <div class="field">
    <label for="password">${t('password')}</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required
      ${options.error ? html`aria-invalid="true" aria-describedby="sign-in-error"` : ''}>
  </div>
  ${options.error ? html`<p id="sign-in-error" class="notice notice-error" role="alert">${options.error}</p>` : ''}
  <button type="submit" class="primary">${t('signInButton')}</button>
</form>`;
  return page(ctx, {
    title: t('signInTitle'),
    body,
    notice: options.notice ? { text: options.notice, kind: 'success' } : null,
  });
}
