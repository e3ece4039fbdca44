/**
 * A small read-cache budget (CHUNK_CACHE_MB) makes V8 collect a serving
 * process's old generation once it doubles (src/http/heap-growth.ts): the
 * rule, and that a real `mirador serve` applies it, and V8 takes the flag;
 * and that it sizes SQLite's page cache by the same budget
 * (test/store/sqlite-page-cache.test.ts has that rule). What the flag does to
 * memory is V8's, measured by the tenants bench.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FILL_GROWTH_PERCENT } from '../../src/http/cache-fill-growth.js';
import { heapGrowthPercent, SMALL_BUDGET_GROWTH_PERCENT, SMALL_BUDGET_MB } from '../../src/http/heap-growth.js';
import { serveProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/stores.js';

const MiB = 1024 * 1024;

describe('heap growth by read-cache budget', () => {
  test('below the threshold the old generation may double; from it on, V8 keeps its own', () => {
    assert.equal(SMALL_BUDGET_GROWTH_PERCENT, 100);
    assert.equal(heapGrowthPercent(0, []), 100);
    assert.equal(heapGrowthPercent(32 * MiB, []), 100);
    assert.equal(heapGrowthPercent(SMALL_BUDGET_MB * MiB - 1, []), 100);
    assert.equal(heapGrowthPercent(SMALL_BUDGET_MB * MiB, []), null);
    assert.equal(heapGrowthPercent(512 * MiB, []), null);
  });

  test("a growth set on node's command line wins, in either spelling", () => {
    assert.equal(heapGrowthPercent(32 * MiB, ['--heap-growing-percent=50']), null);
    assert.equal(heapGrowthPercent(32 * MiB, ['--heap-growing-percent', '50']), null);
    assert.equal(heapGrowthPercent(32 * MiB, ['--heap_growing_percent=50']), null);
    assert.equal(heapGrowthPercent(32 * MiB, ['--max-semi-space-size=4']), 100);
  });

  for (const [budget, expected, whileFilling, pageCacheKiB] of [['32', 100, undefined, 4096], [undefined, undefined, FILL_GROWTH_PERCENT, 16_384]] as const) {
    test(`mirador serve with CHUNK_CACHE_MB ${budget ?? 'unset (512)'}: ${expected ? 'says it set the growth, and V8 took the flag' : 'leaves V8 its own rule but while the chunk cache fills'}; SQLite gets ${pageCacheKiB} KiB of pages`, async () => {
      const dir = tempDir();
      const env: Record<string, string> = { DATABASE_URL: `sqlite:${join(dir.path, 'mirador.db')}` };
      if (budget) env.CHUNK_CACHE_MB = budget;
      const server = await serveProcess(env);
      try {
        const listening = server.logs
          .map((l) => JSON.parse(l) as { msg?: string; heapGrowthPercent?: number; heapGrowthWhileFilling?: number; sqlitePageCacheKiB?: number })
          .find((e) => e.msg === 'mirador listening');
        assert.ok(listening, server.logs.join('\n'));
        assert.equal(listening.heapGrowthPercent, expected);
        // The watch of cache-fill-growth.ts took its first look before the server said it listens.
        assert.equal(listening.heapGrowthWhileFilling, whileFilling);
        assert.equal(listening.sqlitePageCacheKiB, pageCacheKiB);
        // V8 reports a flag it does not know on stderr, and carries on: that must never pass unseen.
        assert.ok(!server.logs.some((l) => /unrecognized flag/i.test(l)), server.logs.join('\n'));
      } finally {
        await server.stop();
        dir.remove();
      }
    });
  }
});
