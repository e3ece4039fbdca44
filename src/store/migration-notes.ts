/**
 * Which migrations instances of the previous release can run alongside. An
 * upgrade without downtime is: `mirador migrate` with the new release while
 * the old instances serve, then restart them one at a time. That works when
 * every pending migration is `online`: the old code keeps reading and writing
 * correctly on the new schema. A migration that is not (it changes what old
 * code reads, or old writers would leave rows the new code misreads) needs the
 * old instances stopped first. Versions count from 1, the same on both stores
 * (their migration arrays run in parallel). A migration with no note here is
 * taken to need a stop: classify each one you append.
 */
export interface MigrationNote {
  /** Old instances keep serving correctly after it is applied. */
  online: boolean;
  /** What it changes, and why it is or is not safe for old instances. */
  note: string;
}

export const MIGRATION_NOTES: Readonly<Record<number, MigrationNote>> = {
  1: { online: false, note: 'creates the schema (there is no older release to keep serving)' },
  2: {
    online: false,
    note: 'adds import and publication times and tombstones: an old worker would publish snapshots without them, and clients asking include_deleted would miss its deletions',
  },
  3: { online: true, note: 'adds gzip segments; old instances neither read nor write them, and serve as before' },
  4: { online: true, note: "adds snapshots.hash_algorithm, defaulting to 'md5', which is what old instances hash with" },
  5: {
    online: true,
    note: 'adds snapshots.segments_done_at; a segment pass an old instance claims is expired and made again by a new one',
  },
  6: {
    online: true,
    note: 'adds the audit trail, shared sign-in failures and credentials.expires_at; old instances write no audit entries and do not refuse expired keys until restarted (a rolling restart takes minutes), and serve as before',
  },
  8: {
    online: true,
    note: 'adds thin_chunks, snapshot_indexes and snapshots.indexed (0 by default); snapshots an old instance publishes are indexed in memory on their first filtered read, and old instances ignore the new tables',
  },
  9: {
    online: true,
    note: 'SQLite: rebuilds the snapshots table with the same columns so that ids are never reused (AUTOINCREMENT), in one transaction; SQLite recompiles the running instances\' statements on the schema change, and new rows get AUTOINCREMENT ids whichever release writes them. PostgreSQL: nothing',
  },
  7: {
    online: true,
    note: 'adds imports.file_removed_at; old instances ignore it (one asked to import a removed file again queues an empty upload, which fails saying so)',
  },
  10: {
    online: true,
    note: 'adds events, webhook_endpoints, webhook_deliveries and webhook_attempts; old instances neither read nor write them and serve as before, but an import an old worker ends during the rolling restart records no event and sends no webhook (its snapshot is still in the change feeds)',
  },
  11: {
    online: false,
    note: 'adds chunk_map: snapshots written after it share unchanged chunks with the snapshot before them, and old instances, which read a snapshot\'s chunks by its own id, would find them missing; stop the old instances, migrate, then start the new ones',
  },
  12: {
    online: true,
    note: 'adds imports.file_encoding and import_packed_blobs, where new instances recompress the uploads of ended imports; old instances read only import_blobs and serve as before, but during the rolling restart one asked to import a packed file again (or whose worker takes such a re-import) finds it empty and fails saying so, and packed blobs an old sweep leaves behind are removed by the next new one',
  },
  13: {
    online: true,
    note: 'PostgreSQL: thin chunks written from then on are compressed with lz4 instead of pglz, and chunk offsets, thin chunk bounds and filter indexes are stored uncompressed; rows written before keep their form, and every release reads both. SQLite: nothing',
  },
  14: {
    online: false,
    note: "stores each filter index in parts of at most 1 MiB (snapshot_indexes.part; SQLite rebuilds the table). Rows written before are part 0 and read the same. An old instance reads only part 0: for a snapshot a new worker imports whose index takes several parts (customers' id_erp index passes 1 MiB at ~40,000 records) its decoder refuses the short index and that filter answers 500, and an old worker would write rows the new code reads as before; stop the old instances so that no filtered list fails during the upgrade",
  },
};

export interface PendingMigration extends MigrationNote {
  version: number;
}

/** The migrations from `current` (exclusive) to `latest`, with their notes. */
export function pendingMigrations(current: number, latest: number): PendingMigration[] {
  const pending: PendingMigration[] = [];
  for (let v = current + 1; v <= latest; v++) {
    pending.push({ version: v, ...(MIGRATION_NOTES[v] ?? { online: false, note: 'not classified: stop the old instances to be safe' }) });
  }
  return pending;
}
