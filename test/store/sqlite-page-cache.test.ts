/**
 * SQLite's page cache follows the process's read-cache budget
 * (sqlitePageCacheKiB): an eighth of CHUNK_CACHE_MB, from 4 to 16 MiB, so that
 * a small budget's RSS is not a quarter SQLite's. The rule, and that a real
 * connection gets it (read back from SQLite). That `mirador serve` passes its
 * budget is test/http/heap-growth.test.ts's.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_PAGE_CACHE_KIB, sqlitePageCacheKiB } from '../../src/store/sqlite/sqlite-accounts.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/stores.js';

const MiB = 1024 * 1024;

describe("SQLite's page cache by read-cache budget", () => {
  test('an eighth of the budget, from 4 to 16 MiB; 16 when no budget is given', () => {
    assert.equal(DEFAULT_PAGE_CACHE_KIB, 16 * 1024);
    assert.equal(sqlitePageCacheKiB(undefined), 16 * 1024);
    assert.equal(sqlitePageCacheKiB(0), 4 * 1024);
    assert.equal(sqlitePageCacheKiB(16 * MiB), 4 * 1024);
    assert.equal(sqlitePageCacheKiB(32 * MiB), 4 * 1024);
    assert.equal(sqlitePageCacheKiB(64 * MiB), 8 * 1024);
    assert.equal(sqlitePageCacheKiB(100 * MiB), 12_800);
    assert.equal(sqlitePageCacheKiB(128 * MiB), 16 * 1024);
    assert.equal(sqlitePageCacheKiB(512 * MiB), 16 * 1024);
  });

  for (const [budget, expected] of [[32 * MiB, 4096], [64 * MiB, 8192], [undefined, 16_384]] as const) {
    test(`a connection opened with a budget of ${budget === undefined ? 'none' : `${budget / MiB} MiB`} has ${expected} KiB of pages`, async () => {
      const dir = tempDir();
      const store = new SqliteStore(join(dir.path, 'mirador.db'), { readCacheBytes: budget });
      try {
        await store.migrate();
        assert.equal(store.pageCacheKiB, expected);
      } finally {
        await store.close();
        dir.remove();
      }
    });
  }
});
