/**
 * The panel in tests: a server with a running import worker (woken by
 * uploads, as under `serve`), companies with an administrator, and a small
 * browser-like client on fetch that keeps cookies and the page's CSRF token.
 */
import { hashPassword } from '../../src/domain/passwords.js';
import { generateCredential, type CredentialScope } from '../../src/domain/api-keys.js';
import { ImportWorker } from '../../src/imports/import-worker.js';
import type { ImportJob, Store } from '../../src/store/store.js';
import { startServer, type TestServer } from './test-server.js';
import { HANG_GUARD_MS } from './timing.js';

export const PASSWORD = 'correct horse battery';

export interface PanelServer extends TestServer {
  /** Stops the import worker, so uploads stay queued (to see the queued state). */
  pauseImports(): Promise<void>;
  resumeImports(): void;
}

export async function startPanelServer(store: Store, env: Record<string, string> = {}): Promise<PanelServer> {
  // As `serve`'s import process: on PostgreSQL, an upload's import is prepared while it is stored.
  const newWorker = () => new ImportWorker(store, { snapshotRetentionMs: 60_000, pollMs: 200, prepareUploads: true });
  let worker: ImportWorker | null = newWorker();
  const server = await startServer(store, env, {
    onImportQueued: () => worker?.wake(),
    onImportReceiving: (importId, declaredBytes) => worker?.prepare(importId, declaredBytes),
  });
  worker.start();
  return {
    ...server,
    pauseImports: async () => {
      await worker?.stop();
      worker = null;
    },
    resumeImports: () => {
      worker ??= newWorker();
      worker.start();
      worker.wake();
    },
    close: async () => {
      await worker?.stop();
      await server.close();
    },
  };
}

/** A company with one panel administrator (`admin@<slug>.example`). */
export async function companyWithAdmin(store: Store, slug: string, password = PASSWORD) {
  const company = await store.createCompany(slug, `Empresa ${slug}`);
  const email = `admin@${slug}.example`;
  const user = await store.createUser({ companyId: company.id, email, passwordHash: await hashPassword(password) });
  return { company, user, email, password };
}

export async function credentialFor(store: Store, companyId: number, scope: CredentialScope) {
  const fresh = generateCredential(scope);
  await store.createCredential({ companyId, scope, prefix: fresh.prefix, secretHash: fresh.secretHash, label: scope });
  return fresh;
}

/** Waits until an import has ended; returns it. */
export async function waitForImport(store: Store, id: number, timeoutMs = HANG_GUARD_MS): Promise<ImportJob> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = await store.importById(id);
    if (job && ['succeeded', 'failed', 'awaiting_confirmation', 'rejected'].includes(job.status)) return job;
    if (Date.now() > until) throw new Error(`import ${id} still ${job?.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface PanelResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
  json(): any;
}

export class PanelClient {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page fetched. */
  csrf = '';
  /** Raw Set-Cookie headers of the last response, to check their attributes. */
  setCookies: string[] = [];

  constructor(readonly baseUrl: string) {}

  async request(path: string, init: RequestInit = {}): Promise<PanelResponse> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(`${this.baseUrl}${path}`, { ...init, headers, redirect: 'manual' });
    this.setCookies = res.headers.getSetCookie();
    for (const line of this.setCookies) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text);
    if (token) this.csrf = token[1]!;
    return { status: res.status, headers: res.headers, text, location: res.headers.get('location'), json: () => JSON.parse(text) };
  }

  get(path: string, headers: Record<string, string> = {}) {
    return this.request(path, { headers });
  }

  /** Posts a form with the current CSRF token (unless the fields carry their own `_csrf`). */
  post(path: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const body = new URLSearchParams({ _csrf: this.csrf, ...fields });
    return this.request(path, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
  }

  /**
   * Creates a key (`/panel/keys`) or an upload token (`/panel/tokens`) as the form does, and
   * follows the redirect to the page that shows it once: that page, and the new value.
   */
  async createCredential(path: '/panel/keys' | '/panel/tokens', label: string) {
    const posted = await this.post(path, { label });
    if (posted.status !== 303 || !posted.location) throw new Error(`creating at ${path} answered ${posted.status}`);
    const page = await this.get(posted.location);
    const secret = /id="new-secret"[^>]*>((?:api|upl)_[a-z0-9]{8}_[A-Za-z0-9]+)</.exec(page.text)?.[1] ?? null;
    return { posted, page, secret, location: posted.location };
  }

  async signIn(email: string, password: string) {
    await this.get('/panel/sign-in');
    const res = await this.post('/panel/sign-in', { email, password });
    if (res.status === 303) await this.get('/panel');
    return res;
  }

  /** Uploads a file as the browser's form does (CSRF field first), asking for JSON as the client script does. */
  upload(kind: string, bytes: Buffer, filename = `${kind}.csv`, options: { json?: boolean; csrf?: string } = {}) {
    const form = new FormData();
    form.append('_csrf', options.csrf ?? this.csrf);
    form.append('file', new Blob([bytes], { type: 'text/csv' }), filename);
    return this.request(`/panel/kinds/${kind}/imports`, {
      method: 'POST',
      body: form,
      headers: options.json === false ? {} : { accept: 'application/json' },
    });
  }
}

/** A browser signed in as the administrator of a new company. */
export async function signedIn(server: TestServer, store: Store, slug: string) {
  const admin = await companyWithAdmin(store, slug);
  const client = new PanelClient(server.baseUrl);
  const res = await client.signIn(admin.email, admin.password);
  if (res.status !== 303) throw new Error(`sign-in failed with ${res.status}`);
  return { ...admin, client };
}
