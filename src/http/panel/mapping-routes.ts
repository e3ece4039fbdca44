/** A kind's column mapping: shown against the last upload's columns, and saved as the company's override. */
import type { FastifyInstance } from 'fastify';
import { KIND_SPECS, type Kind } from '../../domain/kinds.js';
import { describeDefaults, mappingAudit, previewMapping } from '../../imports/column-mapping.js';
import { openCsv } from '../../imports/read-csv.js';
import type { ImportJob, Store } from '../../store/store.js';
import { kindParam } from './import-routes.js';
import { admin, pageContext, sendPage, type PanelDeps } from './panel-context.js';
import { mappingPage, type MappingView } from './views/mapping-page.js';

/**
 * The last upload of a kind and its columns. A published import's columns
 * are in its snapshot; otherwise (it failed, or is still queued) the header
 * is read from the stored file — a failed import is exactly when the mapping
 * matters. Null columns when neither can be read.
 */
async function lastUpload(store: Store, companyId: number, kind: Kind): Promise<{ job: ImportJob; columns: string[] } | null> {
  const job = (await store.listImports(companyId, kind, 5)).find((j) => j.status !== 'receiving');
  if (!job) return null;
  const meta = job.snapshotId === null ? null : await store.snapshotMeta(job.snapshotId);
  if (meta) return { job, columns: meta.columns };
  try {
    // Reads the first stored block or so; the rest of the file is never fetched.
    const file = await openCsv(store.readImportFile(job.id));
    return { job, columns: file.columns };
  } catch {
    return { job, columns: [] };
  }
}

export function registerMappingRoutes(app: FastifyInstance, deps: PanelDeps) {
  const { store } = deps;

  async function view(companyId: number, kind: Kind, notice: MappingView['notice']): Promise<MappingView> {
    const [last, override] = await Promise.all([lastUpload(store, companyId, kind), store.getMapping(companyId, kind)]);
    const automatic = previewMapping(kind, last?.columns ?? []);
    return { kind, last, override, automatic, defaults: describeDefaults(kind), notice };
  }

  app.get('/kinds/:kind/mapping', async (request, reply) => {
    const { company } = admin(request);
    const kind = kindParam(request);
    const ctx = pageContext(request, reply, deps);
    const saved = (request.query as { saved?: string }).saved;
    const v = await view(company.id, kind, saved ? { text: ctx.t('mappingSaved'), kind: 'success' } : null);
    return sendPage(reply, mappingPage(ctx, v));
  });

  app.post('/kinds/:kind/mapping', async (request, reply) => {
    const { company, who } = admin(request);
    const kind = kindParam(request);
    const form = (request.body ?? {}) as Record<string, unknown>;
    const current = await view(company.id, kind, null);
    const columns = new Set(current.last?.columns ?? []);
    const next: Record<string, string> = {};
    for (const field of KIND_SPECS[kind].fields) {
      const value = form[`map_${field.name}`];
      if (typeof value !== 'string' || value === '') continue;
      // Only a column of the last file, or the one already saved, can be chosen: a typo would fail the next import.
      if (!columns.has(value) && current.override[field.name] !== value) {
        const ctx = pageContext(request, reply, deps);
        const v = { ...current, notice: { text: `${field.name}: ${ctx.t('unknownColumn')}`, kind: 'error' as const } };
        return sendPage(reply, mappingPage(ctx, v), 400);
      }
      next[field.name] = value;
    }
    await store.setMapping(company.id, kind, next, mappingAudit(who, company.id, kind, current.override, next));
    request.log.info({ company: company.id, kind, fields: Object.keys(next) }, 'panel mapping saved');
    return reply.redirect(`/panel/kinds/${kind}/mapping?saved=1`, 303);
  });
}
