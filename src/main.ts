#!/usr/bin/env node
/**
 * Composition root: configuration → store → CLI (which may run the server).
 */
import { existsSync } from 'node:fs';
import { config as loadDotenv } from 'dotenv';
import { CommanderError } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { CliError } from './cli/cli-context.js';
import { buildProgram } from './cli/program.js';
import { openStore } from './store/open-store.js';

async function main(argv: string[]): Promise<number> {
  if (existsSync('.env')) loadDotenv({ path: '.env', quiet: true });
  const out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
  const err = (s: string) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`);
  let config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      err(`mirador: configuration error: ${e.message}`);
      return 2;
    }
    throw e;
  }
  const program = buildProgram({
    config,
    openStore: async (options) => {
      const store = await openStore(config.databaseUrl, options);
      if (options?.migrate !== false) await store.migrate();
      return store;
    },
    out,
    err,
  });
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 1;
    if (e instanceof CliError) {
      err(`mirador: ${e.message}`);
      return 1;
    }
    err(`mirador: ${(e as Error).message ?? String(e)}`);
    return 1;
  }
}

main(process.argv).then(
  (code) => {
    // `serve` keeps running: only exit for commands that finished.
    if (code !== 0) process.exit(code);
  },
  (e) => {
    process.stderr.write(`mirador: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
