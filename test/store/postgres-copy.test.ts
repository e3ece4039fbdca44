/**
 * The binary COPY encoder and decoder against the real server: what goes in
 * with `copyIn` comes back with `copyOutRows` and `copyOut` byte for byte
 * (every byte value, NULLs, empty values, a value larger than the stream's
 * pieces), whichever way the stream is cut into pieces, each value in memory
 * of its own; and a broken stream is refused rather than misread.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Db } from '../../src/store/postgres/postgres-connection.js';
import fc from 'fast-check';
import { copyIn, CopyEncoder } from '../../src/store/postgres/postgres-copy.js';
import { copyOut, copyOutRows, CopyRowReader, type CopyRow } from '../../src/store/postgres/postgres-copy-out.js';
import { freshPostgresDatabase, postgresFactory } from '../helpers/stores.js';

const factory = await postgresFactory();

describe('binary COPY in and out (PostgreSQL)', { skip: factory.skip }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: Db;

  before(async () => {
    database = await freshPostgresDatabase();
    db = new Db(database.url);
    await db.run('CREATE TABLE t (n INTEGER NOT NULL, b BYTEA, s TEXT)');
  });

  after(async () => {
    await db.close();
    await database.drop();
  });

  test('rows written with copyIn read back equal with copyOutRows', async () => {
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const large = randomBytes(3 * 1024 * 1024 + 7); // many times the pieces a COPY stream arrives in
    const rows: [number, Buffer | null, string | null][] = [
      [1, everyByte, 'ñandú € \u{1F600}'],
      [2, null, null],
      [3, Buffer.alloc(0), ''],
      [4, large, 'x'],
    ];
    const enc = new CopyEncoder();
    for (const [n, b, s] of rows) {
      enc.row(3).int4(n);
      if (b === null) enc.bytesFollow(-1);
      else enc.bytes(b);
      if (s === null) enc.bytesFollow(-1);
      else enc.text(s);
    }
    await db.tx(async (c) => assert.equal(await copyIn(c, 't', ['n', 'b', 's'], [enc.take(true)]), rows.length));

    const check = (out: CopyRow[]) => {
      assert.equal(out.length, rows.length);
      out.forEach((row, i) => {
        const [n, b, s] = rows[i]!;
        assert.equal(row.length, 3);
        assert.equal(row[0]?.readInt32BE(0), n);
        assert.deepEqual(row[1], b);
        assert.equal(row[2]?.toString('utf8') ?? null, s);
        for (const f of row) if (f && f.length > 0) assert.equal(f.buffer.byteLength, f.length, 'a field keeps only its own bytes');
      });
    };
    check(await db.session((c) => copyOutRows(c, 'SELECT n, b, s FROM t ORDER BY n')));
    check(await copyOut(db, 'SELECT n, b, s FROM t ORDER BY n'));
    // An empty result is no rows, and the connection goes back to the pool usable.
    assert.deepEqual(await db.session((c) => copyOutRows(c, 'SELECT b FROM t WHERE n < 0')), []);
    assert.deepEqual(await copyOut(db, 'SELECT b FROM t WHERE n < 0'), []);
    assert.equal((await db.one<{ count: number }>('SELECT count(*)::int AS count FROM t'))!.count, rows.length);
  });

  test('a stream that is not binary COPY, or is cut inside a value, is refused', async () => {
    const whole = await db.session((c) => copyOutRows(c, 'SELECT b FROM t WHERE n = 1'));
    assert.equal(whole.length, 1);
    assert.throws(() => read([Buffer.from('n\tb\n1\t\\x00\n' + 'x'.repeat(20))]), /not a binary COPY stream/);
    const enc = new CopyEncoder();
    enc.row(1).bytes(Buffer.alloc(100, 1));
    const stream = enc.take(true);
    assert.throws(() => read([stream.subarray(0, 60)]), /ended inside a row/);
    assert.throws(() => read([stream, Buffer.from([0])]), /after the end/);
  });

  test('a stream cut into pieces anywhere reads as the whole', () => {
    const enc = new CopyEncoder();
    const values = [Buffer.from('ñandú'), null, Buffer.alloc(0), Buffer.alloc(300, 7), Buffer.from([0, 255, 1])];
    enc.row(0);
    for (let i = 0; i < 20; i++) {
      const v = values[i % values.length]!;
      enc.row(2).int4(i);
      if (v === null) enc.bytesFollow(-1);
      else enc.bytes(v);
    }
    const stream = enc.take(true);
    const whole = read([stream]);
    assert.equal(whole.length, 21);
    assert.deepEqual(whole[0], []);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 40 }), (cuts) => {
        const at = [0, ...cuts.sort((a, b) => a - b), stream.length];
        assert.deepEqual(read(at.slice(1).map((end, i) => stream.subarray(at[i], end))), whole);
      }),
      { numRuns: 300 },
    );
  });

  test('a query the server rejects fails, and the pool still serves', async () => {
    await assert.rejects(db.session((c) => copyOutRows(c, 'SELECT nope FROM t')), /nope/);
    await assert.rejects(copyOut(db, 'SELECT nope FROM t'), /nope/);
    assert.equal((await db.one<{ one: number }>('SELECT 1 AS one'))!.one, 1);
  });
});

/** The rows of a stream given in pieces. */
function read(pieces: Buffer[]): CopyRow[] {
  const reader = new CopyRowReader();
  for (const p of pieces) reader.push(p);
  return reader.end();
}
