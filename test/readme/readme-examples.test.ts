/**
 * Issue 7, point 5: every example of docs/integrating.md runs,
 * as written, against a server started here. Each fenced block there carries
 * a `<!-- readme-test: <id> -->` marker; a block without one fails this test.
 * The only change made to an example: http://127.0.0.1:3000 (the README's
 * local server) becomes this server's address. `mirador` and `npx mirador`
 * are the built command, as after `npm install` of the package.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse/sync';
import { WebhookSender } from '../../src/webhooks/send-webhook.js';
import { testEvent } from '../../src/webhooks/test-event.js';
import { generateWebhookSecret } from '../../src/webhooks/webhook-secret.js';
import { replaceRecords } from '../../src/snapshots/write-records.js';
import type { Store } from '../../src/store/store.js';
import { MAIN } from '../helpers/cli.js';
import { customer, customers, CUSTOMER_COLUMNS, range } from '../helpers/records.js';
import { request } from '../helpers/http.js';
import { sqliteFactory, tempDir } from '../helpers/stores.js';
import { companyWithKey, startServer, type TestServer } from '../helpers/test-server.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README_URL = 'http://127.0.0.1:3000';

/** The fenced blocks of the README's "Integrating" section, by marker. */
function integratingExamples(): Map<string, { lang: string; code: string }> {
  const section = readFileSync(join(ROOT, 'docs', 'integrating.md'), 'utf8');
  const examples = new Map<string, { lang: string; code: string }>();
  const fence = /(?:<!-- readme-test: ([a-z0-9-]+) -->\n)?```(\w*)\n([\s\S]*?)\n```/g;
  for (const m of section.matchAll(fence)) {
    assert.ok(m[1], `every example in "Integrating" is tested: mark this one with <!-- readme-test: id -->:\n${m[3]}`);
    assert.ok(!examples.has(m[1]!), `duplicate marker ${m[1]}`);
    examples.set(m[1]!, { lang: m[2]!, code: m[3]! });
  }
  return examples;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { cwd: string; env: Record<string, string> }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, LOG_LEVEL: 'silent', ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('README examples', () => {
  const examples = integratingExamples();
  const dir = tempDir('mirador-readme-');
  let store: Store;
  let cleanup: () => Promise<void>;
  let server: TestServer;
  let key: string;
  let companyId: number;
  let env: Record<string, string>;
  const example = (id: string) => {
    const found = examples.get(id);
    assert.ok(found, `README example ${id}`);
    return found.code.replaceAll(README_URL, server.baseUrl);
  };
  const sh = (id: string, extraEnv: Record<string, string> = {}) => run('sh', ['-c', example(id)], { cwd: dir.path, env: { ...env, ...extraEnv } });

  before(async () => {
    ({ store, cleanup } = await sqliteFactory.create());
    ({ key, company: { id: companyId } } = await companyWithKey(store, 'bi'));
    await replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-01-10T08:00:00Z') }, customers(range(40)));
    server = await startServer(store);
    // An installed package, as `npm install mirador` would leave it: node_modules/mirador and its bin.
    const bin = join(dir.path, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(ROOT, join(dir.path, 'node_modules', 'mirador'));
    symlinkSync(join(ROOT, 'node_modules', '@types'), join(dir.path, 'node_modules', '@types'));
    writeFileSync(join(bin, 'mirador'), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
    chmodSync(join(bin, 'mirador'), 0o755);
    writeFileSync(join(dir.path, 'package.json'), '{"private": true, "type": "module"}\n');
    env = { PATH: `${bin}:${process.env.PATH}`, MIRADOR_API_KEY: '' };
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
    dir.remove();
  });

  test('the section marks every example, and these are all of them', () => {
    assert.deepEqual([...examples.keys()].sort(), ['client', 'client-subset', 'client-sync', 'curl-key', 'curl-sandbox', 'pull-nightly', 'pull-sandbox', 'pull-subset', 'webhook-receiver']);
  });

  test('curl: the sandbox', async () => {
    const r = await sh('curl-sandbox');
    assert.equal(r.code, 0, r.stderr);
    const [list, detail] = r.stdout.replace(/}{/, '}\n{').split('\n').map((t) => JSON.parse(t));
    assert.equal(list.sandbox, true);
    assert.equal(list.items.length, 2);
    assert.ok(list.items.every((i: { actualizado_at: string }) => i.actualizado_at >= '2026-10-01'));
    assert.equal(detail.item.id_erp, 'OB000001');
  });

  test('curl: a key and a conditional request', async () => {
    const r = await sh('curl-key', { MIRADOR_API_KEY: key });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '304\n');
  });

  test('the TypeScript client example type-checks and runs', async () => {
    writeFileSync(join(dir.path, 'example.mts'), example('client'));
    writeFileSync(
      join(dir.path, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: true }, files: ['example.mts'] }),
    );
    const tsc = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: dir.path, env });
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);

    writeFileSync(join(dir.path, 'example.mjs'), example('client'));
    const r = await run(process.execPath, ['example.mjs'], { cwd: dir.path, env });
    assert.equal(r.code, 0, r.stderr);
    const [first, ...rest] = r.stdout.trim().split('\n');
    assert.match(first!, /^30 customers; first: \S/);
    assert.ok(rest.length > 2, r.stdout);
    assert.match(rest.at(-1)!, /^404 not_found \(request [0-9a-f-]{36}\)$/);
  });

  test('the client sync example type-checks and runs, applying tombstones', async () => {
    writeFileSync(join(dir.path, 'sync.mts'), example('client-sync'));
    writeFileSync(
      join(dir.path, 'tsconfig.sync.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: true }, files: ['sync.mts'] }),
    );
    const tsc = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.sync.json'], { cwd: dir.path, env });
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
    writeFileSync(join(dir.path, 'sync.mjs'), example('client-sync'));
    const r = await run(process.execPath, ['sync.mjs'], { cwd: dir.path, env });
    assert.equal(r.code, 0, r.stderr);
    const since = (await request(`${server.baseUrl}/v1/sandbox/clientes?updated_since=2026-09-01&limit=1000`)).json();
    assert.equal(r.stdout.trim(), `${since.total} customers changed since September`, 'the tombstones were not counted');
  });

  test('the node:http webhook receiver type-checks, runs, accepts a signed delivery once and refuses a forged one', async () => {
    writeFileSync(join(dir.path, 'receiver.mts'), example('webhook-receiver'));
    writeFileSync(
      join(dir.path, 'tsconfig.receiver.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: true }, files: ['receiver.mts'] }),
    );
    const tsc = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.receiver.json'], { cwd: dir.path, env });
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
    writeFileSync(join(dir.path, 'receiver.mjs'), example('webhook-receiver'));
    const secret = generateWebhookSecret();
    const child = spawn(process.execPath, ['receiver.mjs'], { cwd: dir.path, env: { ...process.env, ...env, PORT: '0', MIRADOR_WEBHOOK_SECRET: secret } });
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const port = /^Listening on port (\d+)$/.exec((await lines.next()).value)?.[1];
      assert.ok(port);
      // Delivered as the delivery loop does it (send-webhook.ts), to the address the example listens on.
      const sender = new WebhookSender({ timeoutMs: 10_000, allowHttp: true, allowPrivate: true });
      const event = testEvent();
      const message = { url: `http://127.0.0.1:${port}/`, secret, eventId: event.publicId, body: event.body };
      assert.equal((await sender.send(message)).statusCode, 204);
      assert.equal((await sender.send(message)).statusCode, 204, 'a retry is answered too…');
      const forged = await sender.send({ ...message, secret: generateWebhookSecret() });
      assert.deepEqual([forged.statusCode, forged.responseBody], [400, 'signature_mismatch']);
      sender.close();
      assert.equal((await lines.next()).value, 'webhook.test - +0 ~0 -0');
      child.kill();
      assert.equal((await lines.next()).done, true, '…but handled once');
    } finally {
      child.kill();
    }
  });

  test('the client subset example type-checks and runs (issue 17)', async () => {
    writeFileSync(join(dir.path, 'subset.mts'), example('client-subset'));
    writeFileSync(
      join(dir.path, 'tsconfig.subset.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: true }, files: ['subset.mts'] }),
    );
    const tsc = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.subset.json'], { cwd: dir.path, env });
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
    writeFileSync(join(dir.path, 'subset.mjs'), example('client-subset'));
    const r = await run(process.execPath, ['subset.mjs'], { cwd: dir.path, env });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    const projects = (await request(`${server.baseUrl}/v1/sandbox/obras?cliente_id_erp=C000011&estado=EN%20CURSO&estado=ACEPTADA`)).json();
    assert.ok(lines.includes(`${projects.total} projects of C000011 under way or accepted`), r.stdout);
    assert.ok(lines[0]!.startsWith('C0'), r.stdout);
  });

  test('npx mirador pull --where: a subset of the sandbox into CSV (issue 17)', async () => {
    const r = await sh('pull-subset');
    assert.equal(r.code, 0, r.stderr);
    const rows = parse(readFileSync(join(dir.path, 'pendientes.csv')), { columns: true }) as Record<string, string>[];
    const api = (await request(`${server.baseUrl}/v1/sandbox/avisos-correctivo?estado=PENDIENTE&estado=EN%20CURSO&limit=1000`)).json();
    assert.deepEqual(rows.map((x) => x.id_erp), api.items.map((i: { id_erp: string }) => i.id_erp));
    assert.deepEqual(Object.keys(rows[0]!), ['id_erp', 'fecha', 'cliente_id_erp', 'estado', 'actualizado_at']);
  });

  test('npx mirador pull: the sandbox into CSV', async () => {
    const r = await sh('pull-sandbox');
    assert.equal(r.code, 0, r.stderr);
    const rows = parse(readFileSync(join(dir.path, 'articulos.csv')), { columns: true }) as Record<string, string>[];
    assert.ok(rows.length >= 40);
    assert.ok(rows[0]!['data.DESCRIPCION'] !== undefined);
  });

  test('the nightly refresh script: everything, then only what changed', async () => {
    writeFileSync(join(dir.path, 'refresh-bi.sh'), example('pull-nightly'));
    // The script's home, as an operator would have made it.
    const bi = join(dir.path, 'bi');
    mkdirSync(bi);
    const nightly = () => run('sh', ['refresh-bi.sh'], { cwd: dir.path, env: { ...env, BI_DIR: bi, MIRADOR_URL: server.baseUrl, MIRADOR_API_KEY: key } });
    const csv = (kind: string) => parse(readFileSync(join(bi, 'data', `${kind}.csv`)), { columns: true }) as Record<string, string>[];

    const first = await nightly();
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /Pulled 40 records of clientes/);
    assert.equal(csv('clientes').length, 40);
    assert.equal(csv('obras').length, 0, 'a kind never imported is an empty file with its header');

    const changed = customers(range(40));
    changed[0] = customer('C000001', 'Renamed overnight');
    changed.push(customer('C000041', 'New overnight'));
    await replaceRecords(store, { companyId, kind: 'clientes', columns: CUSTOMER_COLUMNS, at: Date.parse('2026-02-01T03:00:00Z') }, changed);

    const second = await nightly();
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /Pulled 2 changed records of clientes/);
    assert.match(second.stderr, /Pulled 0 changed records of obras/);
    const rows = csv('clientes');
    assert.equal(rows.length, 41);
    assert.equal(rows.find((r) => r.id_erp === 'C000001')!.nombre, 'Renamed overnight');
  });
});
