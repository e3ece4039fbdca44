/**
 * Issue 8, points 5, 8 and 9: graceful shutdown of `mirador serve`, and its
 * logs: one JSON line per request with id, company, key prefix, route, status
 * and duration — and never a key's or token's secret.
 */
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { bearer, request } from '../helpers/http.js';
import { mirador, serveProcess } from '../helpers/cli.js';
import { wideCustomersCsv } from '../helpers/csv.js';
import { tempDir } from '../helpers/stores.js';
import { HANG_GUARD_MS, waitUntil } from '../helpers/timing.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

describe('mirador serve lifecycle', () => {
  const dir = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(dir.path, 'mirador.db')}` };
  after(() => dir.remove());

  test('logs: one line per request with its context, and no secret ever', async () => {
    assert.equal(mirador(['company', 'create', 'logs', '--name', 'Logs'], env).code, 0);
    const { key, prefix } = mirador(['key', 'create', 'logs', '--json'], env).json();
    const secret = key.split('_')[2];
    const server = await serveProcess({ ...env, LOG_LEVEL: 'trace' });
    try {
      await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) });
      await request(`${server.baseUrl}/v1/clientes`, { headers: { 'x-api-key': key, 'x-request-id': 'trace-me-1' } });
      await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(`${key}x`) });
      await request(`${server.baseUrl}/v1/clientes?limit=0`, { headers: bearer(key) });
      const fake = 'upl_abcdefgh_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ';
      await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(fake) });
      // Each request's line is written after its response: wait for all five, not for a guessed time.
      await waitUntil('five request log lines', () => server.logs.filter((l) => l.includes('"msg":"request"')).length >= 5);
    } finally {
      await server.stop();
    }
    const all = server.logs.join('\n');
    assert.ok(!all.includes(secret), 'the secret of a key never reaches the logs');
    assert.ok(!all.includes('ZZZZZZZZZZZZZZZZZZZZZZZZ'), 'nor that of a token');
    const lines = server.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    const traced = lines.find((l) => l.reqId === 'trace-me-1');
    assert.ok(traced, 'the request id is logged');
    assert.equal(traced.keyPrefix, prefix);
    assert.equal(typeof traced.company, 'number');
    assert.equal(traced.route, '/v1/clientes');
    assert.equal(traced.status, 200);
    assert.equal(typeof traced.ms, 'number');
    assert.ok(lines.some((l) => l.status === 401 && l.keyPrefix === undefined));
    assert.ok(lines.some((l) => l.status === 400 && l.keyPrefix === prefix));
  });

  test('SIGTERM: requests in flight complete, new ones are refused, a running import completes', async () => {
    assert.equal(mirador(['company', 'create', 'stop', '--name', 'Stop'], env).code, 0);
    const { key } = mirador(['key', 'create', 'stop', '--json'], env).json();
    const file = join(dir.path, 'wide.csv');
    writeFileSync(file, wideCustomersCsv(3000));
    assert.equal(mirador(['import', 'stop', 'clientes', file], env).code, 0);
    const server = await serveProcess(env);

    // A big page (several MB) whose reader stays paused until new connections are refused:
    // in flight across the signal however slow the machine is.
    let started = false;
    let resume = () => {};
    const body = new Promise<{ status: number; length: number; json: () => any }>((resolve, reject) => {
      get(`${server.baseUrl}/v1/clientes?limit=1000`, { headers: bearer(key), agent: false }, (res) => {
        res.pause();
        started = true;
        const parts: Buffer[] = [];
        resume = () => {
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => {
            const all = Buffer.concat(parts);
            resolve({ status: res.statusCode!, length: all.length, json: () => JSON.parse(all.toString()) });
          });
          res.resume();
        };
      }).on('error', reject);
    });
    await waitUntil('the big page to start', () => started);
    // An import queued now, running when the signal arrives, must end completed.
    const big = join(dir.path, 'big.csv');
    writeFileSync(big, wideCustomersCsv(6000, 150, () => 'nuevo'));
    const queued = mirador(['import', 'stop', 'clientes', big, '--no-wait', '--json'], env).json();
    // Watched through the database file directly: a `mirador imports` per look would be slower than the import.
    const watcher = new SqliteStore(join(dir.path, 'mirador.db'));
    try {
      await waitUntil('the import to run', async () => (await watcher.importById(queued.id))?.status === 'running', HANG_GUARD_MS, 5);
    } finally {
      await watcher.close();
    }
    const exited = server.stop('SIGTERM');
    await waitUntil('new connections to be refused', () =>
      request(`${server.baseUrl}/v1/sandbox/clientes`).then(
        () => false,
        (err: Error) => /ECONNREFUSED|ECONNRESET|socket hang up/.test(err.message),
      ),
    );
    resume();
    const inFlight = await body;
    assert.equal(inFlight.status, 200);
    assert.ok(inFlight.length > 1_000_000, `${inFlight.length} bytes`);
    assert.equal(inFlight.json().items.length, 1000, 'the whole body arrived');
    assert.equal(await exited, 0, 'a clean exit');
    const job = mirador(['imports', 'stop', '--json'], env).json().find((j: { id: number }) => j.id === queued.id);
    assert.equal(job.status, 'succeeded', 'the running import was completed before the process exited');
  });
});
