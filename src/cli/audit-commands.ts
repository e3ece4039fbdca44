import type { Command } from 'commander';
import { AUDIT_ACTIONS, AUDIT_GROUPS, auditActionsFor, describeDetails, type AuditEntry } from '../domain/audit.js';
import { CliError, emit, iso, requireCompany, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

export function auditJson(e: AuditEntry) {
  return { id: e.id, at: iso(e.at), actor: e.actor, ip: e.ip, action: e.action, details: e.details };
}

export function registerAuditCommands(program: Command, ctx: CliContext) {
  program
    .command('audit')
    .description("a company's audit trail, newest first: who did what, when")
    .argument('<slug>', 'company')
    .option('--action <action>', `only this action or group (${AUDIT_GROUPS.join(', ')}; or e.g. key.revoke)`)
    .option('--limit <n>', 'how many, 1 to 1000', '50')
    .option('--before <id>', 'only entries older than this id (the last id of the previous page)')
    .option('--json', 'print JSON')
    .action(async (slug: string, opts: JsonOption & { action?: string; limit: string; before?: string }) => {
      const actions = opts.action === undefined ? undefined : auditActionsFor(opts.action);
      if (actions === null) {
        throw new CliError(`"${opts.action}" is not an audit action: use one of ${AUDIT_ACTIONS.join(', ')}, or a group (${AUDIT_GROUPS.join(', ')}).`);
      }
      const limit = Number(opts.limit);
      if (!/^\d+$/.test(opts.limit) || limit < 1 || limit > 1000) throw new CliError(`--limit must be an integer from 1 to 1000; got "${opts.limit}".`);
      const before = opts.before === undefined ? undefined : Number(opts.before);
      if (before !== undefined && (!/^\d{1,15}$/.test(opts.before!) || before < 1)) {
        throw new CliError(`--before must be an entry id (a positive integer); got "${opts.before}".`);
      }
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const entries = await store.listAudit(company.id, { ...(actions ? { actions } : {}), ...(before ? { before } : {}), limit });
        emit(ctx, opts, entries.map(auditJson), () =>
          entries.length === 0
            ? `No audit entries for ${company.slug}${opts.action ? ` with action ${opts.action}` : ''}.`
            : table([
                ['ID', 'AT', 'ACTOR', 'ACTION', 'DETAILS'],
                ...entries.map((e) => [String(e.id), iso(e.at)!, e.actor, e.action, describeDetails(e.details)]),
              ]),
        );
      });
    });
}
