/**
 * Issue 24, point 4: each layer imports only layers below it. The HTTP
 * server and the CLI sit on top; nothing under sandbox/, imports/,
 * snapshots/, store/ or domain/ may import from src/http or src/cli, or the
 * sandbox would again pull Fastify's read path into whatever builds it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));
const LOWER = ['sandbox', 'imports', 'snapshots', 'store', 'domain'];
const UPPER = ['http', 'cli'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative specifiers of `import … from`, `export … from`, `import '…'` and `import('…')`, comments left out. */
function relativeImports(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1]!);
}

test('the import scanner sees every form of import', () => {
  const sample = [
    "import type { A } from '../http/a.js';",
    "import { B,\n  C } from './b.js';",
    "export { D } from '../../http/d.js';",
    "export type { E } from '../e.js';",
    "import './side-effect.js';",
    "const f = await import('../cli/f.js');",
    "/** import { G } from '../http/g.js' */",
    "// import { H } from '../http/h.js'",
    "import { I } from 'fastify';",
  ].join('\n');
  assert.deepEqual(relativeImports(sample), ['../http/a.js', './b.js', '../../http/d.js', '../e.js', './side-effect.js', '../cli/f.js']);
});

test('sandbox, imports, snapshots, store and domain never import from src/http or src/cli', () => {
  const files = LOWER.flatMap((layer) => sourceFiles(join(SRC, layer)));
  assert.ok(files.length > 40, `found only ${files.length} files`);
  const upward = files.flatMap((file) =>
    relativeImports(readFileSync(file, 'utf8'))
      .filter((spec) => UPPER.includes(relative(SRC, resolve(dirname(file), spec)).split(sep)[0]!))
      .map((spec) => `${relative(SRC, file)} imports ${spec}`),
  );
  assert.deepEqual(upward, []);
});
