/** The `mirador` command line (contract §3): one file per command group. */
import { Command, CommanderError } from 'commander';
import { registerAuditCommands } from './audit-commands.js';
import type { CliContext } from './cli-context.js';
import { registerBackupCommands } from './backup-commands.js';
import { registerCompanyCommands } from './company-commands.js';
import { registerImportCommands } from './import-commands.js';
import { registerKeyCommands } from './key-commands.js';
import { registerMappingCommands } from './mapping-commands.js';
import { registerPullCommand } from './pull-command.js';
import { registerServeCommands } from './serve-commands.js';
import { registerUserCommands } from './user-commands.js';
import { registerWebhookCommands } from './webhook-commands.js';

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('mirador')
    .description("A read-only REST/JSON API over a company's ERP exports.")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.out(s.trimEnd()), writeErr: (s) => ctx.err(s.trimEnd()) });
  registerServeCommands(program, ctx);
  registerCompanyCommands(program, ctx);
  registerUserCommands(program, ctx);
  registerKeyCommands(program, ctx);
  registerImportCommands(program, ctx);
  registerMappingCommands(program, ctx);
  registerPullCommand(program, ctx);
  registerWebhookCommands(program, ctx);
  registerAuditCommands(program, ctx);
  registerBackupCommands(program, ctx);
  // Subcommands inherit the error handling and output of the program.
  for (const cmd of allCommands(program)) {
    cmd.exitOverride().configureOutput({ writeOut: (s) => ctx.out(s.trimEnd()), writeErr: (s) => ctx.err(s.trimEnd()) });
  }
  return program;
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

export { CommanderError };
