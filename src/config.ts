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
  /** How long events stay in /v1/eventos, in ms (and finished deliveries in the panel's log). */
  eventRetentionMs: number;
  webhooks: WebhookConfig;
}

/** How webhooks are delivered (contract §7; docs/integrating.md). */
export interface WebhookConfig {
  /** A delivery attempt that has not answered in full by then failed. */
  timeoutMs: number;
  /** The delay before each retry: the nth retry waits `retryDelaysMs[n-1]`, the last repeating. */
  retryDelaysMs: number[];
  /** Retries stop this long after the first attempt (or a "send again"); the delivery then failed. */
  retryWindowMs: number;
  /** Allow http:// URLs (tests, private networks). */
  allowHttp: boolean;
  /** Allow loopback, private and link-local destinations (tests, private networks). */
  allowPrivate: boolean;
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
  // Events are kept 30 days (the contract's minimum).
  EVENT_RETENTION_DAYS: '30',
  // The contract's 10 s: a receiver that has not answered by then failed; tests shorten it.
  WEBHOOK_TIMEOUT_MS: '10000',
  // Retries go on for 3 days (contract §7)…
  WEBHOOK_RETRY_HOURS: '72',
  // …waiting longer each time, the last delay repeating: about 12 attempts in all.
  WEBHOOK_RETRY_SCHEDULE: '1m,5m,30m,2h,5h,10h',
} as const;

/** Every variable read, for the README's configuration table (a test compares them). */
export const CONFIG_VARIABLES = [
  ...Object.keys(DEFAULTS),
  'SESSION_SECRET',
  'REDIS_URL',
  'TRUST_PROXY',
  'WEBHOOK_ALLOW_HTTP',
  'WEBHOOK_ALLOW_PRIVATE',
] as const;

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: keyof typeof DEFAULTS, min: number, max: number): number {
  const raw = (env[name] ?? '').trim() || DEFAULTS[name];
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `1m,5m,30m,2h`: durations with a unit (ms, s, m, h), each from 0 to 7 days. */
export function parseSchedule(name: string, raw: string): number[] {
  const parts = raw.split(',').map((p) => p.trim());
  const delays = parts.map((p) => {
    const m = /^(\d{1,9})(ms|s|m|h)$/.exec(p);
    const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : NaN;
    if (!(ms >= 0 && ms <= 7 * 86_400_000)) {
      throw new ConfigError(`${name} must be a comma-separated list of durations such as 1m,5m,30m,2h (units ms, s, m, h); got "${raw}"`);
    }
    return ms;
  });
  return delays;
}

function flagVar(env: Env, name: string): boolean {
  return /^(1|true|yes)$/i.test((env[name] ?? '').trim());
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
    eventRetentionMs: intVar(env, 'EVENT_RETENTION_DAYS', 1, 100 * 365) * 86_400_000,
    webhooks: {
      timeoutMs: intVar(env, 'WEBHOOK_TIMEOUT_MS', 1, 600_000),
      retryDelaysMs: parseSchedule('WEBHOOK_RETRY_SCHEDULE', strVar(env, 'WEBHOOK_RETRY_SCHEDULE')),
      retryWindowMs: intVar(env, 'WEBHOOK_RETRY_HOURS', 0, 24 * 365) * 3_600_000,
      allowHttp: flagVar(env, 'WEBHOOK_ALLOW_HTTP'),
      allowPrivate: flagVar(env, 'WEBHOOK_ALLOW_PRIVATE'),
    },
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
