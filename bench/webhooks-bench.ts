/**
 * Issue 19 point 7: webhook delivery, measured end to end with a real
 * `mirador serve` and a local receiver (a node:http server in this process
 * answering 204 at once).
 *
 * - Throughput: N deliveries queued in the store before the server starts;
 *   events delivered per second from the first arrival to the last.
 * - Delay: imports uploaded one after another through the upload-token API
 *   (an ERP's scheduled export); for each, from the event's `created_at`
 *   (written in the transaction that ends the import) to its arrival at the
 *   receiver: median and p99.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateCredential } from '../src/domain/api-keys.js';
import { openStore } from '../src/store/open-store.js';
import { testEvent } from '../src/webhooks/test-event.js';
import type { BenchContext } from './bench-context.js';
import { freshDatabase, type Backend } from './databases.js';
import { miradorEnv, startMirador } from './processes.js';
import { fmt, median, percentile } from './report.js';

interface Arrival {
  at: number;
  body: string;
}

async function receiver() {
  const arrivals: Arrival[] = [];
  let waiting: { count: number; resolve: () => void } | null = null;
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      arrivals.push({ at: Date.now(), body: Buffer.concat(parts).toString('utf8') });
      res.writeHead(204).end();
      if (waiting && arrivals.length >= waiting.count) {
        waiting.resolve();
        waiting = null;
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    until: (count: number) => (arrivals.length >= count ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { count, resolve }))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function customersCsv(n: number, version: number): string {
  const rows = ['CODIGO;01_NOMBRE_COMERCIAL;06_CIF'];
  for (let i = 0; i < n; i++) rows.push(`C${String(i).padStart(6, '0')};Cliente ${i} v${version};B${String(i).padStart(8, '0')}`);
  return `${rows.join('\n')}\n`;
}

async function oneBackend(ctx: BenchContext, backend: Backend, deliveries: number, imports: number) {
  const db = await freshDatabase(backend, ctx.outDir);
  const r = await receiver();
  const store = await openStore(db.url);
  await store.migrate();
  try {
    const company = await store.createCompany('bench-hooks', 'Bench webhooks');
    const endpoint = await store.createWebhookEndpoint({ companyId: company.id, url: r.url, eventTypes: [], secret: 'whsec_bench' });
    for (let i = 0; i < deliveries; i++) await store.queueDelivery(endpoint.id, testEvent());
    const env = miradorEnv(db.url, { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' });
    const server = await startMirador(env, { cpus: null, name: `mirador (${backend})` });
    try {
      await r.until(deliveries);
      const first = r.arrivals[0]!.at;
      const last = r.arrivals[deliveries - 1]!.at;
      const perSecond = ((deliveries - 1) * 1000) / Math.max(1, last - first);

      const token = generateCredential('upload');
      await store.createCredential({ companyId: company.id, scope: 'upload', prefix: token.prefix, secretHash: token.secretHash, label: 'bench' });
      const delays: number[] = [];
      for (let i = 0; i < imports; i++) {
        const before = r.arrivals.length;
        const res = await fetch(`${server.base}/panel/api/imports/clientes`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token.token}`, 'content-type': 'text/csv' },
          body: customersCsv(200, i),
        });
        if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
        await r.until(before + 1);
        const arrival = r.arrivals[before]!;
        const event = JSON.parse(arrival.body) as { type: string; created_at: string };
        if (event.type !== 'import.published') throw new Error(`unexpected event ${arrival.body}`);
        delays.push(arrival.at - Date.parse(event.created_at));
      }
      return { perSecond, delays };
    } finally {
      await server.stop();
    }
  } finally {
    await store.close();
    await r.close();
    await db.drop();
  }
}

export async function webhooksBench(ctx: BenchContext) {
  const deliveries = ctx.quick ? 500 : 3000;
  const imports = ctx.quick ? 10 : 40;
  const section = ctx.report.section(
    'webhooks',
    ['backend', 'delivered / s', 'import end → delivery: median ms', 'p99 ms', 'max ms'],
    [
      `${deliveries} test events queued, then one serve process delivers them to a local receiver (answers 204 at once)`,
      `${imports} imports of 200 customers uploaded one after another with an upload token; delay from the event's created_at to its arrival`,
    ],
  );
  const results: Record<string, unknown> = {};
  for (const backend of ctx.backends) {
    const { perSecond, delays } = await oneBackend(ctx, backend, deliveries, imports);
    results[backend] = { perSecond, delays };
    ctx.report.row(section, [
      backend,
      perSecond.toFixed(0),
      `${fmt.ms(median(delays))}`,
      `${fmt.ms(percentile(delays, 99))}`,
      `${fmt.ms(Math.max(...delays))}`,
    ]);
  }
  ctx.report.record('webhooks', results);
}
