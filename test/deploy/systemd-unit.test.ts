/**
 * Issue 22, point 6: deploy/mirador.service is a valid systemd unit, checked
 * by `systemd-analyze verify` where it is installed (skipped, saying so,
 * where it is not: containers often have no systemd).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { tempDir } from '../helpers/stores.js';

const UNIT = fileURLToPath(new URL('../../../deploy/mirador.service', import.meta.url));
const available = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' }).status === 0;
const skip = available ? false : 'systemd-analyze not found: deploy/mirador.service not verified (apt-get install systemd)';
if (skip) process.stderr.write(`${skip}\n`);

test('deploy/mirador.service passes systemd-analyze verify', { skip }, () => {
  const dir = tempDir('mirador-unit-');
  try {
    // The unit names /usr/bin/node, Debian's; verify checks the binary exists, so point it at this one.
    const unit = readFileSync(UNIT, 'utf8').replaceAll('/usr/bin/node', process.execPath);
    const file = join(dir.path, 'mirador.service');
    writeFileSync(file, unit);
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.trim(), '', 'no warning either');
  } finally {
    dir.remove();
  }
});
