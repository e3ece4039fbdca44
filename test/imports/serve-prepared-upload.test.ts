/**
 * Through a real `mirador serve` on PostgreSQL: an upload-token PUT is
 * prepared by the import process while the HTTP process is still storing
 * it (imports/upload-preparation.ts), and concluded from that preparation
 * (the `import finished` log line says `prepared: true`); the data serves.
 * The body is sent in two parts, the second only once the server has logged
 * that the import process is preparing the import: no timing.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { mirador, serveProcess, type ServeProcess } from '../helpers/cli.js';
import { customersCsv } from '../helpers/csv.js';
import { bearer, request, type RawResponse } from '../helpers/http.js';
import { freshPostgresDatabase, postgresFactory } from '../helpers/stores.js';
import { waitUntil } from '../helpers/timing.js';

type LogEntry = { msg?: string; importId?: number; status?: string; prepared?: boolean; rows?: number };
const entries = (server: ServeProcess): LogEntry[] =>
  server.logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as LogEntry];
    } catch {
      return [];
    }
  });

/** A PUT whose body is written in parts: `send` each, then `end` for the response. */
function streamedPut(url: string, headers: Record<string, string>) {
  let answered!: (res: RawResponse) => void;
  let failed!: (err: unknown) => void;
  const response = new Promise<RawResponse>((resolve, reject) => ((answered = resolve), (failed = reject)));
  const req = httpRequest(url, { method: 'PUT', headers }, (res) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('error', failed);
    res.on('end', () => {
      const body = Buffer.concat(parts);
      answered({ status: res.statusCode ?? 0, headers: res.headers, body, text: () => body.toString(), json: () => JSON.parse(body.toString()) });
    });
  });
  req.on('error', failed);
  return {
    send: (part: Buffer) => new Promise<void>((resolve, reject) => req.write(part, (err) => (err ? reject(err) : resolve()))),
    end: (part: Buffer) => {
      req.end(part);
      return response;
    },
  };
}

const factory = await postgresFactory();

describe('an upload through the server, prepared while it is stored (PostgreSQL)', { skip: factory.skip }, () => {
  let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let env: Record<string, string>;
  let server: ServeProcess | undefined;

  before(async () => {
    db = await freshPostgresDatabase();
    env = { DATABASE_URL: db.url };
    assert.equal(mirador(['migrate'], env).code, 0);
    assert.equal(mirador(['company', 'create', 'served', '--name', 'Served'], env).code, 0);
  });
  after(async () => {
    await server?.stop();
    await db?.drop();
  });

  test('a token upload is applied by the prepared path, and its data serves', async () => {
    const token = mirador(['token', 'create', 'served', '--json'], env).json().key as string;
    const key = mirador(['key', 'create', 'served', '--json'], env).json().key as string;
    server = await serveProcess(env);
    const file = customersCsv(40_000);
    const put = streamedPut(`${server.baseUrl}/panel/api/imports/clientes?filename=clientes.csv`, {
      authorization: `Bearer ${token}`,
      'content-type': 'text/csv',
      'content-length': String(file.length),
    });
    // More than one blob (1 MiB), so that one is stored while the rest is held back.
    const first = 1.5 * 1024 * 1024;
    await put.send(file.subarray(0, first));
    await waitUntil('the import process to prepare the upload', () => entries(server!).some((e) => e.msg === 'import preparing while its upload is stored'));
    const res = await put.end(file.subarray(first));
    assert.equal(res.status, 202, res.text());
    const id = res.json().import_id as number;
    const finished = () => entries(server!).find((e) => e.msg === 'import finished' && e.importId === id);
    await waitUntil('the import to finish', () => finished() !== undefined);
    assert.equal(entries(server).find((e) => e.msg === 'import preparing while its upload is stored')?.importId, id);
    assert.deepEqual([finished()!.status, finished()!.rows, finished()!.prepared], ['succeeded', 40_000, true]);
    const page = await request(`${server.baseUrl}/v1/clientes?limit=1&offset=39999`, { headers: bearer(key) });
    assert.equal(page.status, 200);
    assert.equal(page.json().total, 40_000);
    assert.equal(page.json().items[0].id_erp, 'C040000');
  });
});
