/**
 * Imports across processes (SQLite file shared by child processes): the queue
 * survives restarts, and a process killed mid-import never leaves a half-applied
 * snapshot.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { importChildEnv, importChildExecArgv, IMPORT_INITIAL_OLD_SPACE_MB } from '../../src/imports/import-process.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { childPids } from '../helpers/child-pids.js';
import { customersCsv } from '../helpers/csv.js';
import { MAIN, mirador, serveProcess } from '../helpers/cli.js';
import { bearer, request } from '../helpers/http.js';
import { tempDir } from '../helpers/stores.js';
import { HANG_GUARD_MS, sleep, waitUntil } from '../helpers/timing.js';

type LogEntry = { msg?: string; importId?: number; pid?: number; status?: string };
const logEntry = (line: string): LogEntry | null => {
  try {
    return JSON.parse(line) as LogEntry;
  } catch {
    return null;
  }
};

describe('imports across processes (sqlite)', () => {
  const dir = tempDir();
  const dbFile = join(dir.path, 'mirador.db');
  const env = { DATABASE_URL: `sqlite:${dbFile}` };
  after(() => dir.remove());

  test('mirador import waits and prints the report; --no-wait queues durably for a later server', async () => {
    assert.equal(mirador(['company', 'create', 'acme', '--name', 'Acme'], env).code, 0);
    const key = mirador(['key', 'create', 'acme', '--json'], env).json().key;
    const file = join(dir.path, 'v1.csv');
    writeFileSync(file, customersCsv(500, () => 'v1'));
    const waited = mirador(['import', 'acme', 'clientes', file, '--json'], env);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(waited.json().status, 'succeeded');
    assert.equal(waited.json().inserted, 500);
    assert.match(waited.stderr, /import \d+: succeeded 100% 500 rows/);

    const file2 = join(dir.path, 'v2.csv');
    writeFileSync(file2, customersCsv(400, () => 'v2'));
    const queued = mirador(['import', 'acme', 'clientes', file2, '--no-wait', '--json'], env);
    assert.equal(queued.code, 0, queued.stderr);
    assert.equal(queued.json().status, 'queued');
    // Nothing runs it until a server (or another import) starts: the upload waits in the database.
    const history = mirador(['imports', 'acme', '--json'], env).json();
    assert.equal(history[0].status, 'queued');

    const server = await serveProcess(env);
    try {
      // Until the worker process has applied it, however long a busy machine takes.
      const total = async () => (await request(`${server.baseUrl}/v1/clientes?limit=1`, { headers: bearer(key) })).json().total;
      await waitUntil('the queued import to be applied by the server', async () => (await total()) === 400, HANG_GUARD_MS, 100);
      assert.equal(mirador(['imports', 'acme', '--json'], env).json()[0].status, 'succeeded');
    } finally {
      await server.stop();
    }
  });

  test('under serve, every import runs in a child process of its own that exits once it is done (issue 8)', async () => {
    // What is pinned: the memory an import churns through lives and dies with the import, in another
    // process, instead of staying in the allocator of the long-lived one that answers HTTP.
    assert.equal(mirador(['company', 'create', 'fresh', '--name', 'Fresh'], env).code, 0);
    const server = await serveProcess(env);
    try {
      const pids: number[] = [];
      for (const version of ['v1', 'v2']) {
        const file = join(dir.path, `fresh-${version}.csv`);
        writeFileSync(file, customersCsv(300, () => version));
        const queued = mirador(['import', 'fresh', 'clientes', file, '--no-wait', '--json'], env).json();
        const logged = (msg: string) => server.logs.map(logEntry).find((e) => e?.msg === msg && e.importId === queued.id);
        for (const deadline = Date.now() + HANG_GUARD_MS; !logged('import finished') && Date.now() < deadline; ) await sleep(50);
        assert.equal(logged('import finished')?.status, 'succeeded');
        const pid = logged('import started')?.pid;
        assert.equal(typeof pid, 'number', 'the log names the process that ran the import');
        pids.push(pid!);
      }
      assert.ok(!pids.includes(server.child.pid!), 'not the server process');
      assert.notEqual(pids[0], pids[1], 'a new process for each import');
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (const deadline = Date.now() + HANG_GUARD_MS; pids.some(alive) && Date.now() < deadline; ) await sleep(50);
      assert.deepEqual(pids.filter(alive), [], 'each exited after its import');
    } finally {
      await server.stop();
    }
  });

  test("the import process runs on glibc's malloc, one arena, with a larger first old generation: jemalloc is taken out of the server's LD_PRELOAD, the rest kept", async () => {
    // libm is loaded by Node anyway, so preloading it changes nothing; jemalloc need not be installed
    // (ld.so then says so on stderr and goes on): what is pinned is the child's environment.
    const server = await serveProcess({ ...env, LD_PRELOAD: 'libjemalloc.so.2 libm.so.6' });
    try {
      const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
      const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      assert.ok(environ(server.child.pid!).includes('LD_PRELOAD=libjemalloc.so.2 libm.so.6'), 'the server has both');
      const serverCmdline = cmdline(server.child.pid!);
      // The server starts an import process (which waits for work) once it listens; one that has just
      // made the other tests' gzip segments exits and is replaced, so any child read whole will do.
      // Not one caught between fork and exec (it still has the server's command line and environment),
      // nor one exiting (the kernel then shows an empty environment).
      let seen: string[] = [];
      let argv: string[] = [];
      await waitUntil(
        'an import process to read',
        () => {
          for (const pid of childPids(server.child.pid!)) {
            try {
              if (cmdline(pid) === serverCmdline) continue;
              argv = cmdline(pid).split('\0');
              seen = environ(pid);
              if (seen.length > 0) return true;
            } catch {
              // exited in between
            }
          }
          return false;
        },
        HANG_GUARD_MS,
        50,
      );
      assert.deepEqual(seen.filter((v) => v.startsWith('LD_PRELOAD=')), ['LD_PRELOAD=libm.so.6']);
      assert.ok(seen.includes('MALLOC_ARENA_MAX=1'), "glibc's malloc on one arena");
      assert.ok(seen.includes(`DATABASE_URL=${env.DATABASE_URL}`), "the rest of the environment is the server's");
      assert.ok(argv.includes(`--initial-old-space-size=${IMPORT_INITIAL_OLD_SPACE_MB}`), `the child's flags: ${argv.join(' ')}`);
    } finally {
      await server.stop();
    }
  });

  test('mirador import ends at publication, without gzip segments; a server makes them once, in its import process', async () => {
    assert.equal(mirador(['company', 'create', 'gz', '--name', 'Gz'], env).code, 0);
    const file = join(dir.path, 'gz.csv');
    writeFileSync(file, customersCsv(3000, (i) => `Cliente ${i} ${'con nombre largo '.repeat(8)}`));
    const done = mirador(['import', 'gz', 'clientes', file, '--json'], env);
    assert.equal(done.json().status, 'succeeded');
    assert.doesNotMatch(done.stderr, /segment/i);
    const store = new SqliteStore(dbFile);
    try {
      const company = (await store.companyBySlug('gz'))!;
      const live = (await store.liveSnapshotId(company.id, 'clientes'))!;
      const chunks = (await store.snapshotMeta(live))!.chunkStarts.length;
      assert.ok(chunks >= 3, `${chunks} chunks`);
      assert.deepEqual(await store.readSegments(live, 0, chunks - 1), [], 'the command made none');
      const server = await serveProcess(env);
      try {
        const written = () => server.logs.map(logEntry).filter((e) => e?.msg === 'gzip segments written' && (e as { snapshotId?: number }).snapshotId === live);
        for (const deadline = Date.now() + HANG_GUARD_MS; written().length === 0 && Date.now() < deadline; ) await sleep(50);
        const entry = written()[0];
        assert.ok(entry, 'the server logged the pass');
        assert.notEqual(entry.pid, server.child.pid);
        assert.equal((await store.readSegments(live, 0, chunks - 1)).length, chunks);
        await sleep(1500);
        assert.equal(written().length, 1, 'made once');
        // Every live snapshot of the file (the other tests' too) gets all its segments: a process
        // ending after one pass must not claim the next one on its way out and leave it empty.
        for (const slug of ['acme', 'fresh', 'gz']) {
          const id = (await store.liveSnapshotId((await store.companyBySlug(slug))!.id, 'clientes'))!;
          const n = (await store.snapshotMeta(id))!.chunkStarts.length;
          let made = 0;
          for (const deadline = Date.now() + HANG_GUARD_MS; made < n && Date.now() < deadline; await sleep(100)) made = (await store.readSegments(id, 0, n - 1)).length;
          assert.equal(made, n, `${slug}: every chunk has its segment`);
        }
      } finally {
        await server.stop();
      }
    } finally {
      await store.close();
    }
  });

  test('two servers on one file share the segment passes and finish every one', async () => {
    const slugs = ['two-a', 'two-b', 'two-c', 'two-d'];
    for (const slug of slugs) {
      assert.equal(mirador(['company', 'create', slug, '--name', slug], env).code, 0);
      const file = join(dir.path, `${slug}.csv`);
      writeFileSync(file, customersCsv(4000, (i) => `Cliente ${i} ${'con nombre largo '.repeat(8)}`));
      assert.equal(mirador(['import', slug, 'clientes', file, '--json'], env).json().status, 'succeeded');
    }
    const store = new SqliteStore(dbFile);
    const servers = await Promise.all([serveProcess(env), serveProcess(env)]);
    try {
      for (const slug of slugs) {
        const id = (await store.liveSnapshotId((await store.companyBySlug(slug))!.id, 'clientes'))!;
        const n = (await store.snapshotMeta(id))!.chunkStarts.length;
        let made = 0;
        for (const deadline = Date.now() + HANG_GUARD_MS; made < n && Date.now() < deadline; await sleep(100)) made = (await store.readSegments(id, 0, n - 1)).length;
        assert.equal(made, n, `${slug}: every chunk has its segment`);
      }
      const errors = servers.flatMap((s) => s.logs.map(logEntry).filter((e) => (e as { level?: number } | null)?.level === 50));
      assert.deepEqual(errors, [], 'no worker errors');
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await store.close();
    }
  });

  test('a failed import exits non-zero and says why', () => {
    const file = join(dir.path, 'bad.csv');
    writeFileSync(file, 'CODIGO;NOMBRE\r\nC1;a;b\r\n');
    const r = mirador(['import', 'acme', 'clientes', file], env);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /failed/);
    assert.match(r.stderr, /line 2/i);
    const bad = mirador(['import', 'acme', 'facturas', file], env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /not a kind/);
    assert.match(mirador(['import', 'acme', 'clientes', join(dir.path, 'missing.csv')], env).stderr, /Cannot read/);
  });

  test('SIGKILL at random moments mid-import: the old snapshot keeps serving, and the import later completes or fails, never half-applied', async () => {
    assert.equal(mirador(['company', 'create', 'crash', '--name', 'Crash'], env).code, 0);
    // Going back from 60,000 rows to 2,000 between trials is exactly what the guard holds.
    assert.equal(mirador(['company', 'guard', 'crash', '--off'], env).code, 0);
    const key = mirador(['key', 'create', 'crash', '--json'], env).json().key;
    const small = join(dir.path, 'old.csv');
    writeFileSync(small, customersCsv(2000, () => 'old'));
    assert.equal(mirador(['import', 'crash', 'clientes', small], env).code, 0);
    const big = join(dir.path, 'new.csv');
    writeFileSync(big, customersCsv(60_000, () => 'new'));

    const store = new SqliteStore(dbFile);
    let server = await serveProcess(env);
    const names = async () => {
      const seen = new Set<string>();
      let total = -1;
      for (const offset of [0, 1000, 1900]) {
        const body = (await request(`${server.baseUrl}/v1/clientes?limit=100&offset=${offset}`, { headers: bearer(key) })).json();
        body.items.forEach((i: { nombre: string }) => seen.add(i.nombre));
        if (total === -1) total = body.total;
        assert.equal(body.total, total, 'one snapshot per response');
      }
      return { seen: [...seen], total };
    };
    // Killed in `finally` whatever happens: a live child would keep this test process (and npm test) running.
    let child: ChildProcess | undefined;
    try {
      const company = (await store.companyBySlug('crash'))!;
      for (let trial = 0; trial < 3; trial++) {
        // A child `mirador import` applies the file itself; the server is stopped so only the child works on it.
        await server.stop();
        const importer = spawn(process.execPath, [MAIN, 'import', 'crash', 'clientes', big], {
          env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
          stdio: 'ignore',
        });
        child = importer;
        const exited = new Promise((r) => importer.once('exit', r));
        let status = '';
        // The deadlines below only stop a hung test: a loaded machine may take minutes, and must not fail it.
        for (const deadline = Date.now() + HANG_GUARD_MS; status !== 'running' && Date.now() < deadline; ) {
          status = (await store.listImports(company.id, 'clientes', 1))[0]?.status ?? '';
          if (status !== 'running') await sleep(20);
        }
        assert.equal(status, 'running', 'the import started');
        await sleep(Math.floor(Math.random() * 400));
        importer.kill('SIGKILL');
        await exited;
        child = undefined;
        server = await serveProcess(env);
        const now = await names();
        assert.equal(now.seen.length, 1, `trial ${trial}: a single version, got ${now.seen}`);
        assert.ok(['old', 'new'].includes(now.seen[0]!));
        assert.equal(now.total, now.seen[0] === 'old' ? 2000 : 60_000);
        // The restarted server recovers the interrupted import: it ends completed (or failed), never half-applied.
        status = 'running';
        for (const deadline = Date.now() + HANG_GUARD_MS; !['succeeded', 'failed'].includes(status) && Date.now() < deadline; ) {
          status = (await store.listImports(company.id, 'clientes', 1))[0]!.status;
          if (!['succeeded', 'failed'].includes(status)) await sleep(100);
        }
        assert.ok(['succeeded', 'failed'].includes(status), `ended ${status}`);
        const final = await names();
        assert.deepEqual(final.seen, status === 'succeeded' ? ['new'] : now.seen);
        if (trial < 2) {
          // Back to the old data for the next trial, by the command alone: with the server up, its
          // worker could be busy making the 60,000 rows' gzip segments, which on a loaded machine
          // has run the command into its timeout (it then printed nothing).
          await server.stop();
          const reset = mirador(['import', 'crash', 'clientes', small, '--json'], env);
          assert.equal(reset.code, 0, `the reset import exited ${reset.code}: ${reset.stderr}`);
          assert.equal(reset.json().status, 'succeeded');
          server = await serveProcess(env);
        }
      }
    } finally {
      child?.kill('SIGKILL');
      await server.stop();
      await store.close();
    }
  });
});

describe('importChildExecArgv', () => {
  test("keeps the server's flags but a debugger's, and adds the first old generation unless the operator set one", () => {
    const own = `--initial-old-space-size=${IMPORT_INITIAL_OLD_SPACE_MB}`;
    assert.deepEqual(importChildExecArgv([]), [own]);
    assert.deepEqual(importChildExecArgv(['--max-semi-space-size=4', '--inspect=9229', '--inspect-brk']), ['--max-semi-space-size=4', own]);
    assert.deepEqual(importChildExecArgv(['--initial-old-space-size=16']), ['--initial-old-space-size=16']);
    assert.deepEqual(importChildExecArgv(['--initial_old_space_size=16']), ['--initial_old_space_size=16']);
    assert.deepEqual(importChildExecArgv(['--initial-old-space-size-extra=1']), ['--initial-old-space-size-extra=1', own]);
  });
});

describe('importChildEnv', () => {
  test('drops jemalloc from LD_PRELOAD however it is named, keeps every other library and variable, and puts glibc on one arena', () => {
    const base = { PATH: '/usr/bin', NODE_OPTIONS: '--max-semi-space-size=4' };
    const child = { ...base, MALLOC_ARENA_MAX: '1' };
    assert.deepEqual(importChildEnv({ ...base, LD_PRELOAD: 'libjemalloc.so.2' }), child);
    assert.deepEqual(importChildEnv({ ...base, LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2' }), child);
    assert.deepEqual(importChildEnv({ ...base, LD_PRELOAD: 'libjemalloc.so' }), child);
    assert.deepEqual(importChildEnv({ ...base, LD_PRELOAD: 'a.so:libjemalloc.so.2 b.so' }), { ...child, LD_PRELOAD: 'a.so b.so' });
    assert.deepEqual(importChildEnv({ ...base, LD_PRELOAD: 'libjemalloc_extra.so' }), { ...child, LD_PRELOAD: 'libjemalloc_extra.so' });
    assert.deepEqual(importChildEnv(base), child);
    // An operator's own choice of arenas stands.
    assert.deepEqual(importChildEnv({ ...base, MALLOC_ARENA_MAX: '4' }), { ...base, MALLOC_ARENA_MAX: '4' });
  });
});
