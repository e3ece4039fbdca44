/** `verifyWebhook` (contract §7): accepts Mirador's signature, refuses anything else with a typed reason. */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { verifyWebhook, WebhookVerificationError } from '../src/index.js';

const secret = 'whsec_0123456789ABCDEFGHIJabcdefghijxyz';
const body = '{"id":"evt_1","type":"import.published","created_at":"2026-11-21T10:15:30.123Z","data":{"kind":"clientes","import_id":7,"snapshot":"abc","counts":{"inserted":1,"updated":0,"unchanged":0,"deleted":0}}}';
const now = new Date('2026-11-21T10:16:00Z');
const t = Math.floor(now.getTime() / 1000);
const sign = (b: string, at = t, s = secret) => `t=${at},v1=${createHmac('sha256', s).update(`${at}.${b}`).digest('hex')}`;

const reason = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof WebhookVerificationError);
    return err.reason;
  }
  assert.fail('accepted');
};

test('a genuine delivery is accepted and its event returned, from a string or bytes', () => {
  assert.equal(verifyWebhook(body, sign(body), secret, { now }).data.kind, 'clientes');
  assert.equal(verifyWebhook(Buffer.from(body), sign(body), secret, { now }).id, 'evt_1');
  // Another v1 (a rotated secret) beside the right one does not matter.
  assert.equal(verifyWebhook(body, `${sign(body, t, 'whsec_old')},${sign(body).split(',')[1]}`, secret, { now }).id, 'evt_1');
});

test('refusals say why', () => {
  assert.equal(reason(() => verifyWebhook(body, undefined, secret, { now })), 'missing_signature');
  assert.equal(reason(() => verifyWebhook(body, 'v1=abc', secret, { now })), 'malformed_signature');
  assert.equal(reason(() => verifyWebhook(body, `t=${t}`, secret, { now })), 'malformed_signature');
  assert.equal(reason(() => verifyWebhook(`${body} `, sign(body), secret, { now })), 'signature_mismatch');
  assert.equal(reason(() => verifyWebhook(body, sign(body), `${secret}x`, { now })), 'signature_mismatch');
  assert.equal(reason(() => verifyWebhook(body, sign(body, t - 301), secret, { now })), 'timestamp_out_of_tolerance');
  assert.equal(reason(() => verifyWebhook(body, sign(body, t + 301), secret, { now })), 'timestamp_out_of_tolerance');
  assert.equal(verifyWebhook(body, sign(body, t - 300), secret, { now }).id, 'evt_1', 'the window is inclusive');
  assert.equal(verifyWebhook(body, sign(body, t - 3600), secret, { now, toleranceSeconds: 3600 }).id, 'evt_1');
  assert.equal(reason(() => verifyWebhook('not json', sign('not json'), secret, { now })), 'invalid_body');
});
