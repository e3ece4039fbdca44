/**
 * Stored uploads (postgres-imports.ts stores them): reading one while it is
 * still being received, reading one back plain, copying one for a re-import,
 * packing the uploads of ended imports (store/upload-packing.ts) and removing
 * them after UPLOAD_RETENTION_DAYS.
 *
 * Packing is one transaction per upload that holds its import's row FOR
 * UPDATE from the start, taken with SKIP LOCKED: instances sweeping at once
 * each pack a different upload, a re-import being copied (FOR SHARE) is
 * passed over until the next sweep, and a copy or a removal that comes while
 * an upload is packed waits for the transaction and then sees it packed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { UploadGoneError } from '../store.js';
import type { Conn, Db } from './postgres-connection.js';
import { copyOutRows } from './postgres-copy-out.js';
import { PACKED_ENCODING, packBlobs, readUpload, type PackedUpload } from '../upload-packing.js';

const ENDED = "('succeeded', 'failed', 'rejected')";
/**
 * Between two looks for the next blob of an upload still being received: a
 * blob is 1 MiB, 8 ms of a 1 Gbit/s link and 80 ms of a 100 Mbit/s one, and
 * a look is one indexed query.
 */
const RECEIVING_POLL_MS = 25;

/** One blob by binary COPY, not a query's hex text: for a 72 MB upload, 0.6 s of CPU (server and client) became 0.15 s. */
async function blob(c: Conn, table: 'import_blobs' | 'import_packed_blobs', id: number, seq: number): Promise<Buffer | undefined> {
  const rows = await copyOutRows(c, `SELECT bytes FROM ${table} WHERE import_id = ${Number(id)} AND seq = ${Number(seq)}`);
  return rows[0]?.[0] ?? undefined;
}

/**
 * The import's `file_encoding`, read with `SELECT *` so that this release
 * also reads a database one migration behind (schema-upgrade.test.ts runs it
 * so, standing for the previous release), where no upload is packed.
 */
async function encodingOf(c: Db | Conn, id: number): Promise<string | null> {
  const row = await c.one<{ file_encoding?: string | null }>('SELECT * FROM imports WHERE id = $1', [id]);
  return row?.file_encoding ?? null;
}

export function readImportFile(db: Db, id: number): AsyncGenerator<Buffer> {
  // One short COPY per blob holds no connection while the reader works on the blob.
  return readUpload({
    encoding: () => encodingOf(db, id),
    plain: (seq) => db.session((c) => blob(c, 'import_blobs', id, seq)),
    packed: (seq) => db.session((c) => blob(c, 'import_packed_blobs', id, seq)),
  });
}

/**
 * The upload of import `id` as it is received: each blob as soon as it is
 * committed, in order. Blobs are inserted two at a time (postgres-imports.ts),
 * so blob k+1 may be there before blob k: the read waits for blob k.
 */
export async function* readReceivingUpload(db: Db, id: number, signal: AbortSignal): AsyncGenerator<Buffer> {
  // One short COPY per blob, and no connection held while it waits.
  const read = (seq: number) => {
    const copy = db.session((c) => blob(c, 'import_blobs', id, seq));
    // Read ahead: a consumer that stops early never awaits it.
    copy.catch(() => {});
    return copy;
  };
  let next = read(0);
  for (let seq = 0; ; ) {
    const bytes = await next;
    signal.throwIfAborted();
    if (bytes) {
      next = read(++seq);
      yield bytes;
      continue;
    }
    // Missing, or committed since the COPY looked. One statement sees one snapshot: once the
    // upload is no longer receiving in it, every blob was committed before that, so a blob
    // missing from the same snapshot is past the end.
    const row = await db.one<{ status: string; present: boolean }>(
      `SELECT status, EXISTS (SELECT 1 FROM import_blobs WHERE import_id = $1 AND seq = $2) AS present FROM imports WHERE id = $1`,
      [id, seq],
    );
    signal.throwIfAborted();
    if (!row) throw new UploadGoneError(id);
    if (!row.present) {
      if (row.status !== 'receiving') return;
      await sleep(RECEIVING_POLL_MS, undefined, { signal });
    }
    next = read(seq);
  }
}

/**
 * Copies import `from`'s stored upload, as it is stored, to import `to`,
 * inside the caller's transaction, which holds `from`'s row FOR SHARE (so it
 * is neither packed nor removed meanwhile).
 */
export async function copyImportFile(c: Conn, from: number, to: number): Promise<void> {
  const encoding = await encodingOf(c, from);
  if (encoding === null) {
    await c.run('INSERT INTO import_blobs (import_id, seq, bytes) SELECT $1, seq, bytes FROM import_blobs WHERE import_id = $2', [to, from]);
    return;
  }
  await c.run('INSERT INTO import_packed_blobs (import_id, seq, bytes) SELECT $1, seq, bytes FROM import_packed_blobs WHERE import_id = $2', [
    to,
    from,
  ]);
  await c.run('UPDATE imports SET file_encoding = $1 WHERE id = $2', [encoding, to]);
}

export async function packUpload(db: Db, afterId: number, endedBefore = Number.MAX_SAFE_INTEGER): Promise<PackedUpload | null> {
  // Unbounded: reading and writing a large upload's blobs may outlast the statement timeout.
  return db.tx(
    async (c) => {
      const row = await c.one<{ id: number }>(
        `SELECT id FROM imports
         WHERE status IN ${ENDED} AND file_removed_at IS NULL AND file_encoding IS NULL AND finished_at < $2 AND id > $1
         ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [afterId, endedBefore],
      );
      if (!row) return null;
      const id = row.id;
      const sizes = await packBlobs(
        (seq) => blob(c, 'import_blobs', id, seq),
        async (seq, packed) => {
          await c.run('INSERT INTO import_packed_blobs (import_id, seq, bytes) VALUES ($1, $2, $3)', [id, seq, packed]);
        },
      );
      // Nothing written is kept: the transaction rolls back.
      if (!sizes) throw new PackMismatch(id);
      await c.run('DELETE FROM import_blobs WHERE import_id = $1', [id]);
      await c.run('UPDATE imports SET file_encoding = $1 WHERE id = $2', [PACKED_ENCODING, id]);
      return { importId: id, packed: true, ...sizes };
    },
    { unbounded: true },
  ).catch((err: unknown) => {
    if (err instanceof PackMismatch) return { importId: err.importId, packed: false, plainBytes: 0, packedBytes: 0 };
    throw err;
  });
}

/** Thrown inside packUpload's transaction to roll it back, and answered there. */
class PackMismatch extends Error {
  constructor(readonly importId: number) {
    super(`The upload of import ${importId} did not read back the same once packed: it is kept plain.`);
  }
}

export async function sweepUploads(db: Db, endedBefore: number): Promise<number> {
  // Unbounded: deleting the blobs of a few large uploads may outlast the statement timeout.
  return db.tx(
    async (c) => {
      const ids = (
        await c.rows<{ id: number }>(
          `UPDATE imports SET file_removed_at = $2
           WHERE status IN ${ENDED} AND finished_at < $1 AND file_removed_at IS NULL
           RETURNING id`,
          [endedBefore, Date.now()],
        )
      ).map((r) => r.id);
      if (ids.length > 0) {
        await c.run('DELETE FROM import_blobs WHERE import_id = ANY($1::bigint[])', [ids]);
        await c.run('DELETE FROM import_packed_blobs WHERE import_id = ANY($1::bigint[])', [ids]);
      }
      // An instance of the previous release, during a rolling upgrade, removes only plain blobs.
      await c.run(
        `DELETE FROM import_packed_blobs p
         WHERE EXISTS (SELECT 1 FROM imports i WHERE i.id = p.import_id AND i.file_removed_at IS NOT NULL)`,
      );
      return ids.length;
    },
    { unbounded: true },
  );
}
