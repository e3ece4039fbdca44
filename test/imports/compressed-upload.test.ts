/** The upload stream of compressed-upload.ts on its own: gzip recognised however the body is cut, plain bodies untouched. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { CorruptUploadError, plainUpload } from '../../src/imports/compressed-upload.js';

async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function collect(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const piece of source) out.push(piece);
  return Buffer.concat(out);
}

const text = Buffer.from('CODIGO;NOMBRE\r\nC1;Ferretería Ibáñez\r\n'.repeat(200), 'utf8');

test('plain bodies pass unchanged, in pieces of any size', async () => {
  for (const size of [1, 2, 3, 1000]) assert.deepEqual(await collect(plainUpload(pieces(text, size), false)), text, `pieces of ${size}`);
  assert.deepEqual(await collect(plainUpload(pieces(Buffer.alloc(0), 1), false)), Buffer.alloc(0));
  assert.deepEqual(await collect(plainUpload(pieces(Buffer.from([0x1f]), 1), false)), Buffer.from([0x1f]), 'one byte that could start gzip');
});

test('gzip is inflated when declared, and recognised by its signature when not, however the body is cut', async () => {
  const gz = gzipSync(text);
  for (const declared of [true, false]) {
    for (const size of [1, 2, 7, 65536]) {
      assert.deepEqual(await collect(plainUpload(pieces(gz, size), declared)), text, `declared ${declared}, pieces of ${size}`);
    }
  }
  // Several members, as `cat a.gz b.gz` makes: one stream.
  assert.deepEqual(await collect(plainUpload(pieces(Buffer.concat([gz, gz]), 100), true)), Buffer.concat([text, text]));
});

test('a declared gzip that does not inflate, or is empty, throws CorruptUploadError', async () => {
  const gz = gzipSync(text);
  for (const bad of [gz.subarray(0, gz.length - 1), text, Buffer.alloc(0)]) {
    await assert.rejects(collect(plainUpload(pieces(bad, 64), true)), CorruptUploadError);
  }
});
