/**
 * The SQLite schema, as an ordered list of migrations. `PRAGMA user_version`
 * records how many have been applied. Times are epoch milliseconds.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE companies (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE credentials (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies(id),
    scope TEXT NOT NULL CHECK (scope IN ('read', 'upload')),
    prefix TEXT NOT NULL UNIQUE,
    secret_hash BLOB NOT NULL,
    label TEXT,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
  );
  CREATE INDEX credentials_by_company ON credentials(company_id, scope, id);
  CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies(id),
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE mappings (
    company_id INTEGER NOT NULL REFERENCES companies(id),
    kind TEXT NOT NULL,
    mapping TEXT NOT NULL,
    PRIMARY KEY (company_id, kind)
  );
  CREATE TABLE imports (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies(id),
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    filename TEXT NOT NULL,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    rows_read INTEGER NOT NULL DEFAULT 0,
    bytes_read INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    worker TEXT,
    heartbeat_at INTEGER,
    report TEXT,
    error TEXT,
    snapshot_id INTEGER
  );
  CREATE INDEX imports_by_status ON imports(status, id);
  CREATE INDEX imports_by_company ON imports(company_id, kind, id);
  CREATE TABLE import_blobs (
    import_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (import_id, seq)
  );
  CREATE TABLE snapshots (
    id INTEGER PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    company_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    import_id INTEGER,
    state TEXT NOT NULL CHECK (state IN ('staging', 'staged', 'live', 'superseded')),
    created_at INTEGER NOT NULL,
    superseded_at INTEGER,
    record_count INTEGER NOT NULL DEFAULT 0,
    chunk_starts BLOB,
    timeline TEXT,
    columns TEXT
  );
  CREATE INDEX snapshots_by_state ON snapshots(state, superseded_at);
  CREATE TABLE live_snapshots (
    company_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    snapshot_id INTEGER NOT NULL,
    PRIMARY KEY (company_id, kind)
  ) WITHOUT ROWID;
  CREATE TABLE records (
    snapshot_id INTEGER NOT NULL,
    id_erp TEXT NOT NULL,
    pos INTEGER NOT NULL,
    actualizado_at INTEGER NOT NULL,
    hash BLOB NOT NULL,
    PRIMARY KEY (snapshot_id, id_erp)
  ) WITHOUT ROWID;
  CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    snapshot_id INTEGER NOT NULL,
    chunk_no INTEGER NOT NULL,
    first_pos INTEGER NOT NULL,
    offsets BLOB NOT NULL,
    bytes BLOB NOT NULL,
    UNIQUE (snapshot_id, chunk_no)
  );
  `,
  // Incremental sync: the import time of each snapshot, when it went live, and
  // the records removed by recent imports (issue 9).
  `
  ALTER TABLE snapshots ADD COLUMN import_at INTEGER;
  ALTER TABLE snapshots ADD COLUMN published_at INTEGER;
  CREATE TABLE snapshot_tombstones (
    snapshot_id INTEGER NOT NULL,
    id_erp TEXT NOT NULL,
    deleted_at INTEGER NOT NULL,
    PRIMARY KEY (snapshot_id, id_erp)
  ) WITHOUT ROWID;
  `,
  // Gzip segments (issue 4): each chunk compressed once, after its snapshot is
  // published, by a serving process's import worker, which claims the snapshot's
  // pass first. A table of its own, not a column of chunks: filling a column
  // later would rewrite every 64 KiB chunk row.
  `
  ALTER TABLE snapshots ADD COLUMN segments_claimed_at INTEGER;
  CREATE TABLE chunk_segments (
    id INTEGER PRIMARY KEY,
    snapshot_id INTEGER NOT NULL,
    chunk_no INTEGER NOT NULL,
    raw_length INTEGER NOT NULL,
    context_length INTEGER NOT NULL,
    crc32 INTEGER NOT NULL,
    deflate BLOB NOT NULL,
    UNIQUE (snapshot_id, chunk_no)
  );
  `,
  // The hash of each snapshot's records: MD5 before this version, SHA-256 for
  // new chains of snapshots (item-renderer.ts, HashAlgorithm).
  `
  ALTER TABLE snapshots ADD COLUMN hash_algorithm TEXT NOT NULL DEFAULT 'md5';
  `,
  // Segment passes are finished explicitly, so that a claim whose process died can expire
  // (SEGMENT_CLAIM_EXPIRES_MS). Passes claimed before are taken as finished: most were.
  `
  ALTER TABLE snapshots ADD COLUMN segments_done_at INTEGER;
  UPDATE snapshots SET segments_done_at = segments_claimed_at WHERE segments_claimed_at IS NOT NULL;
  `,
  // Issue 24: the audit trail (newest first per company, by id), failed sign-ins shared by
  // every process over the file, and keys that expire.
  `
  CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id INTEGER NOT NULL REFERENCES companies(id),
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    ip TEXT,
    action TEXT NOT NULL,
    details TEXT NOT NULL
  );
  CREATE INDEX audit_log_by_company ON audit_log(company_id, id);
  CREATE INDEX audit_log_by_company_action ON audit_log(company_id, action, id);
  CREATE INDEX audit_log_by_time ON audit_log(at);
  CREATE TABLE sign_in_failures (
    email TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    first_at INTEGER NOT NULL,
    locked_until INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  ALTER TABLE credentials ADD COLUMN expires_at INTEGER;
  `,
  // Stored uploads are removed UPLOAD_RETENTION_DAYS after their import ends; the import's row
  // stays in the history and says when its file went.
  `
  ALTER TABLE imports ADD COLUMN file_removed_at INTEGER;
  `,
  // Filters, search and thin pages (issue 17): each snapshot's items without `data`, in
  // chunks holding the same positions as its item chunks, and its filter indexes, one blob
  // each (store/snapshot-index.ts). Tables of their own, so that a thin page never reads
  // past the item bytes of a chunk row.
  `
  CREATE TABLE thin_chunks (
    snapshot_id INTEGER NOT NULL,
    chunk_no INTEGER NOT NULL,
    first_pos INTEGER NOT NULL,
    bounds BLOB NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (snapshot_id, chunk_no)
  );
  CREATE TABLE snapshot_indexes (
    snapshot_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (snapshot_id, name)
  );
  ALTER TABLE snapshots ADD COLUMN indexed INTEGER NOT NULL DEFAULT 0;
  `,
  // Snapshot ids are never reused (issue 24): without AUTOINCREMENT SQLite gives the
  // highest id again once that snapshot is discarded, and a cache keyed by snapshot id could
  // mix two snapshots. SQLite cannot ALTER a key to AUTOINCREMENT, so the table is rebuilt
  // with every column and index (no foreign key refers to it or from it), and the sequence
  // starts past any id an import recorded, so a snapshot discarded before this upgrade is
  // not reused either.
  `
  CREATE TABLE snapshots_autoincrement (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    public_id TEXT NOT NULL UNIQUE,
    company_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    import_id INTEGER,
    state TEXT NOT NULL CHECK (state IN ('staging', 'staged', 'live', 'superseded')),
    created_at INTEGER NOT NULL,
    superseded_at INTEGER,
    record_count INTEGER NOT NULL DEFAULT 0,
    chunk_starts BLOB,
    timeline TEXT,
    columns TEXT,
    import_at INTEGER,
    published_at INTEGER,
    segments_claimed_at INTEGER,
    hash_algorithm TEXT NOT NULL DEFAULT 'md5',
    segments_done_at INTEGER,
    indexed INTEGER NOT NULL DEFAULT 0
  );
  INSERT INTO snapshots_autoincrement (id, public_id, company_id, kind, import_id, state, created_at, superseded_at,
      record_count, chunk_starts, timeline, columns, import_at, published_at, segments_claimed_at, hash_algorithm,
      segments_done_at, indexed)
    SELECT id, public_id, company_id, kind, import_id, state, created_at, superseded_at,
      record_count, chunk_starts, timeline, columns, import_at, published_at, segments_claimed_at, hash_algorithm,
      segments_done_at, indexed
    FROM snapshots;
  DROP TABLE snapshots;
  ALTER TABLE snapshots_autoincrement RENAME TO snapshots;
  CREATE INDEX snapshots_by_state ON snapshots(state, superseded_at);
  DELETE FROM sqlite_sequence WHERE name = 'snapshots';
  INSERT INTO sqlite_sequence (name, seq)
    SELECT 'snapshots', max(coalesce((SELECT max(id) FROM snapshots), 0), coalesce((SELECT max(snapshot_id) FROM imports), 0));
  `,
  // Events and webhooks (issue 19, contract §7). An event is inserted in the transaction that
  // ends its import, with one delivery per endpoint that wants it (an outbox). A delivery keeps
  // a copy of the event's body: a test event has no row in the feed, and retention of the feed
  // does not cut a retry short.
  `
  CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    company_id INTEGER NOT NULL REFERENCES companies(id),
    type TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX events_by_company ON events(company_id, created_at, id);
  CREATE INDEX events_by_age ON events(created_at);
  CREATE TABLE webhook_endpoints (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies(id),
    url TEXT NOT NULL,
    event_types TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    disabled_at INTEGER,
    disabled_reason TEXT,
    last_success_at INTEGER
  );
  CREATE INDEX webhook_endpoints_by_company ON webhook_endpoints(company_id, id);
  CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY,
    endpoint_id INTEGER NOT NULL,
    company_id INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    window_started_at INTEGER NOT NULL,
    next_attempt_at INTEGER,
    claimed_by TEXT,
    claimed_until INTEGER,
    finished_at INTEGER,
    last_status_code INTEGER,
    last_error TEXT
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
  CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries(endpoint_id, id);
  CREATE TABLE webhook_attempts (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL,
    endpoint_id INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    ok INTEGER NOT NULL,
    error TEXT,
    response_body TEXT
  );
  CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts(endpoint_id, id);
  CREATE INDEX webhook_attempts_by_age ON webhook_attempts(at);
  `,
  // Snapshots share unchanged chunks (issues 22 and 23): a snapshot's chunk k is whichever
  // stored chunk its map row names (src_*), laid out by this snapshot or an earlier one of the
  // chain, and its gzip segment is the one its map names (seg_*), which depends on the chunk
  // before it too (chunk-segments.ts). A stored chunk, thin chunk or segment stays while a map
  // row names it. base_snapshot_id: the live snapshot a staging one reuses chunks from, kept
  // from the sweep while that one is written.
  `
  CREATE TABLE chunk_map (
    snapshot_id INTEGER NOT NULL,
    chunk_no INTEGER NOT NULL,
    first_pos INTEGER NOT NULL,
    src_snapshot INTEGER NOT NULL,
    src_chunk INTEGER NOT NULL,
    seg_snapshot INTEGER NOT NULL,
    seg_chunk INTEGER NOT NULL,
    PRIMARY KEY (snapshot_id, chunk_no)
  ) WITHOUT ROWID;
  INSERT INTO chunk_map (snapshot_id, chunk_no, first_pos, src_snapshot, src_chunk, seg_snapshot, seg_chunk)
    SELECT snapshot_id, chunk_no, first_pos, snapshot_id, chunk_no, snapshot_id, chunk_no FROM chunks;
  CREATE INDEX chunk_map_by_source ON chunk_map (src_snapshot, src_chunk);
  CREATE INDEX chunk_map_by_segment ON chunk_map (seg_snapshot, seg_chunk);
  ALTER TABLE snapshots ADD COLUMN base_snapshot_id INTEGER;
  `,
  // Stored uploads are packed once their import has ended (issue 22, store/upload-packing.ts):
  // recompressed with brotli into a table of their own, so that a release that knows only
  // import_blobs finds no blobs there rather than reading packed bytes as CSV.
  // imports.file_encoding: 'br' once packed; NULL while the upload is plain in import_blobs.
  `
  ALTER TABLE imports ADD COLUMN file_encoding TEXT;
  CREATE TABLE import_packed_blobs (
    import_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (import_id, seq)
  );
  `,
  // PostgreSQL's migration 13 sets how thin chunks, offsets and indexes are stored; SQLite
  // never compresses. Kept so that both lists have the same versions (migration-notes.ts).
  `SELECT 1;`,
  // A filter index is stored in parts of at most 1 MiB (snapshot-index.ts, IndexPart): an
  // import builds a large one in runs on disk and never holds it whole (issue 4's memory).
  // SQLite cannot change a primary key, so the table is rebuilt; rows written before are
  // part 0, the whole index.
  `
  CREATE TABLE snapshot_indexes_parts (
    snapshot_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    part INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (snapshot_id, name, part)
  );
  INSERT INTO snapshot_indexes_parts (snapshot_id, name, part, bytes) SELECT snapshot_id, name, 0, bytes FROM snapshot_indexes;
  DROP TABLE snapshot_indexes;
  ALTER TABLE snapshot_indexes_parts RENAME TO snapshot_indexes;
  `,
];
