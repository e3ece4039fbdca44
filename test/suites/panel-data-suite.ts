/**
 * What the panel does with data, once per store: the overview, uploads from
 * the browser followed to their report, upload tokens, size limits, API
 * keys, the column mapping, and escaping of everything that came from a
 * file or a user.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { csv } from '../helpers/csv.js';
import { bearer, request } from '../helpers/http.js';
import { credentialFor, signedIn, startPanelServer, waitForImport, type PanelClient, type PanelServer } from '../helpers/panel.js';
import type { StoreFactory } from '../helpers/stores.js';
import { HANG_GUARD_MS } from '../helpers/timing.js';

const ARTICLES = csv([
  ['CODIGO', 'DESCRIPCION', 'UNIDAD', 'PRECIO_VENTA'],
  ['A1', 'Tornillo', 'ud', '1,50'],
  ['A2', 'Tuerca', 'ud', 'gratis'],
  ['A3', 'Arandela', 'ud', '0,10'],
]);
const HOSTILE = readFileSync(new URL('../../../test/fixtures/csv/hostile.csv', import.meta.url));

/** Polls the status URL the upload answered, as the client script does, until the import ends. */
async function followImport(client: PanelClient, statusUrl: string) {
  // A bound on a hang, not on speed: a busy machine imports slowly.
  for (const deadline = Date.now() + HANG_GUARD_MS; Date.now() < deadline; ) {
    const res = await client.get(statusUrl, { accept: 'application/json' });
    assert.equal(res.status, 200, res.text);
    const job = res.json().import;
    if (job.done) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the import did not end');
}

export function panelDataSuite(factory: StoreFactory) {
  describe(`panel data: imports, keys, tokens, mapping (${factory.name})`, { skip: factory.skip }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let server: PanelServer;

    before(async () => {
      ({ store, cleanup } = await factory.create());
      server = await startPanelServer(store);
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    test('an upload from the form is queued, followed by its status to the report, listed in the history and the overview', async () => {
      const { client } = await signedIn(server, store, 'upload');
      const res = await client.upload('articulos', ARTICLES, 'tarifa.csv');
      assert.equal(res.status, 201, res.text);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['ok', 'import_id', 'status', 'status_url', 'page_url']);
      assert.equal(body.status_url, `/panel/api/imports/${body.import_id}`);
      const job = await followImport(client, body.status_url);
      assert.equal(job.status, 'succeeded');
      assert.equal(job.source, 'panel');
      assert.deepEqual([job.report.rows_read, job.report.inserted, job.report.warnings.count], [3, 3, 1]);

      const page = await client.get(body.page_url);
      assert.equal(page.status, 200);
      assert.match(page.text, /<h1>Importación \d+: Artículos<\/h1>/);
      assert.match(page.text, /Filas leídas<\/dt><dd>3</);
      assert.match(page.text, /Línea 3: «gratis» en la columna «PRECIO_VENTA» no es un número/);
      assert.doesNotMatch(page.text, /id="import-watch"/, 'an ended import is not watched');

      const kindPage = await client.get('/panel/kinds/articulos');
      assert.match(kindPage.text, new RegExp(`<a href="/panel/imports/${body.import_id}">${body.import_id}</a>`));
      assert.match(kindPage.text, /tarifa\.csv/);
      assert.match(kindPage.text, /Arandela/, 'the preview shows published records');

      const overview = await client.get('/panel');
      const card = /<h2 id="kind-articulos">[\s\S]*?<\/section>/.exec(overview.text)![0];
      assert.match(card, /3 registros/);
      assert.match(card, /<time datetime="\d{4}-\d\d-\d\dT[^"]+Z">/);
      assert.match(card, /Correcta/);
      const empty = /<h2 id="kind-obras">[\s\S]*?<\/section>/.exec(overview.text)![0];
      assert.match(empty, /Nada todavía/);
      assert.match(empty, /Subir el primer CSV/);
    });

    test('the overview tells the import being served from a later attempt that failed, and offers to upload a corrected file', async () => {
      const { client } = await signedIn(server, store, 'overview');
      const good = await client.upload('articulos', ARTICLES, 'bueno.csv');
      const goodJob = await followImport(client, good.json().status_url);
      assert.equal(goodJob.status, 'succeeded');
      const bad = await client.upload('articulos', csv([['CODIGO', 'DESCRIPCION'], ['A1', 'x'], ['A2']]), 'roto.csv');
      const badJob = await followImport(client, bad.json().status_url);
      assert.equal(badJob.status, 'failed');

      const overview = await client.get('/panel');
      const card = /<h2 id="kind-articulos">[\s\S]*?<\/section>/.exec(overview.text)![0];
      assert.match(card, /3 registros/);
      const [live, attempt] = card.split('Último intento');
      assert.ok(attempt, 'the last attempt is shown apart');
      assert.match(live!, new RegExp(`<a href="/panel/imports/${good.json().import_id}">Importación ${good.json().import_id}</a>[\\s\\S]*Correcta`));
      assert.doesNotMatch(live!, /Fallida/, 'the failed attempt does not sit over the data served');
      assert.match(attempt, new RegExp(`/panel/imports/${bad.json().import_id}"[\\s\\S]*Fallida`));
      assert.match(attempt, /se siguen sirviendo los datos anteriores/);
      assert.match(attempt, /Subir un archivo corregido/);
    });

    test('the first-run checklist shows until customers are uploaded, a key exists and the sandbox has been shown', async () => {
      const { client, company } = await signedIn(server, store, 'checklist');
      const first = await client.get('/panel');
      assert.match(first.text, /id="checklist-title"/);
      assert.equal((first.text.match(/data-done="false"/g) ?? []).length, 3);

      const job = await followImport(client, (await client.upload('clientes', csv([['CODIGO', 'NOMBRE'], ['C1', 'Uno']]), 'c.csv')).json().status_url);
      assert.equal(job.status, 'succeeded');
      await client.createCredential('/panel/keys', 'BI');
      const two = await client.get('/panel');
      assert.equal((two.text.match(/data-done="true"/g) ?? []).length, 2);
      assert.ok((await store.listCredentials(company.id, 'read')).length === 1);

      await client.get('/panel/help');
      const done = await client.get('/panel');
      assert.doesNotMatch(done.text, /id="checklist-title"/, 'gone once every step is done');
    });

    test('without the script, the form is answered with a redirect to the import page; a failed import shows why', async () => {
      const { client } = await signedIn(server, store, 'plainform');
      const dup = csv([['CODIGO', 'NOMBRE'], ['C1', 'Uno'], ['C1', 'Otro']]);
      const res = await client.upload('clientes', dup, 'dup.csv', { json: false });
      assert.equal(res.status, 303);
      const id = Number(/^\/panel\/imports\/(\d+)$/.exec(res.location!)![1]);
      await waitForImport(store, id);
      const page = await client.get(res.location!);
      assert.match(page.text, /La importación falló; los datos publicados no han cambiado/);
      assert.match(page.text, /Hay valores de id_erp repetidos\. Línea 3\./);
      assert.match(page.text, /Fallida/);
      // What to do next is to upload a corrected file, not to import the same broken one again;
      // and no would-be counts sit under the error as if something had been applied.
      assert.match(page.text, /href="\/panel\/kinds\/clientes#upload-title"[^>]*>[\s\S]*?Subir un archivo corregido/);
      assert.doesNotMatch(page.text, new RegExp(`/panel/imports/${id}/reapply`));
      assert.doesNotMatch(page.text, /<dt>Nuevos<\/dt>|<dt>Eliminados<\/dt>/);
      assert.match(page.text, /No se aplicó nada/);
      // Failing at the header: nothing read, so no zeros where counts would be.
      const headless = await client.upload('clientes', csv([['NOMBRE', 'EMAIL'], ['Uno', 'uno@example.com']]), 'sin-codigo.csv');
      const headlessJob = await waitForImport(store, headless.json().import_id);
      assert.equal(headlessJob.status, 'failed');
      const headlessPage = (await client.get(`/panel/imports/${headlessJob.id}`)).text;
      assert.match(headlessPage, /Ninguna columna puede servir de id_erp/);
      assert.match(headlessPage, /Subir un archivo corregido/);
      assert.doesNotMatch(headlessPage, /<dd>0<\/dd>/, 'no all-zero counts under the error');
      const none = await client.upload('clientes', Buffer.alloc(0), '', { json: true });
      assert.equal(none.status, 400);
      assert.equal(none.json().error, 'bad_request');
    });

    test('upload tokens: curl -T queues an import and answers its id and status URL; read keys cannot upload, tokens cannot read', async () => {
      const { client, company } = await signedIn(server, store, 'token');
      const { page: created, secret } = await client.createCredential('/panel/tokens', 'ERP nightly');
      assert.equal(created.status, 200);
      const token = secret!;
      assert.match(created.text, new RegExp(`curl -T export.csv -H &quot;Authorization: Bearer ${token}&quot; http://localhost:3000/panel/api/imports/clientes`));

      // What curl -T sends: PUT, a Content-Length, no Content-Type.
      const put = await request(`${server.baseUrl}/panel/api/imports/articulos`, { method: 'PUT', headers: bearer(token), body: ARTICLES });
      assert.equal(put.status, 202, put.text());
      const body = put.json();
      assert.equal(body.ok, true);
      assert.equal(body.status, 'queued');
      assert.equal(body.status_url, `http://localhost:3000/panel/api/imports/${body.import_id}`, 'PUBLIC_BASE_URL + path');
      assert.equal(put.headers.location, `/panel/api/imports/${body.import_id}`);
      const done = await waitForImport(store, body.import_id);
      assert.equal(done.status, 'succeeded');
      assert.equal(done.source, `token:${token.slice(4, 12)}`);
      const status = await request(`${server.baseUrl}/panel/api/imports/${body.import_id}`, { headers: bearer(token) });
      assert.equal(status.json().import.report.inserted, 3);

      const key = await credentialFor(store, company.id, 'read');
      const byKey = await request(`${server.baseUrl}/panel/api/imports/articulos`, { method: 'PUT', headers: bearer(key.token), body: ARTICLES });
      assert.equal(byKey.status, 401);
      assert.match(byKey.json().message, /API key, which only reads/);
      assert.equal((await request(`${server.baseUrl}/panel/api/imports/articulos`, { method: 'PUT', body: ARTICLES })).json().error, 'auth_required');
      const read = await request(`${server.baseUrl}/v1/articulos`, { headers: bearer(token) });
      assert.equal(read.status, 401);
      assert.equal(read.json().error, 'unauthorized');
      // Issue 18, point 3: the message says what the credential is (it said "unknown, malformed or revoked").
      assert.match(read.json().message, /^This is an upload token \(upl_…\), not an API key/);
      assert.match(read.headers['www-authenticate'] as string, /^Bearer/);
      const byHeader = await request(`${server.baseUrl}/v1/articulos/A1`, { headers: { 'x-api-key': token } });
      assert.match(byHeader.json().message, /upload token/);
      assert.equal((await request(`${server.baseUrl}/v1/articulos`, { headers: bearer(key.token) })).json().total, 3);

      // Listed, then revoked from the panel: refused at once.
      const prefix = token.slice(4, 12);
      assert.match((await client.get('/panel/tokens')).text, new RegExp(`<code>${prefix}</code>`));
      assert.equal((await client.post(`/panel/tokens/${prefix}/revoke`)).status, 303);
      const again = await request(`${server.baseUrl}/panel/api/imports/articulos`, { method: 'PUT', headers: bearer(token), body: ARTICLES });
      assert.equal(again.status, 401);
      assert.equal((await store.listImports(company.id)).length, 1);
    });

    test('uploads over MAX_UPLOAD_BYTES: 413 with the contract body, from the form and the token API, and nothing stored', async () => {
      const small = await startPanelServer(store, { MAX_UPLOAD_BYTES: '1000' });
      try {
        const { client, company } = await signedIn(small, store, 'limit');
        const big = Buffer.alloc(5000, 'x');
        const form = await client.upload('clientes', big, 'big.csv');
        assert.equal(form.status, 413);
        assert.deepEqual(Object.keys(form.json()), ['ok', 'error', 'message', 'request_id']);
        assert.equal(form.json().error, 'payload_too_large');
        const { token } = await credentialFor(store, company.id, 'upload');
        const declared = await request(`${small.baseUrl}/panel/api/imports/clientes`, { method: 'PUT', headers: bearer(token), body: big });
        assert.equal(declared.status, 413);
        assert.equal(declared.json().error, 'payload_too_large');
        // Chunked, with no length declared: refused once the limit is crossed.
        const chunks = new ReadableStream({
          start(c) {
            for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(400));
            c.close();
          },
        });
        const streamed = await fetch(`${small.baseUrl}/panel/api/imports/clientes`, {
          method: 'PUT',
          headers: bearer(token),
          body: chunks,
          duplex: 'half',
        } as RequestInit);
        assert.equal(streamed.status, 413);
        assert.equal(((await streamed.json()) as { error: string }).error, 'payload_too_large');
        assert.deepEqual(await store.listImports(company.id), []);
      } finally {
        await small.close();
      }
    });

    test('API keys: created with a label and shown once, listed by prefix, used on /v1, revoked after confirmation: 401 at once', async () => {
      const { client, company } = await signedIn(server, store, 'keys');
      const { posted, page: created, secret, location } = await client.createCredential('/panel/keys', 'Panel de BI');
      assert.equal(posted.text.includes(secret!), false, 'the POST answers a redirect, not the key');
      assert.equal(created.status, 200);
      const key = secret!;
      assert.match(created.text, /data-copy="new-secret"/, 'a copy button');
      // A refresh of the page that showed it: no second key, and the value is not shown again.
      const again = await client.get(location);
      assert.equal(again.status, 200);
      assert.equal(again.text.includes(key), false, 'shown once');
      assert.match(again.text, /id="gone-title"/);
      assert.equal((await store.listCredentials(company.id, 'read')).length, 1, 'a refresh creates nothing');
      const prefix = key.slice(4, 12);
      const list = await client.get('/panel/keys');
      assert.match(list.text, new RegExp(`<code>${prefix}</code>`));
      assert.match(list.text, /Panel de BI/);
      assert.equal(list.text.includes(key), false, 'the full key is shown only once');

      assert.equal((await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) })).status, 200);
      await server.app.credentials.flush();
      const used = await client.get('/panel/keys');
      const row = new RegExp(`<code>${prefix}</code>[\\s\\S]*?</tr>`).exec(used.text)![0];
      assert.equal(row.match(/<time /g)?.length, 2, 'created and last used');
      assert.match(row, /Activa/);

      const confirm = await client.get(`/panel/keys/${prefix}/revoke`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.text, new RegExp(`¿Revocar la clave ${prefix}\\?`));
      const revoked = await client.post(`/panel/keys/${prefix}/revoke`);
      assert.equal(revoked.status, 303);
      assert.equal(revoked.location, `/panel/keys?revoked=${prefix}`);
      const refused = await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key) });
      assert.equal(refused.status, 401);
      assert.equal(refused.json().error, 'unauthorized');
      assert.match((await client.get(revoked.location!)).text, /Revocada/);
    });

    test('column mapping: the last file\'s columns, an override saved for the next import, and re-applying the last file', async () => {
      const { client, company } = await signedIn(server, store, 'mapping');
      const file = csv([['CODIGO', 'RAZON', 'NOMBRE_COMERCIAL', 'CIF'], ['C1', 'Razón Uno S.L.', 'Uno', 'B1'], ['C2', 'Razón Dos S.L.', 'Dos', 'B2']]);
      const up = await client.upload('clientes', file);
      const first = await followImport(client, up.json().status_url);
      assert.equal(first.report.mapping.nombre, 'NOMBRE_COMERCIAL');

      const page = await client.get('/panel/kinds/clientes/mapping');
      assert.match(page.text, /4 columnas/);
      assert.match(page.text, /<option value="" selected>Automático \(NOMBRE_COMERCIAL\)<\/option>/);
      assert.match(page.text, /<option value="RAZON">RAZON<\/option>/);
      const refused = await client.post('/panel/kinds/clientes/mapping', { map_nombre: 'NO_SUCH' });
      assert.equal(refused.status, 400);
      assert.deepEqual(await store.getMapping(company.id, 'clientes'), {});

      const saved = await client.post('/panel/kinds/clientes/mapping', { map_nombre: 'RAZON', map_cif: '' });
      assert.equal(saved.status, 303);
      assert.deepEqual(await store.getMapping(company.id, 'clientes'), { nombre: 'RAZON' });
      assert.match((await client.get(saved.location!)).text, /Mapeo guardado/);

      const again = await client.post(`/panel/imports/${first.id}/reapply`);
      assert.equal(again.status, 303);
      const id = Number(/\/panel\/imports\/(\d+)\?again=1$/.exec(again.location!)![1]);
      assert.ok(id > first.id);
      assert.equal((await waitForImport(store, id)).status, 'succeeded');
      const key = await credentialFor(store, company.id, 'read');
      const items = (await request(`${server.baseUrl}/v1/clientes`, { headers: bearer(key.token) })).json().items;
      assert.deepEqual(items.map((i: { nombre: string }) => i.nombre), ['Razón Uno S.L.', 'Razón Dos S.L.']);
      assert.match((await client.get(again.location!)).text, new RegExp(`puesto de nuevo en cola como importación ${id}`));
    });

    // Issue 18, point 1, through the panel's two doors: the form and an upload token.
    test('the column-drift guard holds uploads from the form and with a token: the page says which kind it looks like, or which columns changed', async () => {
      const { client, company } = await signedIn(server, store, 'drift');
      const sample = (kind: string) => readFileSync(new URL(`../../../test/fixtures/csv/samples/${kind}.csv`, import.meta.url));
      const fromForm = await client.upload('obras', sample('articulos'));
      assert.equal(fromForm.status, 201, fromForm.text);
      const first = await waitForImport(store, fromForm.json().import_id);
      assert.equal(first.status, 'awaiting_confirmation');
      const page = await client.get(`/panel/imports/${first.id}`);
      assert.match(page.text, /Pendiente de confirmación/);
      assert.match(page.text, /Parece una exportación de Artículos, no de Obras: el mapeo de Artículos encuentra 3 de sus campos y el de Obras solo 1\./);
      // Nothing served yet, nothing to remove: the decision says so, and applying is not a destructive act.
      assert.match(page.text, /Lo que se sirve ahora<\/h3>\s*<p class="big">Ningún registro<\/p>\s*<p class="muted">Aún no se ha publicado ningún dato de obras\.<\/p>/);
      assert.match(page.text, /class="primary">Aplicar este archivo<\/button>/);
      assert.doesNotMatch(page.text, /class="danger"/);
      assert.equal((await client.post(`/panel/imports/${first.id}/reject`)).status, 303);

      const token = await credentialFor(store, company.id, 'upload');
      const put = async (kind: string, file: string) => {
        const res = await request(`${server.baseUrl}/panel/api/imports/${kind}`, { method: 'PUT', headers: bearer(token.token), body: sample(file) });
        assert.equal(res.status, 202, res.text());
        return waitForImport(store, res.json().import_id);
      };
      assert.equal((await put('obras', 'obras')).status, 'succeeded');
      const drifted = await put('obras', 'articulos');
      assert.equal(drifted.status, 'awaiting_confirmation');
      const status = await request(`${server.baseUrl}/panel/api/imports/${drifted.id}`, { headers: bearer(token.token) });
      assert.equal(status.json().import.report.column_drift.shared, 6);
      const held = await client.get(`/panel/imports/${drifted.id}`);
      assert.match(held.text, /comparte solo 6 de sus 60 columnas con la de los datos que se sirven \(50\)/);
      assert.match(held.text, /class="danger">Aplicar y eliminar 80 registros<\/button>/);
      assert.match(held.text, /Columnas nuevas: &quot;DESCRIPCION_LARGA&quot;, &quot;FAMILIA&quot;, .* y 34 más\./);
      assert.match(held.text, /Columnas que desaparecen: &quot;NOMBRE&quot;, .* y 24 más\./);
      const confirmed = await client.post(`/panel/imports/${drifted.id}/confirm`);
      assert.equal(confirmed.status, 303);
      assert.equal((await store.importById(drifted.id))!.status, 'succeeded');
      assert.equal((await store.snapshotMeta((await store.liveSnapshotId(company.id, 'obras'))!))!.count, 300);
    });

    test('everything from files and users is escaped: hostile cells, column names, file names and labels are shown as text', async () => {
      const { client } = await signedIn(server, store, 'hostile');
      const up = await client.upload('articulos', HOSTILE, '"><img src=x onerror=alert(1)>.csv');
      const job = await followImport(client, up.json().status_url);
      assert.equal(job.status, 'succeeded', JSON.stringify(job.report?.error));
      await client.post('/panel/keys', { label: '<script>alert("label")</script>' });
      const pages = await Promise.all(
        [`/panel/imports/${job.id}`, '/panel/kinds/articulos', '/panel/kinds/articulos/mapping', '/panel/keys', '/panel'].map((p) => client.get(p)),
      );
      const all = pages.map((p) => p.text).join('\n');
      assert.doesNotMatch(all, /<img/i);
      assert.doesNotMatch(all, /<script>(window|alert)/);
      assert.doesNotMatch(all, /<b>ud/);
      assert.match(pages[1]!.text, /&lt;script&gt;window\.__xss=&#39;cell&#39;&lt;\/script&gt;/);
      assert.match(pages[0]!.text, /«&quot;&gt;&lt;img src=x onerror=&quot;window\.__xss=&#39;precio&#39;&quot;&gt;»/);
      assert.match(pages[2]!.text, /<option value="&quot;&gt;&lt;img src=x onerror=&quot;window\.__xss=&#39;column&#39;&quot;&gt;">/);
      assert.match(pages[3]!.text, /&lt;script&gt;alert\(&quot;label&quot;\)&lt;\/script&gt;/);
    });
  });
}
