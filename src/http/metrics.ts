/** Prometheus metrics (prom-client): HTTP requests and latency, imports. */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ImportReport } from '../imports/import-report.js';

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'mirador_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'mirador_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'mirador_' });
  }

  /** `route` is the route template (never a concrete id), or `unmatched`. */
  observeRequest(route: string, method: string, status: number, seconds: number) {
    const labels = { route, method, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  observeImport(report: Pick<ImportReport, 'kind' | 'status' | 'rows_read' | 'duration_ms'>) {
    const labels = { kind: report.kind, status: report.status };
    this.importDuration.observe(labels, report.duration_ms / 1000);
    this.importRows.inc(labels, report.rows_read);
  }
}
