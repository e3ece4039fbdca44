/** The company's audit trail in the panel: only the signed-in administrator's own company. */
import type { FastifyInstance } from 'fastify';
import { auditActionsFor } from '../../domain/audit.js';
import { admin, pageContext, sendPage, type PanelDeps } from './panel-context.js';
import { auditPage } from './views/audit-page.js';

const PAGE_SIZE = 50;

export function registerAuditRoutes(app: FastifyInstance, deps: PanelDeps) {
  app.get('/audit', async (request, reply) => {
    const { company } = admin(request);
    const ctx = pageContext(request, reply, deps);
    const query = request.query as { action?: unknown; before?: unknown };
    const actionText = typeof query.action === 'string' && query.action !== '' ? query.action.slice(0, 64) : null;
    const actions = actionText === null ? undefined : auditActionsFor(actionText);
    const beforeText = typeof query.before === 'string' ? query.before : '';
    const before = /^\d{1,15}$/.test(beforeText) ? Number(beforeText) : undefined;
    const view = {
      companyName: company.name,
      retentionDays: Math.round(deps.config.auditRetentionMs / 86_400_000),
      action: actionText,
      paged: before !== undefined,
      error: null as string | null,
    };
    if (actions === null) {
      return sendPage(reply, auditPage(ctx, { ...view, action: null, entries: [], olderBefore: null, error: ctx.t('auditBadAction') }), 400);
    }
    // One more than a page: whether there are older entries, without counting them all.
    const found = await deps.store.listAudit(company.id, { ...(actions ? { actions } : {}), ...(before ? { before } : {}), limit: PAGE_SIZE + 1 });
    const entries = found.slice(0, PAGE_SIZE);
    const olderBefore = found.length > PAGE_SIZE ? entries[entries.length - 1]!.id : null;
    return sendPage(reply, auditPage(ctx, { ...view, entries, olderBefore }));
  });
}
