/** Images in the README and docs/: each one exists and says what it shows; every screenshot is shown. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../../../', import.meta.url);
const pages = ['README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** `![alt](target)` of a Markdown file, targets resolved against the file's folder. */
function images(page: string): { alt: string; file: URL; target: string }[] {
  const text = readFileSync(new URL(page, root), 'utf8');
  return [...text.matchAll(/!\[([^\]]*)\]\(([^)\s]+)\)/g)].map((m) => ({ alt: m[1]!, target: m[2]!, file: new URL(m[2]!, new URL(page, root)) }));
}

test('every image a doc shows exists, with alt text', () => {
  for (const page of pages) {
    for (const image of images(page)) {
      if (/^https?:/.test(image.target)) continue;
      assert.ok(existsSync(image.file), `${page}: ${image.target} does not exist`);
      assert.ok(image.alt.trim().length >= 10, `${page}: ${image.target} has no alt text worth the name`);
    }
  }
});

test('docs/panel.md shows every screenshot `npm run screenshots` writes, at both widths', () => {
  const shown = new Set(images('docs/panel.md').map((i) => i.target));
  for (const name of ['overview', 'upload', 'key-created', 'guard', 'docs']) {
    for (const width of [360, 1280]) assert.ok(shown.has(`screenshots/${name}-${width}.png`), `${name}-${width}`);
  }
  for (const file of readdirSync(new URL('docs/screenshots/', root))) assert.ok(shown.has(`screenshots/${file}`), `docs/screenshots/${file} is not shown`);
});
