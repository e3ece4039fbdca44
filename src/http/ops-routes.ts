/** Operations: liveness, readiness and metrics, for load balancers and Prometheus. */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/store.js';
import { ApiError } from './errors.js';
import type { Metrics } from './metrics.js';

export function registerOpsRoutes(app: FastifyInstance, store: Store, metrics: Metrics) {
  // The process is up and answering: nothing else is checked, so a database outage never restarts it.
  app.get('/healthz', async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    return reply.type('application/json; charset=utf-8').send('{"ok":true}');
  });

  // Ready to serve: the store answers. A load balancer takes the instance out while it does not.
  app.get('/readyz', async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    try {
      await store.ping();
    } catch {
      throw new ApiError('unavailable', 'The store does not answer.', { 'Retry-After': '5' });
    }
    return reply.type('application/json; charset=utf-8').send('{"ok":true}');
  });

  app.get('/metrics', async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    return reply.type(metrics.contentType).send(await metrics.text());
  });
}
