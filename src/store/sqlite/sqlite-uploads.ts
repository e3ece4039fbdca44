/**
 * Stored uploads after they are stored (sqlite-imports.ts stores them):
 * reading one back plain, copying one for a re-import, packing the uploads
 * of ended imports (store/upload-packing.ts) and removing them after
 * UPLOAD_RETENTION_DAYS.
 *
 * Packing reads and compresses outside any transaction (seconds of CPU must
 * not hold SQLite's one write lock), then writes in one short IMMEDIATE
 * transaction that checks the upload is still plain, ended and kept: another
 * process that packed or removed it meanwhile wins, and this copy is dropped.
 * An ended import's plain blobs are never written again, so what was read is
 * still what is stored.
 */
import type { Database, Statement } from 'better-sqlite3';
import { PACKED_ENCODING, packBlobs, readUpload, type PackedUpload } from '../upload-packing.js';

const ENDED = "('succeeded', 'failed', 'rejected')";

/**
 * The import's `file_encoding`, read with `SELECT *` so that this release
 * also reads a database one migration behind (schema-upgrade.test.ts runs it
 * so, standing for the previous release), where no upload is packed.
 */
function encodingOf(db: Database, id: number): string | null {
  const row = db.prepare('SELECT * FROM imports WHERE id = ?').get(id) as { file_encoding?: string | null } | undefined;
  return row?.file_encoding ?? null;
}

export function readImportFile(db: Database, id: number): AsyncGenerator<Buffer> {
  const plain = db.prepare('SELECT bytes FROM import_blobs WHERE import_id = ? AND seq = ?').pluck();
  // Prepared when first needed: on a database one migration behind, the table does not exist.
  let packed: Statement | undefined;
  return readUpload({
    encoding: async () => encodingOf(db, id),
    plain: async (seq) => plain.get(id, seq) as Buffer | undefined,
    packed: async (seq) => {
      packed ??= db.prepare('SELECT bytes FROM import_packed_blobs WHERE import_id = ? AND seq = ?').pluck();
      return packed.get(id, seq) as Buffer | undefined;
    },
  });
}

/** Copies import `from`'s stored upload, as it is stored, to import `to`; inside the caller's transaction. */
export function copyImportFile(db: Database, from: number, to: number): void {
  const encoding = encodingOf(db, from);
  if (encoding === null) {
    db.prepare('INSERT INTO import_blobs (import_id, seq, bytes) SELECT ?, seq, bytes FROM import_blobs WHERE import_id = ?').run(to, from);
    return;
  }
  db.prepare('INSERT INTO import_packed_blobs (import_id, seq, bytes) SELECT ?, seq, bytes FROM import_packed_blobs WHERE import_id = ?').run(to, from);
  db.prepare('UPDATE imports SET file_encoding = ? WHERE id = ?').run(encoding, to);
}

export async function packUpload(db: Database, afterId: number, endedBefore = Number.MAX_SAFE_INTEGER): Promise<PackedUpload | null> {
  const unpacked = `status IN ${ENDED} AND file_removed_at IS NULL AND file_encoding IS NULL`;
  const id = db.prepare(`SELECT id FROM imports WHERE ${unpacked} AND finished_at < ? AND id > ? ORDER BY id LIMIT 1`).pluck().get(endedBefore, afterId) as
    | number
    | undefined;
  if (id === undefined) return null;
  const plain = db.prepare('SELECT bytes FROM import_blobs WHERE import_id = ? AND seq = ?').pluck();
  const blobs: Buffer[] = [];
  const sizes = await packBlobs(
    (seq) => plain.get(id, seq) as Buffer | undefined,
    (seq, packed) => {
      blobs[seq] = packed;
    },
  );
  if (!sizes) return { importId: id, packed: false, plainBytes: 0, packedBytes: 0 };
  const packed = db.transaction(() => {
    if (db.prepare(`SELECT 1 FROM imports WHERE id = ? AND ${unpacked}`).get(id) === undefined) return false;
    const insert = db.prepare('INSERT INTO import_packed_blobs (import_id, seq, bytes) VALUES (?, ?, ?)');
    blobs.forEach((bytes, seq) => insert.run(id, seq, bytes));
    db.prepare('DELETE FROM import_blobs WHERE import_id = ?').run(id);
    db.prepare('UPDATE imports SET file_encoding = ? WHERE id = ?').run(PACKED_ENCODING, id);
    return true;
  }).immediate();
  return { importId: id, packed, ...sizes };
}

export function sweepUploads(db: Database, endedBefore: number): number {
  return db.transaction(() => {
    const ids = db
      .prepare(`SELECT id FROM imports WHERE status IN ${ENDED} AND finished_at < ? AND file_removed_at IS NULL`)
      .pluck()
      .all(endedBefore) as number[];
    const removePlain = db.prepare('DELETE FROM import_blobs WHERE import_id = ?');
    const removePacked = db.prepare('DELETE FROM import_packed_blobs WHERE import_id = ?');
    const mark = db.prepare('UPDATE imports SET file_removed_at = ? WHERE id = ?');
    const now = Date.now();
    for (const id of ids) {
      removePlain.run(id);
      removePacked.run(id);
      mark.run(now, id);
    }
    // An instance of the previous release, during a rolling upgrade, removes only plain blobs.
    db.prepare(
      `DELETE FROM import_packed_blobs
       WHERE EXISTS (SELECT 1 FROM imports WHERE id = import_id AND file_removed_at IS NOT NULL)`,
    ).run();
    return ids.length;
  }).immediate();
}
