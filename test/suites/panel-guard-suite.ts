/**
 * The guard's page, once per store (issue 20, point 5): a held import shows
 * what is served beside what the file would make of it, the first records
 * that would go with their names, a red "apply and remove N records" and a
 * neutral "reject", in Spanish and English; deciding works with plain forms
 * (CSRF included), and a rejected import's report claims no removal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { writeGuard } from '../../src/imports/deletion-guard.js';
import { csv } from '../helpers/csv.js';
import { signedIn, startPanelServer, waitForImport, type PanelClient, type PanelServer } from '../helpers/panel.js';
import type { StoreFactory } from '../helpers/stores.js';

/** `n` products A01…, named "Producto N". */
const products = (n: number) =>
  csv([['CODIGO', 'DESCRIPCION'], ...Array.from({ length: n }, (_, i) => [`A${String(i + 1).padStart(2, '0')}`, `Producto ${i + 1}`])]);

async function upload(client: PanelClient, store: Store, n: number) {
  const res = await client.upload('articulos', products(n));
  assert.equal(res.status, 201, res.text);
  return waitForImport(store, res.json().import_id);
}

/** The markup of a page's decision (`<section class="held">`, up to the report after it), or null. */
function heldSection(page: string): string | null {
  const start = page.indexOf('<section class="held"');
  if (start < 0) return null;
  const end = page.indexOf('id="report"', start);
  return page.slice(start, end < 0 ? undefined : end);
}

export function panelGuardSuite(factory: StoreFactory) {
  describe(`panel guard page (${factory.name})`, { skip: factory.skip }, () => {
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

    test('a held import: served now beside the file, the first 10 records that would go with their names, red apply and neutral reject', async () => {
      const { client, company } = await signedIn(server, store, 'guard-page');
      await writeGuard(store, company.id, { enabled: true, minRecords: 1, maxFraction: 0.1 });
      assert.equal((await upload(client, store, 15)).status, 'succeeded');
      const held = await upload(client, store, 3);
      assert.equal(held.status, 'awaiting_confirmation');

      const page = await client.get(`/panel/imports/${held.id}`);
      assert.equal(page.status, 200);
      const section = heldSection(page.text);
      assert.ok(section, 'the decision is shown');
      assert.match(section, /eliminaría 12 de 15 registros/);
      assert.match(section, /Lo que se sirve ahora<\/h3>\s*<p class="big">15 registros<\/p>/);
      assert.match(section, /Si aplicas este archivo<\/h3>\s*<p class="big">3 registros<\/p>/);
      assert.match(section, /<div class="removes"><dt>Se eliminarían<\/dt><dd>12<\/dd><\/div>/);
      // The first ten by id_erp, with their names read from the data served now.
      assert.match(section, /Los 10 primeros de 12, por id_erp/);
      const rows = [...section.matchAll(/<td data-label="id_erp"[^>]*>([^<]+)<\/td><td data-label="Nombre"[^>]*>([^<]+)<\/td>/g)].map((m) => [m[1], m[2]]);
      assert.deepEqual(rows, Array.from({ length: 10 }, (_, i) => [`A${String(i + 4).padStart(2, '0')}`, `Producto ${i + 4}`]));
      // Reject (neutral) first, then the red, destructive apply; plain forms with their CSRF field.
      const forms = [...section.matchAll(/<form method="post" action="([^"]+)">\s*<input type="hidden" name="_csrf" value="[^"]+"><button type="submit" class="([^"]+)">([^<]+)<\/button>/g)].map((m) => [m[1], m[2], m[3]]);
      assert.deepEqual(forms, [
        [`/panel/imports/${held.id}/reject`, 'secondary', 'Rechazar'],
        [`/panel/imports/${held.id}/confirm`, 'danger', 'Aplicar y eliminar 12 registros'],
      ]);
      assert.doesNotMatch(page.text, /<script>|<script [^>]*>[^<]/, 'no inline script');
      // While it waits: no finish time, and no counts that read as done.
      assert.doesNotMatch(page.text, /<dt>Terminó<\/dt>/);
      assert.doesNotMatch(page.text, /<dt>Eliminados<\/dt>/);

      // In English: the same decision, in the panel's English words.
      await client.post('/panel/lang', { lang: 'en', back: `/panel/imports/${held.id}` });
      const en = heldSection((await client.get(`/panel/imports/${held.id}`)).text)!;
      assert.match(en, /This import would remove 12 of 15 records/);
      assert.match(en, /Served now<\/h3>\s*<p class="big">15 records<\/p>/);
      assert.match(en, /The first 10 of 12, by id_erp/);
      assert.match(en, /class="secondary">Reject<\/button>/);
      assert.match(en, /class="danger">Apply and remove 12 records<\/button>/);
      await client.post('/panel/lang', { lang: 'es', back: '/panel' });

      // Another company cannot decide; a missing CSRF token decides nothing.
      const stranger = await signedIn(server, store, 'guard-page-stranger');
      assert.equal((await stranger.client.post(`/panel/imports/${held.id}/reject`)).status, 404);
      assert.equal((await client.post(`/panel/imports/${held.id}/reject`, { _csrf: 'nope' })).status, 403);
      assert.equal((await store.importById(held.id))!.status, 'awaiting_confirmation');

      // Rejected: the report says nothing was applied or removed, and the 15 records still serve.
      await client.get(`/panel/imports/${held.id}`);
      const rejected = await client.post(`/panel/imports/${held.id}/reject`);
      assert.equal(rejected.status, 303);
      assert.equal((await store.importById(held.id))!.status, 'rejected');
      const after = await client.get(rejected.location!);
      assert.match(after.text, /Importación rechazada: se mantienen los datos anteriores/);
      assert.match(after.text, /no se aplicó ningún cambio y no se eliminó ningún registro/);
      assert.equal(heldSection(after.text), null, 'no decision left to take');
      assert.doesNotMatch(after.text, /<dt>(Eliminados|Nuevos|Modificados)<\/dt>/, 'no counts that read as applied');
      assert.doesNotMatch(after.text, /Aplicar y eliminar/);
      assert.equal((await store.snapshotMeta((await store.liveSnapshotId(company.id, 'articulos'))!))!.count, 15);
      assert.equal((await client.post(`/panel/imports/${held.id}/reject`)).status, 404, 'decided once');
    });

    test('applying a held import that removes one record: a singular red button, then the report says it was removed', async () => {
      const { client, company } = await signedIn(server, store, 'guard-apply');
      await writeGuard(store, company.id, { enabled: true, minRecords: 0, maxFraction: 0.01 });
      assert.equal((await upload(client, store, 12)).status, 'succeeded');
      const held = await upload(client, store, 11);
      assert.equal(held.status, 'awaiting_confirmation');
      const page = await client.get(`/panel/imports/${held.id}`);
      assert.match(page.text, /class="danger">Aplicar y eliminar 1 registro<\/button>/);
      assert.match(page.text, /Están en los datos que se sirven y faltan en el archivo:/);
      assert.match(page.text, /<td data-label="id_erp"[^>]*>A12<\/td><td data-label="Nombre"[^>]*>Producto 12<\/td>/);
      const confirmed = await client.post(`/panel/imports/${held.id}/confirm`);
      assert.equal(confirmed.status, 303);
      assert.equal((await store.importById(held.id))!.status, 'succeeded');
      const done = await client.get(confirmed.location!);
      assert.match(done.text, /Importación confirmada/);
      assert.match(done.text, /<dt>Eliminados<\/dt><dd>1<\/dd>/);
      assert.match(done.text, /<dt>Terminó<\/dt>/);
      assert.equal((await store.snapshotMeta((await store.liveSnapshotId(company.id, 'articulos'))!))!.count, 11);
    });
  });
}
