// Runs every compiled test file with node's test runner. Kept as a script so
// the file list does not depend on the shell's glob support.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : ['dist/test', 'dist/packages'].flatMap(find).sort();
const result = spawnSync(
  process.execPath,
  ['--test', '--test-reporter=spec', '--test-concurrency=3', '--enable-source-maps', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
