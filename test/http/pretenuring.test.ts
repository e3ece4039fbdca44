/**
 * A serving process turns V8's allocation-site pretenuring off
 * (src/http/pretenuring.ts), unless node's command line says either way; a
 * real `mirador serve` does it and says so, and V8 takes the flag. What it
 * does to the old generation is V8's, measured by bench/promoted-bytes.ts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { turnsPretenuringOff } from '../../src/http/pretenuring.js';
import { serveProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/stores.js';

test("pretenuring is turned off unless node's command line sets it, either way and in either spelling", () => {
  assert.equal(turnsPretenuringOff([]), true);
  assert.equal(turnsPretenuringOff(['--max-semi-space-size=4', '--heap-growing-percent=50']), true);
  assert.equal(turnsPretenuringOff(['--allocation-site-pretenuring']), false);
  assert.equal(turnsPretenuringOff(['--no-allocation-site-pretenuring']), false);
  assert.equal(turnsPretenuringOff(['--allocation_site_pretenuring']), false);
  assert.equal(turnsPretenuringOff(['--no_allocation_site_pretenuring']), false);
});

test('mirador serve turns pretenuring off, says so once listening, and V8 takes the flag', async () => {
  const dir = tempDir();
  const server = await serveProcess({ DATABASE_URL: `sqlite:${join(dir.path, 'mirador.db')}` });
  try {
    const listening = server.logs
      .map((l) => JSON.parse(l) as { msg?: string; allocationSitePretenuring?: boolean })
      .find((e) => e.msg === 'mirador listening');
    assert.ok(listening, server.logs.join('\n'));
    assert.equal(listening.allocationSitePretenuring, false);
    // V8 reports a flag it does not know on stderr, and carries on: that must never pass unseen.
    assert.ok(!server.logs.some((l) => /unrecognized flag/i.test(l)), server.logs.join('\n'));
  } finally {
    await server.stop();
    dir.remove();
  }
});
