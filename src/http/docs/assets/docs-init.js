// Starts the API reference (Scalar 1.46, served from this server). A file of its
// own, not an inline script: the page's CSP allows scripts from this origin only.
/* global Scalar */
Scalar.createApiReference('#reference', {
  url: '/openapi.json',
  // Nothing leaves for another host: no hosted fonts, no telemetry, no proxy, no AI agent.
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: 'never',
  // The "Open API Client" button leads to Scalar's hosted client: not for a page that works offline.
  hideClientButton: true,
  hideDarkModeToggle: true,
  forceDarkModeState: 'light',
  documentDownloadType: 'json',
  // Every operation listed at once: there are few, and a reader scans them all.
  defaultOpenAllTags: true,
  defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
  metaData: { title: 'Mirador API reference' },
});

// Gaps in Scalar's markup that axe reports, mended as the reference renders
// (and again whenever Scalar sets the attribute concerned). The one axe finding
// a script cannot mend, buttons nested in the schema headings' buttons, is
// mended by docs.css.
function sectionName(element) {
  const section = element.closest('section[aria-labelledby]');
  const label = section && document.getElementById(section.getAttribute('aria-labelledby'));
  return label ? label.textContent.trim() : '';
}

function mend(root) {
  // The sidebar's entries are buttons carrying aria-selected, which only tabs,
  // options, rows and cells may carry: the entry being read is "current" instead.
  for (const button of root.querySelectorAll('button[aria-selected]:not([role])')) {
    if (button.getAttribute('aria-selected') === 'true') button.setAttribute('aria-current', 'location');
    else button.removeAttribute('aria-current');
    button.removeAttribute('aria-selected');
  }
  // The search button says role="search" (a landmark), which takes its name away.
  for (const button of root.querySelectorAll('button[role="search"]')) button.removeAttribute('role');
  // An <aside> may not be a navigation landmark; as itself it is a labelled complementary one.
  for (const aside of root.querySelectorAll('aside[role="navigation"]')) aside.removeAttribute('role');
  // The code samples' "more clients" button sits among the language tabs: a tab with a name.
  for (const button of root.querySelectorAll('[role="tablist"] button.client-libraries__select:not([role])')) {
    button.setAttribute('role', 'tab');
    button.setAttribute('aria-label', 'More languages');
  }
  // Every "Example Responses" card is a region with the same name: name each for its operation.
  for (const card of root.querySelectorAll('.response-card[role="region"][aria-labelledby]')) {
    const operation = sectionName(card);
    card.removeAttribute('aria-labelledby');
    card.setAttribute('aria-label', operation ? `Example responses: ${operation}` : 'Example responses');
  }
  // A schema's region is named like the tag of the same name ("estado"): say it is a schema.
  for (const schema of root.querySelectorAll('section.collapsible-section[aria-label]')) {
    const name = schema.getAttribute('aria-label');
    if (!name.startsWith('Schema: ')) schema.setAttribute('aria-label', `Schema: ${name}`);
  }
  // The contact and license links show only an icon when their text does not fit.
  for (const link of root.querySelectorAll('a[target="_blank"]:not([aria-label])')) {
    const text = link.textContent.trim();
    if (text && link.querySelector('svg')) link.setAttribute('aria-label', text);
  }
  // The endpoint lists scroll sideways on a phone without taking keyboard focus.
  for (const region of root.querySelectorAll('.endpoints:not([tabindex])')) region.setAttribute('tabindex', '0');
  // Code blocks' copy buttons have no name.
  for (const button of root.querySelectorAll('button.scalar-code-copy:not([aria-label])')) {
    button.setAttribute('aria-label', 'Copy code');
  }
}

new MutationObserver(() => mend(document)).observe(document.body, {
  childList: true,
  subtree: true,
  attributes: true,
  attributeFilter: ['aria-selected', 'role', 'aria-labelledby'],
});
mend(document);
