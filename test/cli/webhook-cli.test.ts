/**
 * Issue 19, point 2 (contract §3): `mirador webhook create|list|test|disable|enable|delete`,
 * the secret printed once, and `test` delivering at once to a real receiver.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { verifyWebhook } from '../../packages/client/src/index.js';
import { mirador, miradorAsync } from '../helpers/cli.js';
import { tempDir } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

describe('mirador webhook', () => {
  const dir = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(dir.path, 'mirador.db')}` };
  const allow = { ...env, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
  after(() => dir.remove());

  test('create, list, test, disable, enable, delete', async () => {
    assert.equal(mirador(['company', 'create', 'hooks', '--name', 'Hooks'], env).code, 0);
    const r = await startReceiver((_req, n, res) => res.writeHead(n === 1 ? 200 : 500).end());
    try {
      const refused = mirador(['webhook', 'create', 'hooks', r.url], env);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /must start with https:\/\/ \(set WEBHOOK_ALLOW_HTTP=true/);
      const badType = mirador(['webhook', 'create', 'hooks', 'https://hooks.example.com/x', '--events', 'import.published,nope'], env);
      assert.equal(badType.code, 1);
      assert.match(badType.stderr, /"nope" is not an event type/);
      assert.match(mirador(['webhook', 'create', 'nobody', 'https://hooks.example.com/x'], env).stderr, /no company with slug "nobody"/);

      const text = mirador(['webhook', 'create', 'hooks', 'https://hooks.example.com/x', '--events', 'import.failed'], env);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /Signing secret: whsec_[0-9A-Za-z]{33}\n/);
      assert.match(text.stdout, /cannot be shown again/);

      const created = mirador(['webhook', 'create', 'hooks', r.url, '--json'], allow).json();
      assert.match(created.secret, /^whsec_[0-9A-Za-z]{33}$/);
      assert.deepEqual(created.events, ['*']);
      const list = mirador(['webhook', 'list', 'hooks', '--json'], env).json();
      assert.deepEqual(list.map((e: any) => e.id), [created.id - 1, created.id]);
      assert.ok(list.every((e: any) => !('secret' in e)), 'the secret is not listed');
      assert.doesNotMatch(mirador(['webhook', 'list', 'hooks'], env).stdout, /whsec_/);

      const sent = await miradorAsync(['webhook', 'test', String(created.id), '--json'], allow);
      assert.equal(sent.code, 0, sent.stderr);
      assert.equal(sent.json().delivered, true);
      assert.equal(sent.json().status, 200);
      const event = verifyWebhook(r.received[0]!.body, r.received[0]!.headers['mirador-signature'], created.secret);
      assert.equal(event.type, 'webhook.test');
      assert.equal(event.id, sent.json().event);

      const failed = await miradorAsync(['webhook', 'test', String(created.id)], allow);
      assert.equal(failed.code, 1, 'a test that is not delivered fails the command');
      assert.match(failed.stdout, /was not delivered .*Answered 500/);

      assert.equal(mirador(['webhook', 'disable', String(created.id), '--json'], env).json().enabled, false);
      assert.equal(mirador(['webhook', 'enable', String(created.id), '--json'], env).json().enabled, true);
      assert.equal(mirador(['webhook', 'delete', String(created.id)], env).code, 0);
      const gone = mirador(['webhook', 'delete', String(created.id)], env);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, new RegExp(`no webhook endpoint ${created.id}`));
      assert.match(mirador(['webhook', 'test', 'abc'], env).stderr, /"abc" is not a webhook endpoint id/);

      const trail = mirador(['audit', 'hooks', '--action', 'webhook', '--json'], env).json();
      assert.deepEqual(
        trail.map((e: any) => [e.action, e.details.webhook_id, e.details.enabled ?? null]),
        [
          ['webhook.delete', created.id, null],
          ['webhook.update', created.id, true],
          ['webhook.update', created.id, false],
          ['webhook.create', created.id, null],
          ['webhook.create', created.id - 1, null],
        ],
      );
      assert.ok(trail.every((e: any) => e.actor.startsWith('cli:')));
      assert.doesNotMatch(JSON.stringify(trail), /whsec_[0-9A-Za-z]{8}/, 'never the secret');
    } finally {
      await r.close();
    }
  });
});
