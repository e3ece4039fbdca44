/** The README is checked against the code it documents, so it cannot drift silently. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { KINDS } from '../../src/domain/kinds.js';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { describeDefaults } from '../../src/imports/column-mapping.js';
import { IMPORT_ERROR_CODES } from '../../src/imports/import-error.js';

// The README is the front door; the reference tables live in docs/. Both count.
const root = new URL('../../../', import.meta.url);
const docs = readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md'));
const readme = [readFileSync(new URL('README.md', root), 'utf8'), ...docs.map((f) => readFileSync(new URL(`docs/${f}`, root), 'utf8'))].join('\n');

test('every API error code is in the README with its status', () => {
  for (const [code, { status }] of Object.entries(ERROR_CATALOG)) {
    assert.match(readme, new RegExp(`\\| ${status} \\| \`${code}\` \\|`), code);
  }
});

test('every import error code is in the README', () => {
  for (const code of [...Object.keys(IMPORT_ERROR_CODES), 'duplicate_id']) {
    assert.match(readme, new RegExp(`\\| \`${code}\` \\|`), code);
  }
});

test('the README lists the column names the default mapping recognises, exactly', () => {
  for (const kind of KINDS) {
    for (const d of describeDefaults(kind)) {
      const row = `| \`${kind}\` | \`${d.field}\`${d.type !== 'string' ? ` (${d.type})` : ''} | ${d.columns.map((c) => `\`${c}\``).join(', ')} |`;
      assert.ok(readme.includes(row), `missing or stale: ${row}`);
    }
  }
});

test('every configuration variable is in the README', () => {
  for (const name of CONFIG_VARIABLES) assert.match(readme, new RegExp(`\\| \`${name}\` \\|`), name);
});
