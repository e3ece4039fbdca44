/**
 * Rendered batches are hashed by whichever thread has time (upload-thread.ts):
 * the records the writer stages must not depend on which one did.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashBody, ItemRenderer } from '../../src/domain/item-renderer.js';
import { BatchRenderer, hashBatch, renderBatch, stageBatch, type RecordInput } from '../../src/snapshots/write-records.js';

const columns = ['CODIGO', 'NOMBRE', 'OBS'];
const rows: RecordInput[] = Array.from({ length: 7 }, (_, i) => ({
  fields: [`C${i}`, `Name ${i}`],
  cells: [`C${i}`, `Name ${i}`, i % 2 === 0 ? '' : 'x"\\\n€'.repeat(i)],
  line: i + 2,
}));

test('a batch stages the same records whether its hashes came with it or not', () => {
  const batch = renderBatch(new ItemRenderer('clientes', columns), rows);
  const plain = stageBatch(batch);
  const prehashed = stageBatch({ ...batch, hashes: hashBatch(batch) });
  assert.deepEqual(prehashed, plain);
  for (const r of plain) assert.deepEqual(r.hash, hashBody(r.body));
  assert.deepEqual(plain.map((r) => r.idErp), rows.map((r) => r.fields[0]));
  assert.deepEqual(plain.map((r) => r.line), rows.map((r) => r.line));
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
