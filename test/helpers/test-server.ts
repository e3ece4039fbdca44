/** Starts the real app on port 0 over a given store, with quiet logs. */
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { buildApp, type App, type AppDeps } from '../../src/http/app.js';
import { SandboxSnapshots } from '../../src/sandbox/sandbox-snapshots.js';
import type { Store } from '../../src/store/store.js';
import { generateCredential } from '../../src/domain/api-keys.js';

let sharedSandbox: SandboxSnapshots | undefined;

export interface TestServer {
  baseUrl: string;
  app: App;
  config: Config;
  close(): Promise<void>;
}

export async function startServer(
  store: Store,
  env: Record<string, string> = {},
  deps: Pick<AppDeps, 'onImportQueued' | 'onImportReceiving' | 'credentialsCache'> = {},
): Promise<TestServer> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  sharedSandbox ??= new SandboxSnapshots();
  const logger = pino({ level: config.logLevel }) as unknown as FastifyBaseLogger;
  const app = await buildApp({ config, store, logger, sandbox: sharedSandbox, ...deps });
  const address = await app.fastify.listen({ port: 0, host: '127.0.0.1' });
  return {
    baseUrl: address,
    app,
    config,
    close: async () => {
      await app.fastify.close();
      await app.close();
    },
  };
}

/** Creates a company and a read key for it; returns both. */
export async function companyWithKey(store: Store, slug: string) {
  const company = await store.createCompany(slug, `Company ${slug}`);
  const fresh = generateCredential('read');
  await store.createCredential({ companyId: company.id, scope: 'read', prefix: fresh.prefix, secretHash: fresh.secretHash, label: 'test' });
  return { company, key: fresh.token, prefix: fresh.prefix };
}
