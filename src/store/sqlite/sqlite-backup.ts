/**
 * Backing up and restoring a SQLite database with SQLite's online backup API
 * (better-sqlite3's `db.backup()`): a page copy of the database as of one
 * read transaction. In WAL mode that transaction blocks no writer, so a backup
 * is taken while the server serves and the worker imports.
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.js';

/** Pages per backup step: all of them, so the copy is made in one read transaction (see `backup`). */
const ALL_PAGES = 0x7fffffff;

export async function backup(db: Database.Database, file: string): Promise<{ bytes: number }> {
  if (existsSync(file)) throw new Error(`${file} already exists: a backup never overwrites a file. Choose a new name.`);
  // Written beside, then renamed: a backup cut short never looks like a whole one.
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  try {
    // The API copies in steps and starts over when another connection writes between two
    // steps; with imports committing all the time, small steps might never finish. One step
    // copies everything inside one read transaction: a consistent picture of one moment.
    await db.backup(partial, { progress: () => ALL_PAGES });
    // The copy is in rollback-journal mode with a single file; make it self-contained.
    const copy = new Database(partial);
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    renameSync(partial, file);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  return { bytes: statSync(file).size };
}

export function isEmpty(db: Database.Database): boolean {
  return (db.prepare('SELECT count(*) FROM companies').pluck().get() as number) === 0;
}

/** Checks that `file` is a Mirador SQLite backup this version can read, and opens it read-only. */
function openBackup(file: string): Database.Database {
  if (!existsSync(file)) throw new Error(`There is no file ${file}.`);
  let source: Database.Database;
  try {
    source = new Database(file, { readonly: true, fileMustExist: true });
    source.pragma('schema_version');
  } catch {
    throw new Error(`${file} is not a SQLite database, so not a backup made by "mirador backup".`);
  }
  const version = source.pragma('user_version', { simple: true }) as number;
  const hasCompanies = source.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'companies'").pluck().get() === 1;
  if (version < 1 || !hasCompanies) {
    source.close();
    throw new Error(`${file} is a SQLite database but not a Mirador one (no Mirador schema in it).`);
  }
  if (version > SQLITE_MIGRATIONS.length) {
    source.close();
    throw new Error(
      `${file} was made by a newer Mirador (schema ${version}; this one knows ${SQLITE_MIGRATIONS.length}). Restore it with that version or a later one.`,
    );
  }
  return source;
}

/**
 * Replaces the database at `path` (open as `db`, empty) with the backup in
 * `file`. Closes `db`: the file under it is replaced.
 */
export async function restore(db: Database.Database, path: string, file: string): Promise<void> {
  const source = openBackup(file);
  try {
    const companies = db.prepare('SELECT count(*) FROM companies').pluck().get() as number;
    if (companies > 0) {
      throw new Error(
        `The database ${path} is not empty (it holds ${companies} ${companies === 1 ? 'company' : 'companies'}): restore only into a new, empty database. Point DATABASE_URL at a new file.`,
      );
    }
    db.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    await source.backup(path, { progress: () => ALL_PAGES });
  } finally {
    source.close();
  }
}
