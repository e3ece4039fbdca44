/**
 * One typed configuration, read once from the environment (and a `.env` file
 * when present). The rest of the code receives this object and never reads
 * `process.env` itself.
 */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /** PUBLIC_BASE_URL, or derived from `host` and `port` when it is unset (see `withListenAddress`). */
  publicBaseUrl: string;
  /** Whether PUBLIC_BASE_URL was set, so a `--port`/`--host` override leaves it alone. */
  publicBaseUrlSet: boolean;
  rateLimitPerMinute: number;
  sandboxRateLimitPerMinute: number;
  /** Trust X-Forwarded-For from a load balancer when telling client addresses apart. */
  trustProxy: boolean;
  maxUploadBytes: number;
  logLevel: string;
  sessionSecret: string | null;
  redisUrl: string | null;
  /** How long a superseded snapshot stays readable, in ms. */
  snapshotRetentionMs: number;
  /** How long removed records stay visible as tombstones (include_deleted), in ms. */
  tombstoneRetentionMs: number;
  /** How long a stored upload is kept after its import ended, in ms. */
  uploadRetentionMs: number;
  /** Memory budget of the in-process cache of item chunks, in bytes. */
  chunkCacheBytes: number;
  /** How long audit trail entries are kept, in ms. */
  auditRetentionMs: number;
}

export class ConfigError extends Error {}

const DEFAULTS = {
  // The contract's defaults (contract §4).
  PORT: '3000',
  HOST: '127.0.0.1',
  DATABASE_URL: 'sqlite:./data/mirador.db',
  // Unset: derived from HOST and PORT (publicBaseUrlFor), so `PORT=4101` alone is enough.
  PUBLIC_BASE_URL: '',
  RATE_LIMIT_PER_MINUTE: '600',
  // The sandbox is limited per client address, as generously as a key.
  SANDBOX_RATE_LIMIT_PER_MINUTE: '600',
  MAX_UPLOAD_BYTES: String(1024 * 1024 * 1024),
  LOG_LEVEL: 'info',
  // Superseded snapshots stay readable for 15 minutes, for clients paging through them.
  SNAPSHOT_RETENTION_SECONDS: '900',
  // Tombstones of removed records are kept 90 days (the contract's minimum).
  TOMBSTONE_RETENTION_DAYS: '90',
  // An upload is kept 3 days after its import ended: long enough to import it again after a
  // mapping change over a weekend, short enough that nightly uploads (each the size of its
  // CSV file) do not outweigh the data they feed (bench: npm run bench -- storage).
  UPLOAD_RETENTION_DAYS: '3',
  // 512 MiB of hot item chunks per process: room for a 100,000-customer snapshot (~380 MiB of
  // items), so a full download is served from memory once it has been read.
  CHUNK_CACHE_MB: '512',
  // The audit trail keeps a year of who did what (issue 24's minimum).
  AUDIT_RETENTION_DAYS: '365',
} as const;

/** Every variable read, for the README's configuration table (a test compares them). */
export const CONFIG_VARIABLES = [...Object.keys(DEFAULTS), 'SESSION_SECRET', 'REDIS_URL', 'TRUST_PROXY'] as const;

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: keyof typeof DEFAULTS, min: number, max: number): number {
  const raw = (env[name] ?? '').trim() || DEFAULTS[name];
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function strVar(env: Env, name: keyof typeof DEFAULTS): string {
  return (env[name] ?? '').trim() || DEFAULTS[name];
}

export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = strVar(env, 'DATABASE_URL');
  if (!/^sqlite:.+/.test(databaseUrl) && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must be sqlite:<path> or postgres://…, got "${databaseUrl}"`);
  }
  const level = strVar(env, 'LOG_LEVEL');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "${level}"`);
  }
  const port = intVar(env, 'PORT', 0, 65535);
  const host = strVar(env, 'HOST');
  const publicBaseUrl = strVar(env, 'PUBLIC_BASE_URL').replace(/\/+$/, '');
  return {
    port,
    host,
    databaseUrl,
    publicBaseUrl: publicBaseUrl || publicBaseUrlFor(host, port),
    publicBaseUrlSet: publicBaseUrl !== '',
    rateLimitPerMinute: intVar(env, 'RATE_LIMIT_PER_MINUTE', 1, 1_000_000_000),
    sandboxRateLimitPerMinute: intVar(env, 'SANDBOX_RATE_LIMIT_PER_MINUTE', 1, 1_000_000_000),
    trustProxy: /^(1|true|yes)$/i.test((env.TRUST_PROXY ?? '').trim()),
    maxUploadBytes: intVar(env, 'MAX_UPLOAD_BYTES', 1, Number.MAX_SAFE_INTEGER),
    logLevel: level,
    sessionSecret: env.SESSION_SECRET?.trim() || null,
    redisUrl: env.REDIS_URL?.trim() || null,
    snapshotRetentionMs: intVar(env, 'SNAPSHOT_RETENTION_SECONDS', 0, 365 * 86400) * 1000,
    tombstoneRetentionMs: intVar(env, 'TOMBSTONE_RETENTION_DAYS', 1, 100 * 365) * 86_400_000,
    uploadRetentionMs: intVar(env, 'UPLOAD_RETENTION_DAYS', 0, 100 * 365) * 86_400_000,
    chunkCacheBytes: intVar(env, 'CHUNK_CACHE_MB', 0, 1 << 20) * 1024 * 1024,
    auditRetentionMs: intVar(env, 'AUDIT_RETENTION_DAYS', 1, 100 * 365) * 86_400_000,
  };
}

/**
 * The address clients are told when PUBLIC_BASE_URL is unset (contract §4:
 * `http://<HOST, or localhost>:<PORT>`). A wildcard or loopback listen address
 * is no address to give anyone, so it becomes `localhost`; any other host is
 * used as written (an IPv6 literal in brackets).
 */
export function publicBaseUrlFor(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const local = bare === '' || bare === '0.0.0.0' || bare === '::' || bare === '::1' || bare === 'localhost' || /^127\./.test(bare);
  const name = local ? 'localhost' : bare.includes(':') ? `[${bare}]` : bare;
  return `http://${name}:${port}`;
}

/** The configuration with `mirador serve --port/--host` applied; a derived PUBLIC_BASE_URL follows them. */
export function withListenAddress(config: Config, listen: { port?: number; host?: string }): Config {
  const port = listen.port ?? config.port;
  const host = listen.host ?? config.host;
  return { ...config, port, host, publicBaseUrl: config.publicBaseUrlSet ? config.publicBaseUrl : publicBaseUrlFor(host, port) };
}
