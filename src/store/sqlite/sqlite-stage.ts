/**
 * Where the SQLite adapter stages a snapshot's records when they do not
 * arrive in list order: the item bodies of new and changed records go to a
 * temporary file, appended as they come (written once and read once; an
 * unchanged record's is in the previous snapshot, previous-records.ts), and a small
 * index row per record — id, line, hash, time, where its body is — goes to a
 * TEMP table (SQLite's separate temporary database: no WAL traffic). Change
 * detection and list order are then SQL over the index alone.
 */
import type { Database, Statement } from 'better-sqlite3';
import { BodyFile } from '../body-file.js';
import { scratchDirBeside } from '../scratch-file.js';
import type { OrderedRow } from '../chunk-reuse.js';
import { UNSTAGED, type PreviousRecord } from '../previous-records.js';
import { allInserted, DELETED_EXAMPLES, DuplicateIdError, type SnapshotChanges } from '../store.js';

const MAX_DUPLICATES_REPORTED = 10;
/** Index rows read per keyset page, in list order. */
const ORDERED_PAGE = 2000;

interface IndexRow {
  id_erp: string;
  hash: Buffer;
  ts: number;
  off: number;
  len: number;
  prev_pos: number | null;
}

export class Stage {
  private readonly table: string;
  private readonly file: BodyFile;
  private readonly insert: Statement;
  private readonly firstLine: Statement;
  private readonly duplicates: { idErp: string; line: number; firstLine: number }[] = [];

  /** `dbPath` decides where the file goes: beside the database, where space was provisioned for it. */
  constructor(private readonly db: Database, dbPath: string, snapshotId: number) {
    this.table = `stage_${snapshotId}`;
    db.exec(`CREATE TEMP TABLE ${this.table} (
      rid INTEGER PRIMARY KEY, id_erp TEXT NOT NULL UNIQUE, line INTEGER NOT NULL,
      hash BLOB NOT NULL, ts INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL, prev_pos INTEGER)`);
    this.file = new BodyFile(scratchDirBeside(dbPath), String(snapshotId));
    this.insert = db.prepare(
      `INSERT INTO ${this.table} (id_erp, line, hash, ts, off, len) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id_erp) DO NOTHING`,
    );
    this.firstLine = db.prepare(`SELECT line FROM ${this.table} WHERE id_erp = ?`).pluck();
  }

  /**
   * Stages a batch (the caller wraps it in a transaction); the bodies of
   * records `unchanged` names are left in the previous snapshot (previous-records.ts).
   */
  add(
    batch: readonly { idErp: string; hash: Buffer; body: Uint8Array; line: number }[],
    at: number,
    unchanged?: readonly (PreviousRecord | undefined)[],
  ): void {
    for (let k = 0; k < batch.length; k++) {
      const r = batch[k]!;
      const off = unchanged?.[k] ? UNSTAGED : this.file.append(r.body);
      if (this.insert.run(r.idErp, r.line, r.hash, at, off, r.body.length).changes === 0 && this.duplicates.length < MAX_DUPLICATES_REPORTED) {
        this.duplicates.push({ idErp: r.idErp, line: r.line, firstLine: this.firstLine.get(r.idErp) as number });
      }
    }
  }

  /** Bodies written to the body file so far. */
  get bodiesStaged(): number {
    return this.file.count;
  }

  /** Throws DuplicateIdError when an id_erp was staged twice. */
  checkDuplicates(): void {
    if (this.duplicates.length > 0) throw new DuplicateIdError(this.duplicates);
  }

  /**
   * Compares the staged records with the previous snapshot's: an unchanged
   * record keeps the time of the import that last changed it, and notes its
   * position there (chunk-reuse.ts).
   */
  detectChanges(prev: number | null): SnapshotChanges {
    const { db, table } = this;
    const total = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    if (prev === null) return allInserted(total);
    const unchanged = db
      .prepare(
        `UPDATE ${table} SET ts = r.actualizado_at, prev_pos = r.pos FROM main.records r
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

  /**
   * The staged records in list order (time, then id_erp in byte order), a
   * page at a time, without their bodies (`bodies` reads them).
   */
  *ordered(): Generator<OrderedRow[]> {
    const { db, table } = this;
    db.exec(`CREATE INDEX ${table}_order ON ${table} (ts, id_erp)`);
    const columns = 'id_erp, hash, ts, off, len, prev_pos';
    const first = db.prepare(`SELECT ${columns} FROM ${table} ORDER BY ts, id_erp LIMIT ${ORDERED_PAGE}`);
    const next = db.prepare(`SELECT ${columns} FROM ${table} WHERE (ts, id_erp) > (?, ?) ORDER BY ts, id_erp LIMIT ${ORDERED_PAGE}`);
    // Keyset pages rather than one open cursor: the caller writes between pages on this connection.
    for (let rows = first.all() as IndexRow[]; rows.length > 0; ) {
      yield rows.map((r) => ({ idErp: r.id_erp, hash: r.hash, ts: r.ts, off: r.off, len: r.len, prevPos: r.prev_pos }));
      const last = rows[rows.length - 1]!;
      rows = next.all(last.ts, last.id_erp) as IndexRow[];
    }
  }

  /** The bodies of records staged with theirs, from the body file. */
  bodies(rows: readonly { off: number; len: number }[]): Buffer[] {
    return this.file.read(rows);
  }

  close(): void {
    this.file.close();
    this.db.exec(`DROP TABLE IF EXISTS temp.${this.table}`);
  }
}
