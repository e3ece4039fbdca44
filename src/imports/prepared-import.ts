/**
 * `mirador import` of a local file. The upload is stored and queued as any
 * other (the queue, a server's worker or a later re-import read it from the
 * store). Where the store can write a snapshot while an upload is being
 * stored (Store's `writesWhileStoring`), the command also parses and writes
 * the import at the same time, from a second read of the file, instead of
 * storing first and reading the stored upload back: on PostgreSQL, storing
 * 72 MB is ~0.5 s of the server's work, which then overlaps with the parsing.
 *
 * What was prepared is only used when it stands for exactly the stored
 * upload: both reads saw the same bytes (length and CRC-32), and, once the
 * command's worker claims the import, nothing it depended on changed (see
 * `applyPreparedImport`). Otherwise it is discarded and the import is
 * applied from the store as usual; a preparation that fails (a broken file)
 * is discarded too, and the queue's application reports the error.
 */
import { crc32 } from 'node:zlib';
import type { Kind } from '../domain/kinds.js';
import type { AuditEvent, ImportJob, Store } from '../store/store.js';
import { prepareImport, type ApplyOptions, type PreparedImport } from './apply-import.js';

export interface LocalUpload {
  companyId: number;
  kind: Kind;
  filename: string;
  source: string;
  /** The file's size when the command began. */
  sizeBytes: number;
  /** Opens the file for reading (called once, or twice when the import is prepared). */
  open: () => AsyncIterable<Buffer>;
  /** Written when the upload is queued (see `Store.createImport`). */
  audit?: AuditEvent;
}

/** Bytes seen and their CRC-32, of a stream as it is read. */
class Fingerprint {
  bytes = 0;
  crc = 0;

  async *through(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const piece of source) {
      this.bytes += piece.length;
      this.crc = crc32(piece, this.crc);
      yield piece;
    }
  }

  equals(other: Fingerprint): boolean {
    return this.bytes === other.bytes && this.crc === other.crc;
  }
}

/**
 * Stores and queues `upload`; with `prepare` (and a store that can), also
 * prepares the import. Throws what `createImport` throws.
 */
export async function queueLocalFile(
  store: Store,
  upload: LocalUpload,
  maxBytes: number,
  options: { prepare: boolean; apply?: ApplyOptions },
): Promise<{ job: ImportJob; prepared: PreparedImport | null }> {
  const input = { companyId: upload.companyId, kind: upload.kind, filename: upload.filename, source: upload.source };
  if (!options.prepare || !store.writesWhileStoring) {
    return { job: await store.createImport(input, upload.open(), maxBytes, undefined, upload.audit), prepared: null };
  }

  let created!: (id: number) => void;
  let refused!: (err: unknown) => void;
  const importId = new Promise<number>((resolve, reject) => {
    created = resolve;
    refused = reject;
  });
  const stored = new Fingerprint();
  const storing = store.createImport(input, stored.through(upload.open()), maxBytes, created, upload.audit);
  storing.catch(refused);
  const read = new Fingerprint();
  // Never rejects: a preparation that fails is simply not used.
  const preparing = importId
    .then((id) => prepareImport(store, { id, companyId: upload.companyId, kind: upload.kind, filename: upload.filename, sizeBytes: upload.sizeBytes }, read.through(upload.open()), options.apply))
    .catch(() => null);
  let job: ImportJob;
  try {
    job = await storing;
  } catch (err) {
    await discard(store, await preparing);
    throw err;
  }
  const prepared = await preparing;
  if (prepared && !read.equals(stored)) {
    // The file changed between the two reads: only the stored upload counts.
    await discard(store, prepared);
    return { job, prepared: null };
  }
  return { job, prepared };
}

/** Removes a prepared snapshot that will not be used; null when there is none. */
export async function discard(store: Store, prepared: PreparedImport | null): Promise<void> {
  if (prepared && !prepared.snapshot.keptLive) await store.discardSnapshot(prepared.snapshot.snapshotId);
}
