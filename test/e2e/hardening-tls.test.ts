// TLS (issue 22): native HTTPS from TLS_CERT_FILE/TLS_KEY_FILE with a self-signed certificate
// made by openssl here: TLS 1.1 refused, 1.2 and 1.3 served with HSTS. Behind a terminator
// (TRUST_PROXY), X-Forwarded-Proto decides; live projects refuse requests that came in clear.
import { selfSigned } from '../helpers/self-signed.ts';
import { test, before, after } from 'node:test';
import type { Json } from '../helpers/json.ts';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect, type SecureVersion } from 'node:tls';
import { basic, request, startTestService, type TestService } from '../helpers/service.ts';

const { dir, cert, key, pem: ca } = selfSigned('tender-tls-');

let tls: TestService;
let proxied: TestService;
before(async () => {
  tls = await startTestService({ env: { TLS_CERT_FILE: cert, TLS_KEY_FILE: key, LIVE_REQUIRES_TLS: 'true' } });
  proxied = await startTestService({ env: { TRUST_PROXY: 'true', LIVE_REQUIRES_TLS: 'true' } });
});
after(async () => {
  await tls?.close();
  await proxied?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A handshake offering exactly `version`; resolves the protocol agreed, rejects when refused. */
function handshake(version: SecureVersion): Promise<string> {
  const { port } = new URL(tls.url);
  return new Promise((resolve, reject) => {
    // SECLEVEL=0 lets this client offer TLS 1.1 at all, so a refusal is the server's
    const socket = connect(
      { host: '127.0.0.1', port: Number(port), ca, minVersion: version, maxVersion: version, ciphers: 'DEFAULT@SECLEVEL=0' },
      () => {
        const protocol = socket.getProtocol() ?? '';
        socket.end();
        resolve(protocol);
      },
    );
    socket.on('error', reject);
  });
}

/** GET over HTTPS with the test certificate trusted. */
function httpsGet(
  path: string,
  auth: string,
  version: SecureVersion = 'TLSv1.3',
): Promise<{ status: number; headers: Record<string, unknown>; body: Json }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${tls.url}${path}`,
      { ca, minVersion: version, maxVersion: version, headers: { authorization: auth } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('the service URL is https when TLS files are set', () => {
  assert.match(tls.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.match(tls.config.vaultUrl, /^https:/);
});

test('a TLS 1.1 handshake is refused; TLS 1.2 and 1.3 are served', async () => {
  await assert.rejects(handshake('TLSv1.1'));
  assert.equal(await handshake('TLSv1.2'), 'TLSv1.2');
  assert.equal(await handshake('TLSv1.3'), 'TLSv1.3');
});

test('answers over HTTPS carry HSTS; a live project is served over HTTPS', async () => {
  const live = await tls.newProject('live');
  for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
    const res = await httpsGet('/v1/merchants/self/projects/self/', basic(live.api_key), version);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.id, live.project_id);
    assert.equal(res.headers['strict-transport-security'], 'max-age=31536000');
  }
  const refused = await httpsGet('/v1/merchants/self/projects/self/', basic('live_wrong'));
  assert.equal(refused.status, 401);
  assert.equal(refused.headers['strict-transport-security'], 'max-age=31536000', 'error answers too');
});

test('behind a terminator: a live project over plain HTTP is refused with the error body; X-Forwarded-Proto: https is served with HSTS', async () => {
  const live = await proxied.newProject('live');
  const url = `${proxied.url}/v1/merchants/self/projects/self/`;
  const plain = await request(url, 'GET', undefined, { authorization: basic(live.api_key) });
  assert.equal(plain.status, 403, plain.text);
  assert.equal(plain.body.error.type, 'Forbidden');
  assert.equal(plain.body.error.status, 403);
  assert.match(plain.body.error.value, /HTTPS/);
  assert.equal(plain.headers.get('strict-transport-security'), null);
  const forwardedHttp = await request(url, 'GET', undefined, { authorization: basic(live.api_key), 'x-forwarded-proto': 'http' });
  assert.equal(forwardedHttp.status, 403);
  const secure = await request(url, 'GET', undefined, { authorization: basic(live.api_key), 'x-forwarded-proto': 'https' });
  assert.equal(secure.status, 200, secure.text);
  assert.equal(secure.headers.get('strict-transport-security'), 'max-age=31536000');
  // the vault is refused to a live project in clear as well
  const vault = await request(
    `${proxied.config.vaultUrl}/v1/cards/`,
    'POST',
    { pan: '4111111111111111', expiry: '122040', setup_token: '00000000-0000-4000-8000-000000000000' },
    { authorization: basic(live.api_key) },
  );
  assert.equal(vault.status, 403, vault.text);
  // a test project may use plain HTTP (a laptop, a CI job)
  const testProject = await request(url, 'GET', undefined, { authorization: basic(proxied.project.api_key) });
  assert.equal(testProject.status, 200, testProject.text);
});

test("behind a terminator: a live project's hosted payment page in clear is refused (a 403 page); over HTTPS it is served", async () => {
  const live = await proxied.newProject('live');
  const https = { authorization: basic(live.api_key), 'x-forwarded-proto': 'https' };
  const order = await request(`${proxied.url}/v1/orders/`, 'POST', { currency: 'EUR', amount: 100 }, https);
  assert.equal(order.status, 201, order.text);
  const plain = await request(`${proxied.url}/pay/${order.body.id}/`, 'GET');
  assert.equal(plain.status, 403);
  assert.match(plain.headers.get('content-type') ?? '', /text\/html/);
  const secure = await request(`${proxied.url}/pay/${order.body.id}/`, 'GET', undefined, { 'x-forwarded-proto': 'https' });
  assert.equal(secure.status, 200);
  assert.equal(secure.headers.get('strict-transport-security'), 'max-age=31536000');
});

test('without TRUST_PROXY, X-Forwarded-Proto is not believed', async () => {
  const t = await startTestService({ env: { LIVE_REQUIRES_TLS: 'true' } });
  try {
    const live = await t.newProject('live');
    const res = await request(`${t.url}/v1/merchants/self/projects/self/`, 'GET', undefined, {
      authorization: basic(live.api_key),
      'x-forwarded-proto': 'https',
    });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.error.type, 'Forbidden');
  } finally {
    await t.close();
  }
});
