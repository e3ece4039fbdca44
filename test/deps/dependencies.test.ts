/**
 * What is installed and declared. Issue 18 point 9: no installed package may
 * declare an `engines.node` that excludes the Node running the tests (npm
 * only warns, EBADENGINE, and the warning scrolls past). Issue 24 point 4:
 * runtime `dependencies` hold exactly what the server and CLI import.
 */
import assert from 'node:assert/strict';
import { builtinModules, createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// semver is what npm itself uses to read `engines`; typed here for the one call we make.
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };

interface Manifest {
  name?: string;
  version?: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** Every package directory under a node_modules folder, nested ones included. */
function packagesUnder(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  return readdirSync(nodeModules, { withFileTypes: true })
    .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith('.'))
    .flatMap((e) => {
      const dir = join(nodeModules, e.name);
      const own = e.name.startsWith('@') ? packagesUnder(dir) : existsSync(join(dir, 'package.json')) ? [dir] : [];
      return [...own, ...own.flatMap((d) => packagesUnder(join(d, 'node_modules')))];
    });
}

test('every installed package supports the running Node (no EBADENGINE on npm ci)', () => {
  const packages = packagesUnder(join(ROOT, 'node_modules'));
  assert.ok(packages.length > 100, `found only ${packages.length} packages under node_modules`);
  const excluded = packages.flatMap((dir) => {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    const range = manifest.engines?.node;
    if (range === undefined || semver.satisfies(process.version, range)) return [];
    return [`${relative(ROOT, dir)} (${manifest.name}@${manifest.version}) needs node ${range}`];
  });
  assert.deepEqual(excluded, [], `these packages exclude node ${process.version}; pin a version that supports it (package.json "overrides")`);
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The package names a source file imports (static `from`, dynamic `import()`, `require.resolve`), builtins left out. */
function importedPackages(source: string): string[] {
  // Examples in comments (`import … from 'mirador/client'`) are not imports.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  // `resolve('pkg/…')` too: files served from a package (a font, icons, a browser bundle) are used at run time.
  const specifiers = [...code.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+|\bresolve\(\s*)'([^'.][^']*)'/gm)].map((m) => m[1]!);
  return specifiers
    .filter((s) => !s.startsWith('node:') && !builtinModules.includes(s.split('/')[0]!))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
}

test('runtime dependencies are exactly the packages the server and CLI import', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  const runtime = new Set(Object.keys(manifest.dependencies ?? {}));
  const used = new Map<string, string>();
  for (const file of [join(ROOT, 'src'), join(ROOT, 'packages/client/src')].flatMap(sourceFiles)) {
    for (const name of importedPackages(readFileSync(file, 'utf8'))) if (!used.has(name)) used.set(name, relative(ROOT, file));
  }
  const missing = [...used].filter(([name]) => !runtime.has(name)).map(([name, file]) => `${name} (imported by ${file})`);
  assert.deepEqual(missing, [], 'imported at run time but not in "dependencies"');
  const unused = [...runtime].filter((name) => !used.has(name));
  assert.deepEqual(unused, [], 'in "dependencies" but imported by nothing under src/: move to devDependencies or remove');
});
