import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';

/**
 * JSON logs on stdout. Credentials never reach them: requests are logged by
 * key prefix, and these paths are redacted in case an object carrying them is
 * ever logged.
 */
export function createLogger(level: string): FastifyBaseLogger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]', 'token', 'key', 'secret', '*.secret'],
      censor: '[redacted]',
    },
  }) as unknown as FastifyBaseLogger;
}
