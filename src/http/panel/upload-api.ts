/**
 * The panel's JSON API. `PUT /panel/api/imports/<kind>` takes a raw CSV
 * body with an upload token (what an ERP's scheduled export runs:
 * `curl -T export.csv -H "Authorization: Bearer upl_…" …`, or a gzip body with
 * `Content-Encoding: gzip`), streams it into
 * the store and answers the queued import. `GET /panel/api/imports/<id>` is
 * its status, for that token's company or a signed-in administrator (the
 * upload page polls it). Errors have the contract's shape.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseCredential } from '../../domain/api-keys.js';
import { tokenActor, uploadAudit } from '../../domain/audit.js';
import type { ImportJob } from '../../store/store.js';
import { plainUpload } from '../../imports/compressed-upload.js';
import { expiredRefusal, presentedToken } from '../api/api-auth.js';
import { ApiError } from '../errors.js';
import { cleanFilename, kindParam, ownImport } from './import-routes.js';
import { announceReceiving, type PanelDeps } from './panel-context.js';
import { FINAL_STATUSES } from './views/import-page.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function importStatusJson(job: ImportJob, baseUrl: string) {
  return {
    id: job.id,
    kind: job.kind,
    status: job.status,
    done: FINAL_STATUSES.has(job.status),
    filename: job.filename,
    size_bytes: job.sizeBytes,
    source: job.source,
    created_at: iso(job.createdAt),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    rows_read: job.rowsRead,
    bytes_read: job.bytesRead,
    error: job.error,
    report: job.report,
    status_url: `${baseUrl}/panel/api/imports/${job.id}`,
  };
}

/**
 * `Content-Encoding: gzip` (or its old alias `x-gzip`); absent or `identity`: plain. Any other
 * coding is refused rather than stored as if it were CSV.
 */
function contentEncodingIsGzip(header: string | undefined): boolean {
  const codings = (header ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return false;
  if (codings.length === 1 && (codings[0] === 'gzip' || codings[0] === 'x-gzip')) return true;
  throw new ApiError('bad_request', `Content-Encoding "${header}" is not supported: send the CSV plain or with "Content-Encoding: gzip".`);
}

export function registerUploadApi(api: FastifyInstance, deps: PanelDeps) {
  const { store, credentials, config } = deps;

  // Bodies here are files, streamed as they come: no parser buffers them,
  // whatever Content-Type the client sends (curl -T sends none).
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('*', (_request, _payload, done) => done(null));

  /** The company of the upload token the request carries; a read key is refused, however valid. */
  async function uploadCompany(request: FastifyRequest): Promise<number> {
    const token = presentedToken(request);
    if (token === null) throw new ApiError('auth_required', 'No upload token was sent. Send it as "Authorization: Bearer <token>".');
    const credential = await credentials.verify(token, 'upload');
    if (!credential) {
      const expired = expiredRefusal(credentials, token, 'upload');
      if (expired) throw expired;
      const isKey = parseCredential(token)?.scope === 'read';
      throw new ApiError('unauthorized', isKey ? 'This is an API key, which only reads. Uploads need an upload token (upl_…) from the panel.' : 'The upload token is not valid: it is unknown, malformed or revoked.');
    }
    request.credential = credential;
    return credential.companyId;
  }

  api.put('/api/imports/:kind', { config: { panelAccess: 'api' } }, async (request, reply) => {
    const kind = kindParam(request);
    const companyId = await uploadCompany(request);
    const length = request.headers['content-length'];
    if (request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
      throw new ApiError('bad_request', 'The request has no body: send the CSV file as the body (curl -T export.csv …).');
    }
    const compressed = contentEncodingIsGzip(request.headers['content-encoding']);
    // Refused before reading a byte when the client says how much it will send. A compressed
    // body's length says nothing certain of its decompressed size, which the store bounds.
    if (!compressed && length !== undefined && Number(length) > config.maxUploadBytes) {
      throw new ApiError('payload_too_large', `The upload is larger than the maximum of ${config.maxUploadBytes} bytes.`);
    }
    const filename = cleanFilename((request.query as { filename?: string }).filename, kind);
    const source = `token:${request.credential!.prefix}`;
    const job = await store.createImport(
      { companyId, kind, filename, source },
      // Stored decompressed (compressed-upload.ts): MAX_UPLOAD_BYTES bounds what it inflates to.
      plainUpload(request.raw, compressed),
      config.maxUploadBytes,
      announceReceiving(deps, request, compressed),
      uploadAudit(tokenActor(request.credential!.prefix, request.ip), companyId, kind, filename, source),
    );
    deps.onImportQueued();
    const body = importStatusJson(job, config.publicBaseUrl);
    request.log.info({ importId: job.id, kind, bytes: job.sizeBytes, company: companyId }, 'token upload queued');
    return reply
      .code(202)
      .header('Location', `/panel/api/imports/${job.id}`)
      .send({ ok: true, import_id: job.id, status: job.status, status_url: body.status_url, import: body });
  });

  api.get('/api/imports/:id', { config: { panelAccess: 'api' } }, async (request, reply) => {
    const hasCredential = Boolean(request.headers.authorization || request.headers['x-api-key']);
    let companyId: number;
    if (hasCredential) companyId = await uploadCompany(request);
    else if (request.panel?.company) companyId = request.panel.company.id;
    else throw new ApiError('auth_required', 'Send the upload token ("Authorization: Bearer <token>") or sign in to the panel.');
    const job = await ownImport(store, companyId, (request.params as { id: string }).id);
    return reply.send({ ok: true, import: importStatusJson(job, config.publicBaseUrl) });
  });
}
