/**
 * Issue 19, point 1, once per store: an event is written with the end of
 * its import (published, held, failed), in the contract's shape, with a
 * delivery per endpoint that wants it; the feed lists and filters them;
 * sweeps remove them after their retention. And the delivery queue's rules:
 * claims, retries, and an endpoint disabled after failing a whole period.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ImportWorker } from '../../src/imports/import-worker.js';
import { writeGuard } from '../../src/imports/deletion-guard.js';
import { confirmHeldImport } from '../../src/imports/held-imports.js';
import type { Kind } from '../../src/domain/kinds.js';
import type { Store } from '../../src/store/store.js';
import type { AttemptResult } from '../../src/store/events.js';
import { testEvent } from '../../src/webhooks/test-event.js';
import { customersCsv } from '../helpers/csv.js';
import type { StoreFactory } from '../helpers/stores.js';

async function* body(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}

const EVENT_KEYS = ['id', 'type', 'created_at', 'data'];
const DATA_KEYS = ['kind', 'import_id', 'snapshot', 'counts'];
const COUNT_KEYS = ['inserted', 'updated', 'unchanged', 'deleted'];

const attempt = (over: Partial<AttemptResult> = {}): AttemptResult => ({
  at: Date.now(),
  durationMs: 3,
  statusCode: 200,
  ok: true,
  error: null,
  responseBody: null,
  retryAt: null,
  ...over,
});

export function eventsSuite(factory: StoreFactory) {
  describe(`events and deliveries in the store (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let worker: ImportWorker;
    let n = 0;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      worker = new ImportWorker(store, { snapshotRetentionMs: 60_000 });
    });
    after(async () => {
      await cleanup?.();
    });

    const company = () => store.createCompany(`ev-${factory.name}-${++n}`, `Events ${n}`);
    async function importFile(companyId: number, kind: Kind, bytes: Buffer) {
      const job = await store.createImport({ companyId, kind, filename: 'export.csv', source: 'test' }, body(bytes), 1 << 30);
      const done = await worker.runOnce();
      assert.equal(done?.job.id, job.id);
      return done!.report;
    }
    const events = async (companyId: number, since: number | null = null) =>
      (await store.listEvents(companyId, since, 0, 1000)).bodies.map((b) => JSON.parse(b));

    test('published, held and failed imports each write one event in the contract shape', async () => {
      const c = await company();
      const first = await importFile(c.id, 'clientes', customersCsv(10));
      const again = await importFile(c.id, 'clientes', customersCsv(10));
      await writeGuard(store, c.id, { enabled: true, minRecords: 1, maxFraction: 0.1 });
      const held = await importFile(c.id, 'clientes', customersCsv(2));
      const failed = await importFile(c.id, 'articulos', Buffer.from('CODIGO;CODIGO\n1;2\n'));
      assert.deepEqual([first.status, again.status, held.status, failed.status], ['succeeded', 'succeeded', 'awaiting_confirmation', 'failed']);

      const list = await events(c.id);
      assert.deepEqual(list.map((e) => e.type), ['import.published', 'import.published', 'import.held', 'import.failed']);
      for (const e of list) {
        assert.deepEqual(Object.keys(e), EVENT_KEYS);
        assert.deepEqual(Object.keys(e.data), DATA_KEYS);
        assert.deepEqual(Object.keys(e.data.counts), COUNT_KEYS);
        assert.match(e.id, /^evt_[0-9a-f]{24}$/);
        assert.match(e.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
      assert.equal(new Set(list.map((e) => e.id)).size, 4);
      const [p1, p2, h, f] = list;
      assert.deepEqual(p1.data, { kind: 'clientes', import_id: first.import_id, snapshot: p1.data.snapshot, counts: { inserted: 10, updated: 0, unchanged: 0, deleted: 0 } });
      assert.match(p1.data.snapshot, /^[0-9a-f]{16}$/);
      // An import that changes nothing for readers still publishes, with zero changes, naming the
      // live snapshot, which it kept (issue 23: nothing is rewritten).
      assert.deepEqual(p2.data.counts, { inserted: 0, updated: 0, unchanged: 10, deleted: 0 });
      assert.equal(p2.data.snapshot, p1.data.snapshot);
      const meta = await store.snapshotMeta((await store.liveSnapshotId(c.id, 'clientes'))!);
      assert.equal(p2.data.snapshot, meta!.publicId, 'the event names the live snapshot');
      assert.deepEqual(h.data, { kind: 'clientes', import_id: held.import_id, snapshot: null, counts: { inserted: 0, updated: 0, unchanged: 2, deleted: 8 } });
      assert.deepEqual(f.data, { kind: 'articulos', import_id: failed.import_id, snapshot: null, counts: { inserted: 0, updated: 0, unchanged: 0, deleted: 0 } });

      // Confirming the held import publishes it: one more event, with its snapshot.
      await confirmHeldImport(store, c.id, held.import_id);
      const last = (await events(c.id)).at(-1);
      assert.equal(last.type, 'import.published');
      assert.equal(last.data.import_id, held.import_id);
      assert.equal(last.data.snapshot, (await store.snapshotMeta((await store.liveSnapshotId(c.id, 'clientes'))!))!.publicId);
    });

    test('no event without an import ending: a publication with no import, a failure repeated', async () => {
      const c = await company();
      const job = await store.createImport({ companyId: c.id, kind: 'obras', filename: 'x.csv', source: 'test' }, body(Buffer.from('x')), 100);
      await store.failImport(job.id, 'first', null);
      await store.failImport(job.id, 'again', null);
      assert.deepEqual((await events(c.id)).map((e) => e.type), ['import.failed']);
    });

    test('the feed: oldest first, since a time (inclusive), paged, one company only; swept after retention', async () => {
      const a = await company();
      const b = await company();
      await importFile(a.id, 'clientes', customersCsv(3));
      await new Promise((r) => setTimeout(r, 5));
      await importFile(a.id, 'obras', Buffer.from('CODIGO;NOMBRE\nO1;Obra\n'));
      await importFile(b.id, 'clientes', customersCsv(1));
      const all = await events(a.id);
      assert.equal(all.length, 2);
      assert.deepEqual(all.map((e) => e.data.kind), ['clientes', 'obras']);
      const since = Date.parse(all[1].created_at);
      assert.deepEqual((await events(a.id, since)).map((e) => e.id), [all[1].id]);
      const page = await store.listEvents(a.id, null, 1, 1);
      assert.equal(page.total, 2);
      assert.deepEqual(page.bodies.map((x) => JSON.parse(x).id), [all[1].id]);
      assert.equal((await events(b.id)).length, 1, 'each company sees its own');

      assert.ok((await store.sweepEvents(since)) >= 1, 'older than the cutoff: swept');
      assert.deepEqual((await events(a.id)).map((e) => e.id), [all[1].id]);
    });

    test('deliveries: one per enabled endpoint that wants the type, claimed once, retried, then delivered', async () => {
      const c = await company();
      const every = await store.createWebhookEndpoint({ companyId: c.id, url: 'https://a.example/h', eventTypes: [], secret: 'whsec_a' });
      const failedOnly = await store.createWebhookEndpoint({ companyId: c.id, url: 'https://b.example/h', eventTypes: ['import.failed'], secret: 'whsec_b' });
      const off = await store.createWebhookEndpoint({ companyId: c.id, url: 'https://c.example/h', eventTypes: [], secret: 'whsec_c' });
      await store.setWebhookEndpointEnabled(off.id, false);
      await importFile(c.id, 'clientes', customersCsv(2));
      const [event] = await events(c.id);
      assert.deepEqual((await store.listDeliveries(every.id, 10)).map((d) => [d.eventId, d.status]), [[event.id, 'pending']]);
      assert.equal((await store.listDeliveries(failedOnly.id, 10)).length, 0, 'not a type it wants');
      assert.equal((await store.listDeliveries(off.id, 10)).length, 0, 'disabled');

      const worker1 = 'test-host:1:a';
      const claimed = await store.claimDeliveries(worker1, 10, 60_000, []);
      assert.deepEqual(claimed.map((d) => [d.endpointId, d.eventId, d.url, d.secret]), [[every.id, event.id, every.url, 'whsec_a']]);
      assert.equal(claimed[0]!.body, JSON.stringify(event), 'the body delivered is the feed’s, byte for byte');
      assert.deepEqual(await store.claimDeliveries('test-host:2:b', 10, 60_000, []), [], 'a claimed delivery is not claimed again');

      assert.equal(await store.finishDelivery(claimed[0]!.id, 'test-host:2:b', attempt()), false, 'only the claimer records');
      assert.equal(await store.finishDelivery(claimed[0]!.id, worker1, attempt({ ok: false, statusCode: 500, error: 'Answered 500.', retryAt: Date.now() - 1 })), true);
      const retry = await store.claimDeliveries(worker1, 10, 60_000, []);
      assert.equal(retry.length, 1);
      assert.equal(retry[0]!.attempts, 1);
      assert.deepEqual(await store.claimDeliveries(worker1, 10, 60_000, [every.id]), [], 'skipped endpoints are left alone');
      await store.finishDelivery(retry[0]!.id, worker1, attempt());
      const [done] = await store.listDeliveries(every.id, 10);
      assert.equal(done!.status, 'delivered');
      assert.equal(done!.attempts, 2);
      assert.deepEqual((await store.listAttempts(every.id, 10)).map((a) => [a.statusCode, a.ok]), [[200, true], [500, false]]);
      assert.ok((await store.webhookEndpointById(every.id))!.lastSuccessAt);

      // Send again: pending once more, due now.
      await store.redeliver(done!.id);
      assert.equal((await store.claimDeliveries(worker1, 10, 60_000, [])).length, 1);
    });

    test('failing for the whole retry period: the delivery failed and the endpoint is disabled; enabling resumes', async () => {
      const c = await company();
      const e = await store.createWebhookEndpoint({ companyId: c.id, url: 'https://down.example/h', eventTypes: [], secret: 'whsec_d' });
      const worker1 = 'test-host:1:a';
      const d1 = await store.queueDelivery(e.id, testEvent());
      const d2 = await store.queueDelivery(e.id, testEvent());
      const [first] = await store.claimDeliveries(worker1, 1, 60_000, []);
      await store.finishDelivery(first!.id, worker1, attempt({ ok: false, statusCode: 503, error: 'Answered 503.', retryAt: null }));
      const endpoint = (await store.webhookEndpointById(e.id))!;
      assert.equal((await store.deliveryById(first!.id))!.status, 'failed');
      assert.equal(endpoint.disabledReason, 'failing');
      assert.ok(endpoint.disabledAt);
      assert.deepEqual(await store.claimDeliveries(worker1, 10, 60_000, []), [], 'nothing is sent to a disabled endpoint');
      const other = first!.id === d1.id ? d2 : d1;
      assert.equal((await store.deliveryById(other.id))!.status, 'pending', 'its other deliveries wait');

      const enabled = (await store.setWebhookEndpointEnabled(e.id, true))!;
      assert.equal(enabled.disabledAt, null);
      assert.deepEqual((await store.claimDeliveries(worker1, 10, 60_000, [])).map((d) => d.id), [other.id]);
    });

    test('a claim whose process is gone is released; a lease that ended is claimed again', async () => {
      const c = await company();
      const e = await store.createWebhookEndpoint({ companyId: c.id, url: 'https://x.example/h', eventTypes: [], secret: 'whsec_x' });
      await store.queueDelivery(e.id, testEvent());
      const [d] = await store.claimDeliveries('dead-host:1:a', 1, 60_000, []);
      assert.equal(await store.releaseDeliveries((w) => w === 'alive-host:1:b'), 0);
      assert.equal(await store.releaseDeliveries((w) => w === 'dead-host:1:a'), 1);
      const [again] = await store.claimDeliveries('alive-host:1:b', 1, 1, []);
      assert.equal(again!.id, d!.id);
      assert.equal((await store.claimDeliveries('third:1:c', 1, 60_000, [], Date.now() + 10)).length, 1, 'after its lease, anyone may take it');
    });

    test('deleting an endpoint removes its deliveries and attempts', async () => {
      const c = await company();
      const e = await store.createWebhookEndpoint({ companyId: c.id, url: 'https://x.example/h', eventTypes: [], secret: 'whsec_x' });
      await store.queueDelivery(e.id, testEvent());
      assert.equal(await store.deleteWebhookEndpoint(e.id), true);
      assert.equal(await store.webhookEndpointById(e.id), null);
      assert.deepEqual(await store.listDeliveries(e.id, 10), []);
      assert.equal(await store.deleteWebhookEndpoint(e.id), false);
    });
  });
}
