// Starts the API reference (Scalar, served from this server). A file of its
// own, not an inline script: the page's CSP allows scripts from this origin only.
/* global Scalar */
Scalar.createApiReference('#reference', {
  url: '/openapi.json',
  // Nothing leaves for another host: no hosted fonts, no telemetry, no proxy, no AI agent.
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
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

// Two gaps in Scalar's markup that axe reports, mended as the reference renders:
// its code blocks' copy buttons have no name, and its endpoint lists scroll
// sideways on a phone without taking keyboard focus.
function mend(root) {
  for (const button of root.querySelectorAll('button.scalar-code-copy:not([aria-label])')) {
    button.setAttribute('aria-label', 'Copy code');
  }
  for (const region of root.querySelectorAll('.endpoints:not([tabindex])')) {
    region.setAttribute('tabindex', '0');
  }
}
new MutationObserver(() => mend(document)).observe(document.body, { childList: true, subtree: true });
mend(document);
