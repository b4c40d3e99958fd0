import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { WALLET_A_VALIDATION_HOSTS } from '../../src/wallets/wallet-a-session.ts';
import type { Json } from '../helpers/json.ts';

/**
 * wallet-a-pay merchant validation: the request rules, the allow-list, the sandbox session,
 * and the live call over mutual TLS to a local HTTPS server that requires a client
 * certificate (a throwaway CA and certificates made with the openssl CLI).
 */

let t: TestService;
let dir: string;
const pki: Record<string, string> = {};

function openssl(...args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A key and a certificate signed by the test CA (or self-signed with `self`). */
function issue(name: string, subject: string, ext: string, self = false) {
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
  );
  writeFileSync(join(dir, `${name}.ext`), ext);
  const signer = self ? ['-signkey', `${name}.key`] : ['-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'];
  openssl('x509', '-req', '-in', `${name}.csr`, ...signer, '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`);
  pki[`${name}.key`] = readFileSync(join(dir, `${name}.key`), 'utf8');
  pki[`${name}.crt`] = readFileSync(join(dir, `${name}.crt`), 'utf8');
}

interface Seen {
  body: Json;
  contentType?: string;
  clientSubject?: string;
  path?: string;
}
let provider: Server;
let providerHost: string;
let seen: Seen[] = [];
/** What the provider answers next: a status and body, or no answer at all. */
let answer: { status: number; body: unknown } | 'hang' = { status: 200, body: {} };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-wallet-a-'));
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-subj',
    '/CN=Tender test CA',
    '-days',
    '2',
  );
  pki['ca.crt'] = readFileSync(join(dir, 'ca.crt'), 'utf8');
  issue('server', '/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  issue('merchant', '/CN=merchant.test-shop', 'extendedKeyUsage=clientAuth\n');
  issue('stranger', '/CN=not-from-the-ca', 'extendedKeyUsage=clientAuth\n', true);
  issue('other', '/CN=other', 'extendedKeyUsage=clientAuth\n');

  provider = createServer(
    { key: pki['server.key'], cert: pki['server.crt'], ca: pki['ca.crt'], requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const cert = (req.socket as TLSSocket).getPeerCertificate();
        seen.push({
          body: JSON.parse(raw || 'null'),
          contentType: req.headers['content-type'],
          clientSubject: String(cert?.subject?.CN ?? ''),
          path: req.url,
        });
        if (answer === 'hang') return; // never answers: the caller's timeout decides
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    },
  );
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  providerHost = `localhost:${(provider.address() as AddressInfo).port}`;
  t = await startTestService();
});
after(async () => {
  provider?.closeAllConnections();
  await new Promise((resolve) => provider?.close(resolve));
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const idOf = (projectId: string) => projectId.replace(/-/g, '');
const body = (over: Record<string, unknown> = {}) => ({
  validationUrl: 'https://apple-pay-gateway-cert.apple.com/paymentservices/startSession',
  merchantIdentifier: idOf(t.project.project_id),
  displayName: 'Test shop',
  initiativeContext: 'shop.example.com',
  ...over,
});
const session = (b: unknown, key?: string) => t.api('POST', '/v1/wallet-a-pay/sessions/', b, key ? { key } : {});

describe('session request rules', () => {
  test('each field is required and typed', async () => {
    for (const field of ['validationUrl', 'merchantIdentifier', 'displayName', 'initiativeContext']) {
      const b: Record<string, unknown> = body();
      delete b[field];
      const res = await session(b);
      assert.equal(res.status, 400, field);
      assert.equal(res.body.error.type, 'ValidationError');
      assert.equal(res.body.error.field, field);
    }
    const cases: Array<[Record<string, unknown>, string, RegExp?]> = [
      [{ validationUrl: 'not a url' }, 'validationUrl'],
      [{ validationUrl: 'http://apple-pay-gateway.apple.com/paymentservices/startSession' }, 'validationUrl', /https/],
      [{ validationUrl: 'https://user:pw@apple-pay-gateway.apple.com/x' }, 'validationUrl', /credentials/],
      [{ merchantIdentifier: t.project.project_id }, 'merchantIdentifier', /without hyphens/],
      [{ merchantIdentifier: 'merchant.com.example' }, 'merchantIdentifier'],
      [{ displayName: '   ' }, 'displayName'],
      [{ displayName: 'x'.repeat(65) }, 'displayName'],
      [{ initiativeContext: 'https://shop.example.com/checkout' }, 'initiativeContext', /domain name/],
      [{ initiativeContext: 42 }, 'initiativeContext'],
      [{ initiative: 'web' }, 'initiative', /not a known field/],
    ];
    for (const [over, field, value] of cases) {
      const res = await session(body(over));
      assert.equal(res.status, 400, `${JSON.stringify(over)}: ${res.text}`);
      assert.equal(res.body.error.field, field, JSON.stringify(over));
      if (value) assert.match(res.body.error.value, value);
    }
    assert.equal((await t.api('POST', '/v1/wallet-a-pay/sessions/', body(), { key: null })).status, 401);
  });

  test('a validation host outside the allow-list is refused', async () => {
    for (const url of [
      'https://evil.example/paymentservices/startSession',
      'https://apple-pay-gateway.apple.com.evil.example/x',
      'https://apple.com/x',
      `https://${providerHost}/x`,
    ]) {
      const res = await session(body({ validationUrl: url }));
      assert.equal(res.status, 400, url);
      assert.equal(res.body.error.field, 'validationUrl');
      assert.match(res.body.error.value, /not one of the wallet provider's merchant validation hosts/);
    }
  });

  test('every documented host is allowed', async () => {
    assert.ok(WALLET_A_VALIDATION_HOSTS.length >= 20);
    for (const host of WALLET_A_VALIDATION_HOSTS) {
      const res = await session(body({ validationUrl: `https://${host}/paymentservices/paymentSession` }));
      assert.equal(res.status, 200, host);
    }
  });
});

describe('sandbox validator (test projects)', () => {
  test('answers a session of the provider shape, offline', async () => {
    const res = await session(body());
    assert.equal(res.status, 200, res.text);
    const s = res.body.sessionData;
    assert.deepEqual(Object.keys(s).sort(), [
      'displayName',
      'domainName',
      'epochTimestamp',
      'expiresAt',
      'merchantIdentifier',
      'merchantSessionIdentifier',
      'nonce',
      'operationalAnalyticsIdentifier',
      'pspId',
      'retries',
      'signature',
    ]);
    const hash = createHash('sha256').update(idOf(t.project.project_id)).digest('hex').toUpperCase();
    assert.equal(s.merchantIdentifier, hash);
    assert.equal(s.pspId, hash);
    assert.equal(s.operationalAnalyticsIdentifier, `Test shop:${hash}`);
    assert.equal(s.domainName, 'shop.example.com');
    assert.equal(s.displayName, 'Test shop');
    assert.equal(s.retries, 0);
    assert.ok(Number.isInteger(s.epochTimestamp));
    assert.equal(s.expiresAt - s.epochTimestamp, 3_600_000);
    assert.match(s.merchantSessionIdentifier, /^SSH[0-9A-F]{32}_[0-9A-F]{64}$/);
    assert.match(s.nonce, /^[0-9a-f]{8}$/);
    assert.match(s.signature, /^[0-9a-f]{64}$/);
    const again = await session(body());
    assert.notEqual(again.body.sessionData.merchantSessionIdentifier, s.merchantSessionIdentifier);
    assert.equal(seen.length, 0, 'no network call');
  });
});

describe('live validation over mutual TLS', () => {
  let live: { project_id: string; api_key: string };
  const liveBody = (over: Record<string, unknown> = {}) =>
    body({ merchantIdentifier: idOf(live.project_id), validationUrl: `https://${providerHost}/paymentservices/paymentSession`, ...over });
  const identity = (certificate: string, private_key: string) =>
    t.api('PUT', '/v1/wallet-a-pay/merchant-identity/', { certificate, private_key }, { key: live.api_key });

  before(async () => {
    live = await t.newProject('live');
    t.config.walletA.validationHosts = ['apple-pay-gateway.apple.com', providerHost];
    t.config.walletA.caFile = join(dir, 'ca.crt');
  });

  test('without a merchant identity: Forbidden', async () => {
    const res = await session(liveBody(), live.api_key);
    assert.equal(res.status, 403, res.text);
    assert.match(res.body.error.value, /merchant identity/);
  });

  test('the merchant identity is checked when it is set', async () => {
    assert.equal((await identity('not a certificate', pki['merchant.key'])).body.error?.field, 'certificate');
    assert.equal((await identity(pki['merchant.crt'], 'not a key')).body.error?.field, 'private_key');
    const mismatch = await identity(pki['merchant.crt'], pki['other.key']);
    assert.equal(mismatch.status, 400);
    assert.match(mismatch.body.error.value, /not the key of this certificate/);
    const ok = await identity(pki['merchant.crt'], pki['merchant.key']);
    assert.equal(ok.status, 200, ok.text);
    assert.match(ok.body.subject, /CN=merchant\.test-shop/);
    const stored = await t.db.query<{ private_key_ct: string }>('SELECT private_key_ct FROM wallet_a_identities WHERE project_id = $1', [
      live.project_id,
    ]);
    assert.ok(!stored[0].private_key_ct.includes('PRIVATE KEY'), 'the key is stored sealed');
  });

  test('posts the provider body with the client certificate and answers the session unchanged', async () => {
    const providerSession = {
      epochTimestamp: 1,
      expiresAt: 2,
      merchantSessionIdentifier: 'SSH-from-provider',
      nonce: 'abc',
      signature: '3080',
      extra: { kept: true },
    };
    answer = { status: 200, body: providerSession };
    seen = [];
    const res = await session(liveBody(), live.api_key);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { sessionData: providerSession });
    assert.equal(seen.length, 1);
    assert.equal(seen[0].path, '/paymentservices/paymentSession');
    assert.equal(seen[0].clientSubject, 'merchant.test-shop');
    assert.match(seen[0].contentType ?? '', /^application\/json/);
    assert.deepEqual(seen[0].body, {
      merchantIdentifier: idOf(live.project_id),
      displayName: 'Test shop',
      initiative: 'web',
      initiativeContext: 'shop.example.com',
    });
  });

  test('the provider refusing, an unknown client certificate and a timeout are upstream errors', async () => {
    answer = { status: 400, body: { statusMessage: 'Payment Services Exception merchantId=... unknown' } };
    const refused = await session(liveBody(), live.api_key);
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.body.error.type, 'FailedToFetchTransactionInformation');
    assert.match(refused.body.error.value, /HTTP 400/);

    answer = 'hang';
    t.config.walletA.timeoutMs = 300;
    const slow = await session(liveBody(), live.api_key);
    t.config.walletA.timeoutMs = 10_000;
    assert.equal(slow.status, 504, slow.text);
    assert.match(slow.body.error.value, /within 300 ms/);

    answer = { status: 200, body: {} };
    seen = [];
    assert.equal((await identity(pki['stranger.crt'], pki['stranger.key'])).status, 200);
    const stranger = await session(liveBody(), live.api_key);
    assert.equal(stranger.status, 502, stranger.text);
    assert.equal(seen.length, 0, 'the provider refused the handshake');
  });
});
