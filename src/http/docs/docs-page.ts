/**
 * `GET /docs`: the API reference, rendered by Swagger UI from the same
 * document as /openapi.json. @fastify/swagger-ui serves Swagger UI's files
 * from node_modules (nothing from a CDN), and its page has no inline script
 * (the initializer is a file of its own), so it runs under a CSP that allows
 * scripts from this origin only.
 */
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { serversFor } from './openapi-document.js';

/**
 * The page's policy: everything from this origin; `data:` images (Swagger
 * UI's icons); inline styles, which Swagger UI sets on elements; and requests
 * to PUBLIC_BASE_URL too, the other server "try it" may be pointed at.
 */
export function docsCsp(publicBaseUrl: string): string {
  let extra = '';
  try {
    extra = ` ${new URL(publicBaseUrl).origin}`;
  } catch {
    // A PUBLIC_BASE_URL that is not a URL: "try it" still works against this origin.
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${extra}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}

export async function registerDocsPage(app: FastifyInstance, publicBaseUrl: string): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: docsCsp(publicBaseUrl),
    theme: { title: 'Mirador API reference' },
    uiConfig: {
      docExpansion: 'list',
      deepLinking: true,
      displayRequestDuration: true,
      // Two levels: the envelope and its items, not the 150 columns of `data` at once.
      defaultModelExpandDepth: 2,
      defaultModelsExpandDepth: 0,
      // Preflights are for browsers to send, not people.
      supportedSubmitMethods: ['get'],
    },
    // The page reads /docs/json: the same document, with `servers` for this request.
    transformSpecificationClone: false,
    transformSpecification: (spec, request) => ({ ...spec, servers: serversFor(request, publicBaseUrl) }),
  });
}
