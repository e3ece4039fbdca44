import type { Command } from 'commander';
import type { ImportProcess } from '../imports/import-process.js';
import type { DeliveryThread } from '../webhooks/delivery-thread.js';
import { withListenAddress } from '../config.js';
import { pendingMigrations } from '../store/migration-notes.js';
import { CliError, emit, withStore, type CliContext, type JsonOption } from './cli-context.js';

export function registerServeCommands(program: Command, ctx: CliContext) {
  program
    .command('serve')
    .description('run the HTTP server (API, sandbox, panel, docs) and the import worker')
    .option('--port <port>', 'HTTP port (default: PORT, else 3000); an unset PUBLIC_BASE_URL follows it')
    .option('--host <host>', 'listen address (default: HOST, else 127.0.0.1)')
    .option('--workers <n>', 'HTTP processes on this machine', '1')
    .action(async (opts: { port?: string; host?: string; workers: string }) => {
      const workers = Number(opts.workers);
      if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
        throw new CliError(`--workers must be an integer from 1 to 64; got "${opts.workers}".`);
      }
      let port: number | undefined;
      if (opts.port !== undefined) {
        port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port must be 0 to 65535; got "${opts.port}".`);
      }
      const config = withListenAddress(ctx.config, { port, host: opts.host });
      // Loaded here, not at the top: the HTTP stack (Fastify and its plugins) takes ~0.2 s to
      // load, which every other command (`mirador import` among them) would pay for nothing.
      const [{ serve }, { startImportProcess }, { createLogger }, { startDeliveryThread }] = await Promise.all([
        import('../http/server.js'),
        import('../imports/import-process.js'),
        import('../logger.js'),
        import('../webhooks/delivery-thread.js'),
      ]);
      const logger = createLogger(config.logLevel);
      let imports: ImportProcess | undefined;
      let deliveries: DeliveryThread | undefined;
      await serve(config, () => ctx.openStore({ servesRequests: true, readCacheBytes: config.chunkCacheBytes }), logger, {
        workers,
        startImportWorker: async (metrics) => {
          imports = startImportProcess(
            {
              databaseUrl: config.databaseUrl,
              snapshotRetentionMs: config.snapshotRetentionMs,
              tombstoneRetentionMs: config.tombstoneRetentionMs,
              eventRetentionMs: config.eventRetentionMs,
              auditRetentionMs: config.auditRetentionMs,
              uploadRetentionMs: config.uploadRetentionMs,
            },
            logger,
            (report) => {
              metrics.observeImport(report);
              // The import's event (and its deliveries) committed with its end: send them now.
              deliveries?.wake();
            },
          );
          return () => imports!.stop();
        },
        onImportQueued: () => imports?.wake(),
        onImportReceiving: (importId, declaredBytes) => imports?.prepare(importId, declaredBytes),
        startDeliveries: async (store) => {
          deliveries = await startDeliveryThread(config.databaseUrl, config.webhooks, logger, () => store.hasEnabledWebhookEndpoint());
          return () => deliveries!.stop();
        },
      });
    });

  program
    .command('migrate')
    .description('create or upgrade the storage schema, saying whether running instances may keep serving')
    .option('--plan', 'only say what would be applied, and whether old instances must be stopped first')
    .option('--json', 'print JSON')
    .action(async (opts: JsonOption & { plan?: boolean }) => {
      const store = await ctx.openStore({ migrate: false });
      try {
        const { current, latest } = await store.schemaVersion();
        const pending = pendingMigrations(current, latest);
        const online = pending.every((m) => m.online);
        if (!opts.plan) await store.migrate();
        const verb = opts.plan ? 'would apply' : 'applied';
        emit(
          ctx,
          opts,
          { ok: true, backend: store.backend, from: current, to: latest, applied: opts.plan ? [] : pending, pending: opts.plan ? pending : [], online },
          () => {
            if (pending.length === 0) return `The ${store.backend} schema is up to date (version ${latest}).`;
            const lines = [`The ${store.backend} schema ${verb} version ${current} → ${latest}:`];
            for (const m of pending) lines.push(`  ${m.version}: ${m.online ? 'online' : 'NEEDS A STOP'} — ${m.note}`);
            lines.push(
              current === 0
                ? 'A new database: start the instances.'
                : online
                  ? 'Instances of the previous release keep serving on it: restart them one at a time (docs/operations.md, "Upgrades").'
                  : `Stop every instance of the previous release ${opts.plan ? 'before migrating' : 'now if any still runs'}, then start the new release (docs/operations.md, "Upgrades").`,
            );
            return lines.join('\n');
          },
        );
      } finally {
        await store.close();
      }
    });
}
