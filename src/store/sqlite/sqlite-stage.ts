/**
 * Where the SQLite adapter stages a snapshot's records when they do not
 * arrive in list order: the item bodies go to a temporary file, appended as
 * they come (the bulk of the bytes, written once and read once), and a small
 * index row per record — id, line, hash, time, where its body is — goes to a
 * TEMP table (SQLite's separate temporary database: no WAL traffic). Change
 * detection and list order are then SQL over the index alone.
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Database, Statement } from 'better-sqlite3';
import { allInserted, DELETED_EXAMPLES, DuplicateIdError, type SnapshotChanges } from '../store.js';

const MAX_DUPLICATES_REPORTED = 10;
/** Bodies are appended to the file through a buffer this large. */
const WRITE_BUFFER_BYTES = 4 * 1024 * 1024;
/** Index rows read per keyset page, in list order. */
const ORDERED_PAGE = 2000;

/** One staged record in list order, with its body. */
export interface OrderedRecord {
  idErp: string;
  hash: Buffer;
  ts: number;
  body: Buffer;
}

interface IndexRow {
  id_erp: string;
  hash: Buffer;
  ts: number;
  off: number;
  len: number;
}

export class Stage {
  private readonly table: string;
  private readonly fd: number;
  private readonly insert: Statement;
  private readonly firstLine: Statement;
  private readonly duplicates: { idErp: string; line: number; firstLine: number }[] = [];
  private readonly out = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private outLen = 0;
  /** Bytes of bodies written to the file so far (the file offset of the buffer's start). */
  private fileLen = 0;

  /** `dbPath` decides where the file goes: beside the database, where space was provisioned for it. */
  constructor(private readonly db: Database, dbPath: string, snapshotId: number) {
    this.table = `stage_${snapshotId}`;
    db.exec(`CREATE TEMP TABLE ${this.table} (
      rid INTEGER PRIMARY KEY, id_erp TEXT NOT NULL UNIQUE, line INTEGER NOT NULL,
      hash BLOB NOT NULL, ts INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL)`);
    const dir = dbPath === ':memory:' || dbPath === '' ? tmpdir() : dirname(dbPath);
    const file = join(dir, `.mirador-stage-${process.pid}-${snapshotId}-${randomBytes(4).toString('hex')}`);
    this.fd = openSync(file, 'w+', 0o600);
    // Unlinked at once: the file lives as long as the descriptor, and a crash leaves nothing behind.
    unlinkSync(file);
    this.insert = db.prepare(
      `INSERT INTO ${this.table} (id_erp, line, hash, ts, off, len) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id_erp) DO NOTHING`,
    );
    this.firstLine = db.prepare(`SELECT line FROM ${this.table} WHERE id_erp = ?`).pluck();
  }

  /** Stages a batch (the caller wraps it in a transaction). */
  add(batch: readonly { idErp: string; hash: Buffer; body: Uint8Array; line: number }[], at: number): void {
    for (const r of batch) {
      const off = this.append(r.body);
      if (this.insert.run(r.idErp, r.line, r.hash, at, off, r.body.length).changes === 0 && this.duplicates.length < MAX_DUPLICATES_REPORTED) {
        this.duplicates.push({ idErp: r.idErp, line: r.line, firstLine: this.firstLine.get(r.idErp) as number });
      }
    }
  }

  /** Throws DuplicateIdError when an id_erp was staged twice. */
  checkDuplicates(): void {
    if (this.duplicates.length > 0) throw new DuplicateIdError(this.duplicates);
  }

  /**
   * Compares the staged records with the previous snapshot's: an unchanged
   * record keeps the time of the import that last changed it.
   */
  detectChanges(prev: number | null): SnapshotChanges {
    const { db, table } = this;
    const total = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    if (prev === null) return allInserted(total);
    const unchanged = db
      .prepare(
        `UPDATE ${table} SET ts = r.actualizado_at FROM main.records r
         WHERE r.snapshot_id = ? AND r.id_erp = ${table}.id_erp AND r.hash = ${table}.hash`,
      )
      .run(prev).changes;
    const matched = db
      .prepare(`SELECT count(*) FROM ${table} s JOIN main.records r ON r.snapshot_id = ? AND r.id_erp = s.id_erp`)
      .pluck()
      .get(prev) as number;
    const prevCount = db.prepare('SELECT record_count FROM snapshots WHERE id = ?').pluck().get(prev) as number;
    const deletedExamples = db
      .prepare(
        `SELECT id_erp FROM main.records r WHERE r.snapshot_id = ?
         AND NOT EXISTS (SELECT 1 FROM ${table} s WHERE s.id_erp = r.id_erp) ORDER BY r.id_erp LIMIT ?`,
      )
      .pluck()
      .all(prev, DELETED_EXAMPLES) as string[];
    return { total, inserted: total - matched, updated: matched - unchanged, unchanged, deleted: prevCount - matched, deletedExamples };
  }

  /** The staged records in list order (time, then id_erp in byte order), a page at a time. */
  *ordered(): Generator<OrderedRecord[]> {
    this.flush();
    const { db, table } = this;
    db.exec(`CREATE INDEX ${table}_order ON ${table} (ts, id_erp)`);
    const first = db.prepare(`SELECT id_erp, hash, ts, off, len FROM ${table} ORDER BY ts, id_erp LIMIT ${ORDERED_PAGE}`);
    const next = db.prepare(
      `SELECT id_erp, hash, ts, off, len FROM ${table} WHERE (ts, id_erp) > (?, ?) ORDER BY ts, id_erp LIMIT ${ORDERED_PAGE}`,
    );
    // Keyset pages rather than one open cursor: the caller writes between pages on this connection.
    for (let rows = first.all() as IndexRow[]; rows.length > 0; ) {
      yield this.withBodies(rows);
      const last = rows[rows.length - 1]!;
      rows = next.all(last.ts, last.id_erp) as IndexRow[];
    }
  }

  close(): void {
    closeSync(this.fd);
    this.db.exec(`DROP TABLE IF EXISTS temp.${this.table}`);
  }

  private append(body: Uint8Array): number {
    const off = this.fileLen + this.outLen;
    if (this.outLen + body.length > this.out.length) this.flush();
    if (body.length > this.out.length) {
      writeAll(this.fd, body, this.fileLen);
      this.fileLen += body.length;
      return off;
    }
    this.out.set(body, this.outLen);
    this.outLen += body.length;
    return off;
  }

  private flush(): void {
    if (this.outLen === 0) return;
    writeAll(this.fd, this.out.subarray(0, this.outLen), this.fileLen);
    this.fileLen += this.outLen;
    this.outLen = 0;
  }

  /** Reads the bodies of a page of index rows: runs of adjacent bodies (a file in id order) in one read each. */
  private withBodies(rows: IndexRow[]): OrderedRecord[] {
    const out: OrderedRecord[] = [];
    for (let i = 0; i < rows.length; ) {
      let j = i + 1;
      while (j < rows.length && rows[j]!.off === rows[j - 1]!.off + rows[j - 1]!.len) j++;
      const start = rows[i]!.off;
      const last = rows[j - 1]!;
      const bytes = Buffer.allocUnsafe(last.off + last.len - start);
      for (let read = 0; read < bytes.length; ) {
        const n = readSync(this.fd, bytes, read, bytes.length - read, start + read);
        if (n === 0) throw new Error('staged bodies are shorter than their index');
        read += n;
      }
      for (let k = i; k < j; k++) {
        const r = rows[k]!;
        out.push({ idErp: r.id_erp, hash: r.hash, ts: r.ts, body: bytes.subarray(r.off - start, r.off - start + r.len) });
      }
      i = j;
    }
    return out;
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number) {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}
