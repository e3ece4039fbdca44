/** Integration help: the base URL, sandbox links and curl examples ready to copy. */
import { KINDS } from '../../../domain/kinds.js';
import { html, type SafeHtml } from '../html.js';
import { kindLabel } from '../i18n.js';
import { copyable, uploadCommand } from './credentials-page.js';
import { page, type PageContext } from './layout.js';

export function helpPage(ctx: PageContext, baseUrl: string): SafeHtml {
  const { t } = ctx;
  const key = ctx.lang === 'es' ? '<clave>' : '<key>';
  const examples = [
    { id: 'ex-sandbox', label: t('exampleSandbox'), command: `curl -s '${baseUrl}/v1/sandbox/clientes?limit=2'` },
    { id: 'ex-list', label: t('exampleList'), command: `curl -s -H "Authorization: Bearer ${key}" '${baseUrl}/v1/clientes?limit=100'` },
    {
      id: 'ex-since',
      label: t('exampleSince'),
      command: `curl -s -H "Authorization: Bearer ${key}" '${baseUrl}/v1/articulos?updated_since=2026-01-01T00:00:00Z'`,
    },
    { id: 'ex-detail', label: t('exampleDetail'), command: `curl -s -H "Authorization: Bearer ${key}" '${baseUrl}/v1/obras/O000001'` },
    { id: 'ex-upload', label: t('exampleUpload'), command: uploadCommand(baseUrl, '<token>') },
  ];
  const body = html`<p>${t('helpIntro')}</p>
<section class="card" aria-labelledby="base-title">
  <h2 id="base-title">${t('baseUrl')}</h2>
  ${copyable(t, 'base-url', t('baseUrlLabel'), baseUrl)}
</section>
<section class="card" id="sandbox" aria-labelledby="sandbox-title">
  <h2 id="sandbox-title">${t('sandboxTitle')}</h2>
  <p>${t('sandboxIntro')}</p>
  <ul class="sandbox-links">${KINDS.map(
    (k) => html`<li><a href="${baseUrl}/v1/sandbox/${k}">${kindLabel(t, k)}</a> <code class="wrap">${baseUrl}/v1/sandbox/${k}</code></li>`,
  )}</ul>
</section>
<section class="card" aria-labelledby="examples-title">
  <h2 id="examples-title">${t('examplesTitle')}</h2>
  <p>${t('examplePlaceholder')}</p>
  ${examples.map((e) => copyable(t, e.id, e.label, e.command, true))}
</section>`;
  return page(ctx, { title: t('helpTitle'), section: 'help', body });
}
