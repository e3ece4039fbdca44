import type { Command } from 'commander';
import type { ImportProcess } from '../imports/import-process.js';
import { withListenAddress } from '../config.js';
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
      const [{ serve }, { startImportProcess }, { createLogger }] = await Promise.all([
        import('../http/server.js'),
        import('../imports/import-process.js'),
        import('../logger.js'),
      ]);
      const logger = createLogger(config.logLevel);
      let imports: ImportProcess | undefined;
      await serve(config, () => ctx.openStore({ servesRequests: true }), logger, {
        workers,
        startImportWorker: async (metrics) => {
          imports = startImportProcess(
            {
              databaseUrl: config.databaseUrl,
              snapshotRetentionMs: config.snapshotRetentionMs,
              tombstoneRetentionMs: config.tombstoneRetentionMs,
            },
            logger,
            (report) => metrics.observeImport(report),
          );
          return () => imports!.stop();
        },
        onImportQueued: () => imports?.wake(),
      });
    });

  program
    .command('migrate')
    .description('create or upgrade the storage schema')
    .option('--json', 'print JSON')
    .action(async (opts: JsonOption) => {
      await withStore(ctx, async (store) => {
        await store.migrate();
        emit(ctx, opts, { ok: true, backend: store.backend }, () => `The ${store.backend} schema is up to date.`);
      });
    });
}
