/**
 * Rendered batches are hashed by whichever thread has time (upload-thread.ts):
 * the records the writer stages must not depend on which one did.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHash } from 'node:crypto';
import { CURRENT_HASH, HASH_ALGORITHMS, hashBody, ItemRenderer } from '../../src/domain/item-renderer.js';
import { BatchRenderer, hashBatch, renderBatch, stageBatch, type RecordInput } from '../../src/snapshots/write-records.js';

const columns = ['CODIGO', 'NOMBRE', 'OBS'];
const rows: RecordInput[] = Array.from({ length: 7 }, (_, i) => ({
  fields: [`C${i}`, `Name ${i}`],
  cells: [`C${i}`, `Name ${i}`, i % 2 === 0 ? '' : 'x"\\\n€'.repeat(i)],
  line: i + 2,
}));

test('a batch stages the same records whether its hashes came with it or not, with either algorithm', () => {
  const batch = renderBatch(new ItemRenderer('clientes', columns), rows);
  for (const algorithm of HASH_ALGORITHMS) {
    const plain = stageBatch(batch, algorithm);
    const prehashed = stageBatch({ ...batch, hashes: hashBatch(batch, algorithm) }, algorithm);
    assert.deepEqual(prehashed, plain);
    for (const r of plain) assert.deepEqual(r.hash, hashBody(r.body, algorithm));
    assert.deepEqual(plain.map((r) => r.idErp), rows.map((r) => r.fields[0]));
    assert.deepEqual(plain.map((r) => r.line), rows.map((r) => r.line));
  }
});

test('record hashes: MD5 as before, SHA-256 cut to the same 16 bytes, SHA-256 by default', () => {
  const body = Buffer.from('{"id_erp":"C1","data":{"NOMBRE":"Pe\u00f1a"},"actualizado_at":"');
  assert.deepEqual(hashBody(body, 'md5'), createHash('md5').update(body).digest());
  assert.deepEqual(hashBody(body, 'sha256'), createHash('sha256').update(body).digest().subarray(0, 16));
  assert.equal(CURRENT_HASH, 'sha256');
  assert.deepEqual(hashBody(body), hashBody(body, 'sha256'));
  assert.deepEqual(hashBody(body.toString('utf8'), 'md5'), hashBody(body, 'md5'));
});

test('rows rendered a few at a time make the same batch as all at once', () => {
  const whole = renderBatch(new ItemRenderer('clientes', columns), rows);
  const parts = new BatchRenderer(new ItemRenderer('clientes', columns));
  parts.add(rows.slice(0, 2));
  parts.add(rows.slice(2, 3));
  parts.add(rows.slice(3));
  assert.equal(parts.count, rows.length);
  assert.deepEqual(parts.take(), whole);
  assert.equal(parts.count, 0);
});
