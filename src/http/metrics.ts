/** Prometheus metrics (prom-client): HTTP requests and latency, imports. */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ImportReport } from '../imports/import-report.js';
import type { ChunkCacheStats } from './api/cached-chunk-source.js';
import type { CacheUse } from './api/read-cache-budget.js';

export class Metrics {
  readonly registry = new Registry();
  /** HTTP requests, kept apart from prom-client: see RequestMetrics. */
  private readonly http = new RequestMetrics([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);
  private readonly importDuration = new Histogram({
    name: 'mirador_import_duration_seconds',
    help: 'Time to apply an import, by kind and outcome.',
    labelNames: ['kind', 'status'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
    registers: [this.registry],
  });
  private readonly importRows = new Counter({
    name: 'mirador_import_rows_total',
    help: 'CSV rows read by imports, by kind and outcome.',
    labelNames: ['kind', 'status'] as const,
    registers: [this.registry],
  });

  /** The API's chunk cache, once the app has made it (see `watchChunkCache`). */
  private chunkCache: (() => ChunkCacheStats) | null = null;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'mirador_' });
  }

  /** The read path's caches, each against its share of CHUNK_CACHE_MB (see `watchReadCaches`). */
  private readCaches: (() => CacheUse[]) | null = null;

  /** Reports what each cache of the read path holds, and its share of CHUNK_CACHE_MB, at each scrape. */
  watchReadCaches(uses: () => CacheUse[]) {
    this.readCaches = uses;
  }

  /** Reports the chunk cache's hits, misses and size at each scrape. */
  watchChunkCache(stats: () => ChunkCacheStats) {
    this.chunkCache = stats;
  }

  /** `route` is the route template (never a concrete id), or `unmatched`. */
  observeRequest(route: string, method: string, status: number, seconds: number) {
    this.http.observe(route, method, status, seconds);
  }

  readonly contentType = this.registry.contentType;

  /** Everything, in the Prometheus text format. */
  async text(): Promise<string> {
    return (await this.registry.metrics()) + this.http.text() + chunkCacheText(this.chunkCache?.()) + readCachesText(this.readCaches?.());
  }

  observeImport(report: Pick<ImportReport, 'kind' | 'status' | 'rows_read' | 'duration_ms'>) {
    const labels = { kind: report.kind, status: report.status };
    this.importDuration.observe(labels, report.duration_ms / 1000);
    this.importRows.inc(labels, report.rows_read);
  }
}

interface Series {
  labels: string;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last is +Inf. */
  buckets: Float64Array;
}

/**
 * The request counter and latency histogram, in the names and labels
 * prom-client would give them. Kept by hand because prom-client hashes the
 * label object on every call (~3 µs a request, 4% of a 304); here a request
 * costs one Map lookup, and the text is built when Prometheus scrapes.
 */
export class RequestMetrics {
  private readonly series = new Map<string, Series>();

  constructor(private readonly bounds: readonly number[]) {}

  observe(route: string, method: string, status: number, seconds: number) {
    const key = `${route} ${method} ${status}`;
    let s = this.series.get(key);
    if (!s) {
      s = {
        labels: `route="${escapeLabel(route)}",method="${escapeLabel(method)}",status="${status}"`,
        count: 0,
        sum: 0,
        buckets: new Float64Array(this.bounds.length + 1),
      };
      this.series.set(key, s);
    }
    s.count++;
    s.sum += seconds;
    let b = 0;
    while (b < this.bounds.length && seconds > this.bounds[b]!) b++;
    s.buckets[b]!++;
  }

  text(): string {
    const counter = ['# HELP mirador_http_requests_total HTTP requests answered, by route template, method and status.', '# TYPE mirador_http_requests_total counter'];
    const histogram = [
      '# HELP mirador_http_request_duration_seconds Time to answer HTTP requests, by route template, method and status.',
      '# TYPE mirador_http_request_duration_seconds histogram',
    ];
    for (const s of this.series.values()) {
      counter.push(`mirador_http_requests_total{${s.labels}} ${s.count}`);
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        histogram.push(`mirador_http_request_duration_seconds_bucket{le="${le}",${s.labels}} ${cumulative}`);
      });
      histogram.push(`mirador_http_request_duration_seconds_bucket{le="+Inf",${s.labels}} ${s.count}`);
      histogram.push(`mirador_http_request_duration_seconds_sum{${s.labels}} ${s.sum}`);
      histogram.push(`mirador_http_request_duration_seconds_count{${s.labels}} ${s.count}`);
    }
    return `\n${counter.join('\n')}\n\n${histogram.join('\n')}\n`;
  }
}

/** The chunk cache's series (CHUNK_CACHE_MB); nothing before the API has one. */
function chunkCacheText(s: ChunkCacheStats | undefined): string {
  if (!s) return '';
  return [
    '',
    '# HELP mirador_chunk_cache_hits_total Chunks, gzip segments, thin chunks and filter indexes found in the chunk cache.',
    '# TYPE mirador_chunk_cache_hits_total counter',
    `mirador_chunk_cache_hits_total ${s.hits}`,
    '# HELP mirador_chunk_cache_misses_total Chunks, gzip segments, thin chunks and filter indexes read from the store.',
    '# TYPE mirador_chunk_cache_misses_total counter',
    `mirador_chunk_cache_misses_total ${s.misses}`,
    '# HELP mirador_snapshot_meta_cache_hits_total Snapshot metas found in memory.',
    '# TYPE mirador_snapshot_meta_cache_hits_total counter',
    `mirador_snapshot_meta_cache_hits_total ${s.metaHits}`,
    '# HELP mirador_snapshot_meta_cache_misses_total Snapshot metas read from the store.',
    '# TYPE mirador_snapshot_meta_cache_misses_total counter',
    `mirador_snapshot_meta_cache_misses_total ${s.metaMisses}`,
    '# HELP mirador_chunk_cache_bytes Bytes held by the chunk cache.',
    '# TYPE mirador_chunk_cache_bytes gauge',
    `mirador_chunk_cache_bytes ${s.bytes}`,
    '# HELP mirador_chunk_cache_budget_bytes The chunk cache\'s share of CHUNK_CACHE_MB.',
    '# TYPE mirador_chunk_cache_budget_bytes gauge',
    `mirador_chunk_cache_budget_bytes ${s.budgetBytes}`,
    '',
  ].join('\n');
}

/** Each read cache's bytes and share (CHUNK_CACHE_MB split by read-cache-budget.ts); nothing before the API has them. */
function readCachesText(uses: CacheUse[] | undefined): string {
  if (!uses) return '';
  return [
    '',
    '# HELP mirador_read_cache_bytes Bytes held by each cache of the read path.',
    '# TYPE mirador_read_cache_bytes gauge',
    ...uses.map((u) => `mirador_read_cache_bytes{cache="${u.cache}"} ${u.bytes}`),
    '# HELP mirador_read_cache_budget_bytes Each read cache\'s share of CHUNK_CACHE_MB.',
    '# TYPE mirador_read_cache_budget_bytes gauge',
    ...uses.map((u) => `mirador_read_cache_budget_bytes{cache="${u.cache}"} ${u.budgetBytes}`),
    '',
  ].join('\n');
}

/** The text format's escapes for a label value. */
const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
