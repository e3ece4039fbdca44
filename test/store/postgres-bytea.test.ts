/**
 * BYTEA values read by a query (postgres-connection.ts, byteaOwnMemory) come
 * back with the right bytes in memory of their own: a small value is not a
 * slice of Node's shared 8 KiB pool, which a cached hash would keep alive
 * whole. In both of the server's output formats (hex, the default, and
 * escape), against the real server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { byteaOwnMemory, Db } from '../../src/store/postgres/postgres-connection.js';
import { freshPostgresDatabase, postgresFactory } from '../helpers/stores.js';

const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

test('byteaOwnMemory reads hex and escape text into a buffer of exactly its bytes', () => {
  const values = [Buffer.alloc(0), Buffer.from([0]), Buffer.from('ab'.repeat(16), 'hex'), everyByte];
  for (const v of values) {
    const hex = byteaOwnMemory(`\\x${v.toString('hex')}`);
    assert.deepEqual(hex, v);
    assert.equal(hex.buffer.byteLength, v.length);
  }
  // The escape format: printable bytes as they are, others as \ooo, a backslash doubled.
  const escaped = byteaOwnMemory('a\\000\\\\b\\377');
  assert.deepEqual(escaped, Buffer.from([0x61, 0, 0x5c, 0x62, 0xff]));
  assert.equal(escaped.buffer.byteLength, 5);
});

const factory = await postgresFactory();

describe('BYTEA from queries (PostgreSQL)', { skip: factory.skip }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: Db;

  before(async () => {
    database = await freshPostgresDatabase();
    db = new Db(database.url);
    await db.run('CREATE TABLE t (n INTEGER NOT NULL, b BYTEA)');
    await db.run('INSERT INTO t VALUES (1, $1), (2, $2), (3, $3)', [Buffer.from('0123456789abcdef0123456789abcdef', 'hex'), everyByte, Buffer.alloc(0)]);
  });

  after(async () => {
    await db.close();
    await database.drop();
  });

  for (const output of ['hex', 'escape']) {
    test(`bytea_output = ${output}: the same bytes, each value in memory of its own`, async () => {
      const rows = await db.session(async (c) => {
        await c.run(`SET bytea_output = ${output}`);
        const read = await c.rows<{ n: number; b: Buffer }>('SELECT n, b FROM t ORDER BY n');
        await c.run('RESET bytea_output');
        return read;
      });
      assert.deepEqual(
        rows.map((r) => r.b),
        [Buffer.from('0123456789abcdef0123456789abcdef', 'hex'), everyByte, Buffer.alloc(0)],
      );
      for (const r of rows) assert.equal(r.b.buffer.byteLength, r.b.length, `row ${r.n}`);
    });
  }
});
