/**
 * Issue 18, point 6: scripts/nightly-export.sh, as an ERP's scheduler runs it, against a real
 * `mirador serve` on each store, with a token from `mirador token create`: success exits 0,
 * a failed import 1, an import held by the mass-deletion guard 3, a revoked token 1. The
 * recipe in docs/nightly-export.md shows the shipped scripts as they are.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { mirador, serveProcess, type ServeProcess } from '../helpers/cli.js';
import { csv, customersCsv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { freshPostgresDatabase, postgresFactory, tempDir } from '../helpers/stores.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'nightly-export.sh');
const postgres = await postgresFactory();

/** A port free right now: the status URLs the server answers name PUBLIC_BASE_URL, so it must be known before it starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function runScript(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // dash: the script is POSIX sh, not bash.
    const child = spawn('dash', [SCRIPT, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`nightly-export.sh against mirador serve (${backend})`, { skip: backend === 'postgres' && postgres.skip }, () => {
    const dir = tempDir('mirador-nightly-');
    const env: Record<string, string> = { DATABASE_URL: `sqlite:${join(dir.path, 'm.db')}` };
    let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
    let server: ServeProcess;
    let scriptEnv: Record<string, string>;
    let key: string;
    const file = (name: string, bytes: Buffer) => {
      const path = join(dir.path, name);
      writeFileSync(path, bytes);
      return path;
    };

    before(async () => {
      if (backend === 'postgres') {
        database = await freshPostgresDatabase();
        env.DATABASE_URL = database.url;
      }
      assert.equal(mirador(['migrate'], env).code, 0);
      assert.equal(mirador(['company', 'create', 'acme', '--name', 'Acme'], env).code, 0);
      const port = await freePort();
      server = await serveProcess({ ...env, PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }, ['--port', String(port)]);
      const token = mirador(['token', 'create', 'acme', '--label', 'ERP nightly', '--json'], env).json().key;
      key = mirador(['key', 'create', 'acme', '--json'], env).json().key;
      scriptEnv = { MIRADOR_URL: server.baseUrl, MIRADOR_UPLOAD_TOKEN: token, MIRADOR_POLL_SECONDS: '1', MIRADOR_TIMEOUT_SECONDS: '120' };
    });
    after(async () => {
      await server?.stop();
      dir.remove();
      await database?.drop();
    });

    test('a plain export is gzipped, uploaded and followed to success: exit 0, the data is live', async () => {
      const r = await runScript(['clientes', file('clientes.csv', customersCsv(150))], scriptEnv);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /clientes\.csv queued as import (\d+) of clientes\nnightly-export: import \1 succeeded\n$/);
      const listed = await request(`${server.baseUrl}/v1/clientes?limit=1`, { headers: bearer(key) });
      assert.equal(listed.json().total, 150);
      const [last] = mirador(['imports', 'acme', '--json'], env).json();
      assert.deepEqual([last.filename, last.source.startsWith('token:'), last.size_bytes], ['clientes.csv.gz', true, customersCsv(150).length]);
      // An export already compressed is sent as it is.
      const gz = await runScript(['clientes', file('export de clientes (ñ).csv.gz', gzipSync(customersCsv(150)))], scriptEnv);
      assert.equal(gz.code, 0, gz.stderr);
      const [again] = mirador(['imports', 'acme', '--json'], env).json();
      assert.equal(again.report.unchanged, 150);
      assert.equal(again.filename, 'export_de_clientes_____.csv.gz', 'a name a URL carries as it is');
    });

    test('a failed import exits 1 saying why; the data stays', async () => {
      const dup = csv([['CODIGO', 'NOMBRE'], ['C1', 'Uno'], ['C1', 'Otro']]);
      const r = await runScript(['clientes', file('dup.csv', dup)], scriptEnv);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /nightly-export: import \d+ failed: .*duplicate/i);
      assert.equal((await request(`${server.baseUrl}/v1/clientes?limit=1`, { headers: bearer(key) })).json().total, 150);
    });

    test('an import held by the mass-deletion guard exits 3; the data stays', async () => {
      const r = await runScript(['clientes', file('few.csv', customersCsv(10))], scriptEnv);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /import (\d+) is held for confirmation .*: http:\/\/127\.0\.0\.1:\d+\/panel\/api\/imports\/\1\n$/);
      assert.equal(mirador(['imports', 'acme', '--json'], env).json()[0].status, 'awaiting_confirmation');
      assert.equal((await request(`${server.baseUrl}/v1/clientes?limit=1`, { headers: bearer(key) })).json().total, 150);
    });

    test('refused uploads exit 1: a revoked token, an unknown kind, a missing file', async () => {
      const ok = file('ok.csv', customersCsv(150));
      const kind = await runScript(['facturas', ok], scriptEnv);
      assert.equal(kind.code, 1);
      assert.match(kind.stderr, /upload of .*ok\.csv refused \(HTTP 404\)/);
      const missing = await runScript(['clientes', join(dir.path, 'nope.csv')], scriptEnv);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /cannot read .*nope\.csv/);
      const prefix = scriptEnv.MIRADOR_UPLOAD_TOKEN!.split('_')[1]!;
      assert.equal(mirador(['token', 'revoke', prefix], env).code, 0);
      // Revoked by another process: every instance refuses it within a second.
      await new Promise((r) => setTimeout(r, 1100));
      const revoked = await runScript(['clientes', ok], scriptEnv);
      assert.equal(revoked.code, 1);
      assert.match(revoked.stderr, /refused \(HTTP 401\).*unauthorized/);
    });
  });
}

test('docs/nightly-export.md shows the shipped scripts exactly', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'nightly-export.md'), 'utf8');
  for (const [path, lang] of [['scripts/nightly-export.sh', 'sh'], ['scripts/nightly-export.ps1', 'powershell']] as const) {
    const shipped = readFileSync(join(ROOT, path), 'utf8').trimEnd();
    assert.ok(doc.includes(`\`\`\`${lang}\n${shipped}\n\`\`\``), `${path} appears in docs/nightly-export.md as it is`);
  }
});

test('the PowerShell script is plain ASCII (Windows PowerShell 5.1 reads a file without a BOM as the ANSI code page)', () => {
  const bytes = readFileSync(join(ROOT, 'scripts', 'nightly-export.ps1'));
  assert.ok(bytes.every((b) => b < 0x80), 'no byte over 0x7F');
});

test('every sh block of docs/nightly-export.md is valid POSIX sh (dash -n)', async () => {
  const doc = readFileSync(join(ROOT, 'docs', 'nightly-export.md'), 'utf8');
  const blocks = [...doc.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
  assert.ok(blocks.length >= 4);
  for (const block of blocks) {
    const checked = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn('dash', ['-n'], { stdio: ['pipe', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stderr }));
      child.stdin.end(block);
    });
    assert.equal(checked.code, 0, `${checked.stderr}\n${block}`);
  }
});
