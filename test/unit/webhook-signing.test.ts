import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { newSecret, secretKey, sign, signedHeaders } from '../../src/domain/webhook-signing.ts';

const body = JSON.stringify({
  event: 'status_changed',
  order_id: '5d3c1c9e-2f57-4f3f-9a55-6a5d3c1c9e11',
  project_id: '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11',
});

test('matches the Standard Webhooks reference vector', () => {
  // the vector of the Standard Webhooks / Svix libraries
  assert.equal(
    sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  );
});

test('a new secret is whsec_ with 32 random bytes of base64', () => {
  const a = newSecret();
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(secretKey(a).length, 32);
  assert.notEqual(a, newSecret());
});

test('headers verify with the standardwebhooks package, and a changed body or id does not', () => {
  const secret = newSecret();
  const h = signedHeaders([secret], 'c0ffee00-0000-4000-8000-000000000001', new Date(), body);
  assert.equal(h['webhook-id'], 'c0ffee00-0000-4000-8000-000000000001');
  assert.match(h['webhook-timestamp'], /^\d{10}$/);
  assert.match(h['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
  assert.deepEqual(new Webhook(secret).verify(body, { ...h }), JSON.parse(body));
  assert.throws(() => new Webhook(secret).verify(body.replace('status_changed', 'status_changeD'), { ...h }), /No matching signature/);
  assert.throws(() => new Webhook(secret).verify(body, { ...h, 'webhook-id': 'other' }), /No matching signature/);
  assert.throws(() => new Webhook(newSecret()).verify(body, { ...h }), /No matching signature/);
});

test('during a rotation both secrets sign, space-separated, and each verifies alone', () => {
  const fresh = newSecret();
  const old = newSecret();
  const h = signedHeaders([fresh, old], 'id-1', new Date(), body);
  const parts = h['webhook-signature'].split(' ');
  assert.equal(parts.length, 2);
  assert.ok(parts.every((p) => p.startsWith('v1,')));
  assert.notEqual(parts[0], parts[1]);
  assert.ok(new Webhook(fresh).verify(body, { ...h }));
  assert.ok(new Webhook(old).verify(body, { ...h }));
  assert.throws(() => new Webhook(newSecret()).verify(body, { ...h }));
});

test('the timestamp is the given time in seconds, and signing needs a secret', () => {
  const h = signedHeaders([newSecret()], 'id-2', new Date(1_700_000_000_999), body);
  assert.equal(h['webhook-timestamp'], '1700000000');
  assert.throws(() => signedHeaders([], 'id', new Date(), body), /no webhook secret/);
  assert.throws(() => secretKey('whsec_'), /empty/);
});
