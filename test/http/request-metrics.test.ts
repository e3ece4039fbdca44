import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { RequestMetrics } from '../../src/http/metrics.js';

const BOUNDS = [0.001, 0.01, 0.1];

test('request metrics print what prom-client would for the same observations', async () => {
  const ours = new RequestMetrics(BOUNDS);
  const registry = new Registry();
  const theirs = new Histogram({
    name: 'mirador_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: BOUNDS,
    registers: [registry],
  });
  const observations: [string, string, number, number][] = [
    ['/v1/clientes/:id_erp', 'GET', 304, 0.0004],
    ['/v1/clientes/:id_erp', 'GET', 304, 0.001], // on a bound: counted in that bucket (le)
    ['/v1/clientes/:id_erp', 'GET', 200, 0.05],
    ['/v1/clientes', 'HEAD', 200, 3],
    ['unmatched', 'GET', 404, 0.002],
  ];
  for (const [route, method, status, seconds] of observations) {
    ours.observe(route, method, status, seconds);
    theirs.observe({ route, method, status: String(status) }, seconds);
  }
  const histogramLines = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('mirador_http_request_duration_seconds'))
      .sort();
  assert.deepEqual(histogramLines(ours.text()), histogramLines(await registry.metrics()));
  const text = ours.text();
  assert.match(text, /^mirador_http_requests_total\{route="\/v1\/clientes\/:id_erp",method="GET",status="304"\} 2$/m);
  assert.match(text, /^mirador_http_requests_total\{route="\/v1\/clientes",method="HEAD",status="200"\} 1$/m);
  assert.match(text, /^# TYPE mirador_http_requests_total counter$/m);
  assert.match(text, /^# TYPE mirador_http_request_duration_seconds histogram$/m);
});

test('label values are escaped as the text format asks', () => {
  const m = new RequestMetrics(BOUNDS);
  m.observe('a"b\\c\nd', 'GET', 200, 0.1);
  assert.match(m.text(), /route="a\\"b\\\\c\\nd"/);
});
