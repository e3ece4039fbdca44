/** The overview, each kind's page, uploads from the browser, and each import's page. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isKind, KINDS, type Kind } from '../../domain/kinds.js';
import type { ImportJob, Store } from '../../store/store.js';
import { sliceItems } from '../api/snapshot-reader.js';
import { isGzipName, plainUpload } from '../../imports/compressed-upload.js';
import { confirmHeldImport, HeldImportError, rejectHeldImport } from '../../imports/held-imports.js';
import type { ImportReport } from '../../imports/import-report.js';
import { ApiError } from '../errors.js';
import { auditEvent, uploadAudit } from '../../domain/audit.js';
import { HELP_SEEN_COOKIE } from './credential-routes.js';
import { admin, announceReceiving, csrfBinding, CsrfError, pageContext, sendPage, type PanelDeps } from './panel-context.js';
import { removedSample } from './held-sample.js';
import { importPage } from './views/import-page.js';
import { kindPage, type Preview } from './views/kind-page.js';
import { overviewPage } from './views/overview-page.js';

const PREVIEW_ITEMS = 5;
const HISTORY_ITEMS = 50;

export function kindParam(request: FastifyRequest): Kind {
  const kind = (request.params as { kind: string }).kind;
  if (!isKind(kind)) throw new ApiError('not_found', `There is no kind "${kind.slice(0, 40)}".`);
  return kind;
}

/**
 * The import named by the URL, if it belongs to the visitor's company. An
 * import of another company is answered exactly like one that does not exist.
 */
export async function ownImport(store: Store, companyId: number, idText: string): Promise<ImportJob> {
  const job = /^\d{1,15}$/.test(idText) ? await store.importById(Number(idText)) : null;
  if (!job || job.companyId !== companyId) throw new ApiError('not_found', 'There is no such import.');
  return job;
}

/** A file name as the browser or client sent it, without its path and control characters. */
export function cleanFilename(name: string | undefined, kind: Kind): string {
  const base = (name ?? '').split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return base || `${kind}.csv`;
}

async function preview(store: Store, companyId: number, kind: Kind): Promise<Preview | null> {
  const id = await store.liveSnapshotId(companyId, kind);
  const meta = id === null ? null : await store.snapshotMeta(id);
  if (!meta || meta.count === 0) return meta ? { count: 0, items: [] } : null;
  const chunks = await store.readChunks(meta.id, 0, 0);
  // Off the hot path: parsing a handful of items for display is fine here.
  const bytes = Buffer.concat([Buffer.from('['), ...sliceItems(chunks, 0, Math.min(PREVIEW_ITEMS, meta.count)), Buffer.from(']')]);
  return { count: meta.count, items: JSON.parse(bytes.toString('utf8')) };
}

/** How far back the overview looks for the import whose snapshot is live. */
const OVERVIEW_HISTORY = 20;

export function registerImportRoutes(app: FastifyInstance, deps: PanelDeps) {
  const { store, config } = deps;

  app.get('/', async (request, reply) => {
    const { company } = admin(request);
    const [kinds, keys] = await Promise.all([
      Promise.all(
        KINDS.map(async (kind) => {
          const [live, recent] = await Promise.all([store.liveSnapshotId(company.id, kind), store.listImports(company.id, kind, OVERVIEW_HISTORY)]);
          const meta = live === null ? null : await store.snapshotMeta(live);
          return {
            kind,
            count: meta ? meta.count : null,
            publishedAt: meta ? new Date(meta.createdAt) : null,
            liveImport: live === null ? null : (recent.find((j) => j.snapshotId === live) ?? null),
            lastImport: recent[0] ?? null,
          };
        }),
      ),
      store.listCredentials(company.id, 'read'),
    ]);
    const steps = {
      uploadedCustomers: kinds.some((k) => k.kind === 'clientes' && k.count !== null),
      createdKey: keys.length > 0,
      triedSandbox: request.cookies[HELP_SEEN_COOKIE] === '1',
    };
    return sendPage(reply, overviewPage(pageContext(request, reply, deps), company.name, kinds, steps));
  });

  app.get('/kinds/:kind', async (request, reply) => {
    const { company } = admin(request);
    const kind = kindParam(request);
    const [jobs, shown] = await Promise.all([store.listImports(company.id, kind, HISTORY_ITEMS), preview(store, company.id, kind)]);
    return sendPage(reply, kindPage(pageContext(request, reply, deps), kind, jobs, shown, config.maxUploadBytes));
  });

  // The browser's upload: a multipart form, sent by the client script (with
  // progress, asking for JSON) or by the plain form (answered with a redirect).
  app.post('/kinds/:kind/imports', { config: { csrfInHandler: true } }, async (request, reply) => {
    const { company, who } = admin(request);
    const kind = kindParam(request);
    if (!request.isMultipart()) throw new ApiError('bad_request', 'Send the file as multipart/form-data.');
    const binding = csrfBinding(request, deps);
    const check = (token: unknown) => binding !== null && deps.sessions.csrfMatches(binding, token);
    let csrfOk = check(request.headers['x-csrf-token']);
    let job: ImportJob | null = null;
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname === '_csrf') csrfOk ||= check(part.value);
        continue;
      }
      // The token must come before the file (the form puts it first): nothing is stored without it.
      if (!csrfOk) throw new CsrfError();
      if (job || part.filename === '') {
        part.file.resume();
        continue;
      }
      const filename = cleanFilename(part.filename, kind);
      job = await store.createImport(
        { companyId: company.id, kind, filename, source: 'panel' },
        // A `.csv.gz` is stored decompressed (compressed-upload.ts); a gzip body is recognised whatever its name.
        plainUpload(part.file, isGzipName(part.filename)),
        config.maxUploadBytes,
        // The file's own size is not sent; the form's is, a few hundred bytes over it.
        announceReceiving(deps, request, isGzipName(part.filename)),
        uploadAudit(who, company.id, kind, filename, 'panel'),
      );
    }
    if (!csrfOk) throw new CsrfError();
    if (!job) throw new ApiError('bad_request', 'Choose a CSV file to upload.');
    deps.onImportQueued();
    request.log.info({ importId: job.id, kind, bytes: job.sizeBytes, company: company.id }, 'panel upload queued');
    const pageUrl = `/panel/imports/${job.id}`;
    if (!(request.headers.accept ?? '').includes('application/json')) return reply.redirect(pageUrl, 303);
    return reply.code(201).send({
      ok: true,
      import_id: job.id,
      status: job.status,
      status_url: `/panel/api/imports/${job.id}`,
      page_url: pageUrl,
    });
  });

  app.get('/imports/:id', async (request, reply) => {
    const { company } = admin(request);
    const job = await ownImport(store, company.id, (request.params as { id: string }).id);
    const ctx = pageContext(request, reply, deps);
    const query = request.query as { again?: string; decided?: string };
    const notice = query.again
      ? ctx.t('reapplyQueued', { id: job.id })
      : query.decided === 'confirmed'
        ? ctx.t('heldConfirmed')
        : query.decided === 'rejected'
          ? ctx.t('heldRejected')
          : null;
    const report = job.report as ImportReport | null;
    const removed = job.status === 'awaiting_confirmation' && report
      ? await removedSample(store, company.id, job.kind, report.deleted_examples ?? [])
      : [];
    return sendPage(reply, importPage(ctx, job, notice, removed));
  });

  // Queues the same file again (after a mapping change): a new import, the old one untouched.
  app.post('/imports/:id/reapply', async (request, reply) => {
    const { company, who } = admin(request);
    const job = await ownImport(store, company.id, (request.params as { id: string }).id);
    if (job.fileRemovedAt) {
      throw new ApiError('not_found', `The file of import ${job.id} was removed on ${job.fileRemovedAt.toISOString()} (UPLOAD_RETENTION_DAYS): upload it again.`);
    }
    const audit = auditEvent(who, company.id, 'import.upload', { kind: job.kind, filename: job.filename, source: 'panel', copy_of: job.id, size_bytes: job.sizeBytes });
    const copy = await store.copyImport(job.id, 'panel', audit);
    if (!copy) throw new ApiError('not_found', 'There is no such import.');
    deps.onImportQueued();
    return reply.redirect(`/panel/imports/${copy.id}?again=1`, 303);
  });

  // The mass-deletion guard's decision (issue 9): the same operations as `mirador imports <slug> confirm|reject`.
  for (const decision of ['confirm', 'reject'] as const) {
    app.post(`/imports/:id/${decision}`, async (request, reply) => {
      const { company, who } = admin(request);
      const job = await ownImport(store, company.id, (request.params as { id: string }).id);
      try {
        if (decision === 'confirm') await confirmHeldImport(store, company.id, job.id, deps.config.tombstoneRetentionMs, who);
        else await rejectHeldImport(store, company.id, job.id, who);
      } catch (err) {
        if (err instanceof HeldImportError) throw new ApiError('not_found', err.message);
        throw err;
      }
      // A confirmed import frees the queue behind it.
      deps.onImportQueued();
      return reply.redirect(`/panel/imports/${job.id}?decided=${decision === 'confirm' ? 'confirmed' : 'rejected'}`, 303);
    });
  }
}
