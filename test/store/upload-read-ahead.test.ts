/**
 * Reading a stored upload back (store/upload-packing.ts, readUpload) asks
 * for the next plain blob while the consumer still works on the current one,
 * so that the store's round trip overlaps the parsing; the bytes and their
 * order are unchanged, a packing that lands mid-read still continues from
 * the packed copy, and a read ahead that fails after the consumer stopped
 * fails nothing. The stores' own reads are tested on real databases in
 * upload-packing.test.ts; this is the reading order over any store.
 */
import assert from 'node:assert/strict';
import { brotliCompressSync } from 'node:zlib';
import { test } from 'node:test';
import { PACKED_ENCODING, readUpload, type UploadBlobs } from '../../src/store/upload-packing.js';

const pieces = [Buffer.from('id_erp;nombre\n'), Buffer.from('C1;Ana\n'), Buffer.from('C2;Luis\n'), Buffer.from('C3;Eva\n')];

test('the next blob is asked for before the consumer is done with the current one, and the bytes come in order', async () => {
  const asked: number[] = [];
  const blobs: UploadBlobs = {
    encoding: async () => null,
    plain: async (seq) => {
      asked.push(seq);
      return pieces[seq];
    },
    packed: async () => undefined,
  };
  const got: Buffer[] = [];
  for await (const part of readUpload(blobs)) {
    // While the consumer holds blob k, blob k + 1 has been asked for already.
    assert.equal(asked.at(-1), got.length + 1, `holding blob ${got.length}`);
    got.push(part);
  }
  assert.deepEqual(Buffer.concat(got), Buffer.concat(pieces));
  assert.deepEqual(asked, [0, 1, 2, 3, 4]);
});

test('packed while read: the read goes on from the packed copy, past the bytes it gave', async () => {
  let packed = false;
  const whole = Buffer.concat(pieces);
  const blobs: UploadBlobs = {
    encoding: async () => (packed ? PACKED_ENCODING : null),
    plain: async (seq) => {
      // The packing's transaction lands between blob 1 and blob 2: blob 2 is gone.
      if (seq >= 2) packed = true;
      return packed ? undefined : pieces[seq];
    },
    packed: async (seq) => (seq === 0 ? brotliCompressSync(whole) : undefined),
  };
  const got: Buffer[] = [];
  for await (const part of readUpload(blobs)) got.push(part);
  assert.deepEqual(Buffer.concat(got), whole);
});

test('a read ahead that fails after the consumer stopped fails nothing', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  try {
    const blobs: UploadBlobs = {
      encoding: async () => null,
      plain: async (seq) => {
        if (seq > 0) throw new Error('the store went away');
        return pieces[0];
      },
      packed: async () => undefined,
    };
    for await (const part of readUpload(blobs)) {
      assert.deepEqual(part, pieces[0]);
      break;
    }
    // Two turns of the event loop: an unhandled rejection would have been reported by now.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('a read ahead that fails while the consumer reads on is thrown where it reads', async () => {
  const blobs: UploadBlobs = {
    encoding: async () => null,
    plain: async (seq) => {
      if (seq === 2) throw new Error('the store went away');
      return pieces[seq];
    },
    packed: async () => undefined,
  };
  const got: Buffer[] = [];
  await assert.rejects(async () => {
    for await (const part of readUpload(blobs)) got.push(part);
  }, /the store went away/);
  assert.equal(got.length, 2);
});
