/**
 * An anchor for details: the server most teams would write first. Fastify
 * and better-sqlite3, one table of (id_erp PRIMARY KEY, json TEXT) and one
 * `SELECT json FROM items WHERE id_erp = ?` per request, with the same key
 * check as the reference server (prefix lookup, SHA-256 of the secret,
 * constant-time comparison). It serves the very same item bytes as Mirador:
 * they are copied once, into its own SQLite file, from the snapshot Mirador
 * serves (when the file does not exist yet; a restart keeps it, so that a
 * fresh process starts with its own caches empty, as Mirador's do).
 *
 *   node dist/bench/plain-server.js --db <DATABASE_URL> --file plain.db --company bench --kind clientes --port 8082
 *
 * Prints "ready" on stdout when listening.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { parseCredential, secretMatches } from '../src/domain/api-keys.js';
import { isKind, type Kind } from '../src/domain/kinds.js';
import { openStore } from '../src/store/open-store.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    file: { type: 'string' },
    company: { type: 'string', default: 'bench' },
    kind: { type: 'string', default: 'clientes' },
    port: { type: 'string', default: '8082' },
  },
});
if (!args.db || !args.file || !isKind(args.kind!)) throw new Error('usage: plain-server --db <url> --file <sqlite file> [--company slug] [--kind kind] --port N');
const kind = args.kind as Kind;

const store = await openStore(args.db);
const company = await store.companyBySlug(args.company!);
if (!company) throw new Error(`no company ${args.company}`);
const secrets = new Map<string, Buffer>();
for (const c of await store.listCredentials(company.id, 'read')) if (!c.revokedAt) secrets.set(c.prefix, c.secretHash);

if (!existsSync(args.file)) {
  const snapshotId = await store.liveSnapshotId(company.id, kind);
  const meta = snapshotId === null ? null : await store.snapshotMeta(snapshotId);
  if (!meta) throw new Error(`no live snapshot of ${kind}`);
  const building = `${args.file}.building`;
  rmSync(building, { force: true });
  const db = new Database(building);
  db.exec('CREATE TABLE items (id_erp TEXT PRIMARY KEY, json TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO items (id_erp, json) VALUES (?, ?)');
  const ID = /^\{"id_erp":("(?:[^"\\]|\\.)*")/;
  for (let from = 0; from < meta.chunkStarts.length; from += 64) {
    const chunks = await store.readChunks(meta.id, from, Math.min(from + 63, meta.chunkStarts.length - 1));
    db.transaction(() => {
      for (const c of chunks) {
        for (let k = 0; k < c.offsets.length - 1; k++) {
          const json = c.bytes.toString('utf8', c.offsets[k]!, c.offsets[k + 1]! - 1);
          insert.run(JSON.parse(ID.exec(json)![1]!) as string, json);
        }
      }
    })();
  }
  db.close();
  renameSync(building, args.file);
}
await store.close();

const db = new Database(args.file, { readonly: true });
const select = db.prepare('SELECT json FROM items WHERE id_erp = ?').pluck();

function keyOk(authorization: string | undefined): boolean {
  if (!authorization?.startsWith('Bearer ')) return false;
  const parsed = parseCredential(authorization.slice(7).trim());
  if (!parsed || parsed.scope !== 'read') return false;
  const stored = secrets.get(parsed.prefix);
  return stored !== undefined && secretMatches(parsed.secret, stored);
}

const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>(`/v1/${kind}/:id`, (request, reply) => {
  if (!keyOk(request.headers.authorization)) return reply.code(401).send({ ok: false, error: 'unauthorized' });
  const json = select.get(request.params.id) as string | undefined;
  if (json === undefined) return reply.code(404).send({ ok: false, error: 'not_found' });
  return reply.type('application/json; charset=utf-8').send(`{"ok":true,"item":${json}}`);
});
app.get('/', async () => ({ ok: true }));
await app.listen({ port: Number(args.port), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
