/**
 * Inline SVG icons from lucide-static (npm, ISC): read once at start from
 * the package, so nothing is downloaded by browsers and no icon font is
 * needed. Icons are decoration beside a text label: hidden from assistive
 * technology, and coloured by `currentColor`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SafeHtml } from '../html.js';

const NAMES = [
  'layout-dashboard', 'key', 'upload', 'book-open', 'log-out', 'languages', 'file-up', 'file-text', 'history',
  'columns', 'circle-check', 'circle-x', 'circle', 'clock', 'triangle-alert', 'copy', 'trash', 'external-link',
  'chevron-right', 'shield', 'database', 'webhook', 'scroll-text', 'eye',
] as const;
export type IconName = (typeof NAMES)[number];

function iconsDir(): string {
  // The package's main file is dist/cjs/lucide-static.js; the SVG files sit in icons/ at its root.
  const main = createRequire(import.meta.url).resolve('lucide-static');
  return join(dirname(main), '..', '..', 'icons');
}

function load(): Map<IconName, string> {
  const dir = iconsDir();
  const icons = new Map<IconName, string>();
  for (const name of NAMES) {
    const svg = readFileSync(join(dir, `${name}.svg`), 'utf8')
      .replace(/<!--[\s\S]*?-->/g, '')
      .replace(/\s*\n\s*/g, ' ')
      .replace(/class="[^"]*"/, 'class="icon" aria-hidden="true" focusable="false"')
      .replace(/ width="24" height="24"/, '')
      .trim();
    icons.set(name, svg);
  }
  return icons;
}

const ICONS = load();

/** Markup from the package's own files, fixed at start: never text from a request or a CSV. */
export function icon(name: IconName): SafeHtml {
  return new SafeHtml(ICONS.get(name)!);
}
