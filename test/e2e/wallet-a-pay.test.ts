import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { walletOrder as walletOrderOf, hostedPage, deviceConfig } from '../helpers/wallets.ts';
import { startTestService, validOrder, request, type TestService } from '../helpers/service.ts';
import { makeSandboxChain, type SandboxChain } from '../../src/wallets/wallet-a-pki.ts';
import { sealPaymentToken } from '../../src/wallets/wallet-a-token.ts';
import { simulator } from '../../src/acquirer/simulator/index.ts';

/** Live projects whose acquirer is the simulator, for as long as a test needs (the service asks through its liveConnector). */
const simulatedLive = new Set<string>();
const liveConnector = (project: { id: string }) => (simulatedLive.has(project.id) ? simulator : undefined);

/**
 * wallet-a-pay payments over HTTP: the payment processing key, the pay step with tokens sealed
 * here under test and production roots the service is configured to trust, each refusal, the
 * setupToken rules, and the hosted page (sandbox sheet, device button routes).
 */

const FROM = new Date('2020-01-01T00:00:00Z');
const UNTIL = new Date('2090-01-01T00:00:00Z');
const testChain = makeSandboxChain('wallet-a test', FROM, UNTIL); // in WALLET_A_TEST_ROOT_CA_FILE
const prodChain = makeSandboxChain('wallet-a production', FROM, UNTIL); // in WALLET_A_ROOT_CA_FILE
const strangerChain = makeSandboxChain('wallet-a stranger', FROM, UNTIL); // trusted by nobody

let t: TestService;
let dir: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-wallet-a-'));
  const testFile = join(dir, 'test-roots.pem');
  const prodFile = join(dir, 'roots.pem');
  writeFileSync(testFile, testChain.root);
  writeFileSync(prodFile, prodChain.root);
  t = await startTestService({
    liveConnector,
    config: { walletA: { validationHosts: [], timeoutMs: 2000, rootCaFile: prodFile, testRootCaFile: testFile } },
  });
});
after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const payUrl = (o: string, txn: string) => `${t.url}/pay/${o}/select-payment-method/wallet-a-pay/${txn}/`;
const pay = (o: string, txn: string, body: Record<string, unknown>) => request(payUrl(o, txn), 'POST', body);
const vaultRows = async (txnId: string) =>
  (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM vault_cards WHERE transaction_id = $1', [txnId]))[0].n;

const walletOrder = (key = t.project.api_key, over: Record<string, unknown> = {}) => walletOrderOf(t, 'wallet-a-pay', key, over);

async function processingOf(key = t.project.api_key) {
  const res = await t.api('GET', '/v1/wallet-a-pay/payment-processing/', undefined, { key });
  assert.equal(res.status, 200, res.text);
  return res.body as { merchant_identifier: string; public_key: string; public_key_hash: string };
}

interface SealOpts {
  key?: string;
  chain?: SandboxChain;
  amount?: number;
  currency?: string;
  pan?: string;
  type?: string;
  signingTime?: Date;
  merchantIdentifier?: string;
  recipient?: string;
}

/** A token as the device makes it, for the project's processing key. */
async function sealed(o: SealOpts = {}) {
  const proc = await processingOf(o.key);
  const chain = o.chain ?? testChain;
  const payload = {
    applicationPrimaryAccountNumber: o.pan ?? '4111111111111111',
    applicationExpirationDate: '311231',
    currencyCode: o.currency ?? '978',
    transactionAmount: o.amount ?? 1995,
    deviceManufacturerIdentifier: '040010030273',
    paymentDataType: o.type ?? '3DSecure',
    paymentData: { onlinePaymentCryptogram: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=', eciIndicator: '5' },
  };
  const paymentData = sealPaymentToken(payload, {
    signer: { leaf: chain.leaf, intermediate: chain.intermediate, privateKey: chain.leafKey },
    recipient: o.recipient ?? proc.public_key,
    merchantIdentifier: o.merchantIdentifier ?? proc.merchant_identifier,
    signingTime: o.signingTime ?? new Date(),
  });
  return {
    paymentData,
    paymentMethod: { displayName: 'Visa 1111', network: 'Visa', type: 'debit' },
    transactionIdentifier: paymentData.header.transactionId.toUpperCase(),
  };
}

function assertRefused(res: Awaited<ReturnType<typeof pay>>, code: string, status = 400) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error.type, 'ValidationError');
  assert.equal(res.body.error.field, 'paymentToken');
  assert.equal(res.body.error.code, code);
  assert.match(res.body.error.value, /^paymentToken refused: /);
}

describe('payment processing key', () => {
  test('each project has one, named by the SHA-256 of its public key', async () => {
    const p = await processingOf();
    assert.equal(p.merchant_identifier, t.project.project_id.replace(/-/g, ''));
    assert.match(p.public_key, /^-----BEGIN PUBLIC KEY-----/);
    const spki = createPublicKey(p.public_key).export({ format: 'der', type: 'spki' });
    assert.equal(p.public_key_hash, createHash('sha256').update(spki).digest('base64'));
    assert.deepEqual(await processingOf(), p, 'stable');
    const other = await t.newProject('test');
    assert.notEqual((await processingOf(other.api_key)).public_key_hash, p.public_key_hash);
    const [row] = await t.db.query<{ private_key_ct: string }>(
      "SELECT private_key_ct FROM wallet_a_keys WHERE project_id = $1 AND kind = 'processing'",
      [t.project.project_id],
    );
    assert.doesNotMatch(row.private_key_ct, /BEGIN|PRIVATE/, 'stored sealed');
  });

  test('an imported key replaces it: tokens for the old key are then refused', async () => {
    const p = await t.newProject('test');
    const { txn, order, setupToken } = await walletOrder(p.api_key);
    const old = await sealed({ key: p.api_key });
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const res = await t.api(
      'PUT',
      '/v1/wallet-a-pay/payment-processing/',
      { private_key: privateKey.export({ format: 'pem', type: 'pkcs8' }) },
      { key: p.api_key },
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.public_key, publicKey.export({ format: 'pem', type: 'spki' }));
    assertRefused(await pay(order.id, txn.id, { paymentToken: old, setupToken }), 'unknown_key');
    const paid = await pay(order.id, txn.id, { paymentToken: await sealed({ key: p.api_key }), setupToken });
    assert.equal(paid.status, 200, paid.text);
    assert.equal(paid.body.is_successful, true);
  });

  test('only an EC P-256 PEM key is imported', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey.export({ format: 'pem', type: 'pkcs8' });
    const before = await processingOf();
    for (const private_key of ['not a key', rsa, p384]) {
      const res = await t.api('PUT', '/v1/wallet-a-pay/payment-processing/', { private_key });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.field, 'private_key');
    }
    const extra = await t.api('PUT', '/v1/wallet-a-pay/payment-processing/', { private_key: p384, public_key: 'x' });
    assert.equal(extra.status, 400);
    assert.deepEqual(await processingOf(), before, 'unchanged');
    assert.equal((await t.api('GET', '/v1/wallet-a-pay/payment-processing/', undefined, { key: 'wrong' })).status, 401);
  });
});

describe('pay step', () => {
  test('a token pays at once with its cryptogram: completed, liability shift, the card vaulted', async () => {
    const { order, txn, setupToken } = await walletOrder();
    const res = await pay(order.id, txn.id, { paymentToken: await sealed(), setupToken, browser_info_language: 'nl-NL' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      is_successful: true,
      redirect_url: `https://shop.example/return?order_id=${order.id}&project_id=${t.project.project_id}`,
      reason: '',
    });
    const got = (await t.api('GET', `/v1/orders/${order.id}/`)).body;
    assert.equal(got.status, 'completed');
    assert.equal(got.transactions[0].payment_method, 'wallet-a-pay');
    assert.equal(got.transactions[0].payment_method_brand, 'visa');
    assert.equal(got.transactions[0].payment_method_details.truncated_pan, '411111******1111');
    assert.equal(got.transactions[0].payment_method_details.liability_shift, true);
    assert.equal(await vaultRows(txn.id), 1);
  });

  test('the bare paymentData is taken too', async () => {
    const { order, txn, setupToken } = await walletOrder();
    const res = await pay(order.id, txn.id, { paymentToken: (await sealed()).paymentData, setupToken });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.is_successful, true);
  });

  test('a declining card: is_successful false with the reason', async () => {
    const { order, txn, setupToken } = await walletOrder();
    const res = await pay(order.id, txn.id, { paymentToken: await sealed({ pan: '4000000000000002' }), setupToken });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.is_successful, false);
    assert.notEqual(res.body.reason, '');
  });

  test('each refused token has its code, and nothing is vaulted or started', async () => {
    const { order, txn, setupToken } = await walletOrder();
    const good = await sealed();
    const altered = structuredClone(good);
    altered.paymentData.data = Buffer.from(Buffer.from(altered.paymentData.data, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString(
      'base64',
    );
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const cases: [string, unknown][] = [
      ['invalid_format', { paymentData: { version: 'EC_v1' } }],
      ['unsupported_version', { paymentData: { ...good.paymentData, version: 'RSA_v1' } }],
      ['invalid_signature', altered],
      ['untrusted_certificate', await sealed({ chain: strangerChain })],
      ['stale_token', await sealed({ signingTime: new Date(Date.now() - 10 * 60_000) })],
      ['unknown_key', await sealed({ recipient: other })],
      ['invalid_tag', await sealed({ merchantIdentifier: 'someoneelse' })],
      ['invalid_payload', await sealed({ type: 'EMV' })],
      ['amount_mismatch', await sealed({ amount: 1 })],
      ['amount_mismatch', await sealed({ currency: '840' })],
    ];
    for (const [code, paymentToken] of cases) assertRefused(await pay(order.id, txn.id, { paymentToken, setupToken }), code);
    assert.equal(await vaultRows(txn.id), 0);
    const got = (await t.api('GET', `/v1/orders/${order.id}/`)).body;
    assert.equal(got.transactions[0].status, 'new');
    // and the transaction still pays
    assert.equal((await pay(order.id, txn.id, { paymentToken: good, setupToken })).body.is_successful, true);
  });

  test('a token pays once', async () => {
    const a = await walletOrder();
    const b = await walletOrder();
    const token = await sealed();
    assert.equal((await pay(a.order.id, a.txn.id, { paymentToken: token, setupToken: a.setupToken })).status, 200);
    assertRefused(await pay(b.order.id, b.txn.id, { paymentToken: token, setupToken: b.setupToken }), 'token_already_used');
    assert.equal(await vaultRows(b.txn.id), 0);
  });

  test('the setupToken: another transaction’s, or used, is refused and vaults nothing', async () => {
    const a = await walletOrder();
    const b = await walletOrder();
    const foreign = await pay(a.order.id, a.txn.id, { paymentToken: await sealed(), setupToken: b.setupToken });
    assert.equal(foreign.status, 400, foreign.text);
    assert.equal(foreign.body.error.field, 'setupToken');
    assert.equal(await vaultRows(a.txn.id), 0);
    assert.equal((await pay(a.order.id, a.txn.id, { paymentToken: await sealed(), setupToken: a.setupToken })).status, 200);
    const again = await pay(a.order.id, a.txn.id, { paymentToken: await sealed(), setupToken: a.setupToken });
    assert.equal(again.status, 409, again.text);
    assert.equal(again.body.error.field, 'setupToken');
    assert.equal(await vaultRows(a.txn.id), 1);
  });

  test('a setupToken past its 300 seconds is refused and vaults nothing', async () => {
    const p = await t.newProject('test');
    const o = await walletOrder(p.api_key);
    await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT6M' }, { key: p.api_key });
    // signed at the project's (advanced) clock, so only the setupToken is out of date
    const paymentToken = await sealed({ key: p.api_key, signingTime: new Date(Date.now() + 6 * 60_000) });
    const res = await pay(o.order.id, o.txn.id, { paymentToken, setupToken: o.setupToken });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.field, 'setupToken');
    assert.match(res.body.error.value, /setupToken expired/);
    assert.equal(await vaultRows(o.txn.id), 0);
  });

  test('the body is strict; the transaction must be a wallet-a-pay one of the order', async () => {
    const { order, txn, setupToken } = await walletOrder();
    const token = await sealed();
    const bad: [Record<string, unknown>, string][] = [
      [{ setupToken }, 'paymentToken'],
      [{ paymentToken: 'text', setupToken }, 'paymentToken'],
      [{ paymentToken: token }, 'setupToken'],
      [{ paymentToken: token, setupToken: 'nope' }, 'setupToken'],
      [{ paymentToken: token, setupToken, extra: 1 }, 'extra'],
      [{ paymentToken: token, setupToken, browser_info_color_depth: 0 }, 'browser_info_color_depth'],
    ];
    for (const [body, field] of bad) {
      const res = await pay(order.id, txn.id, body);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.type, 'ValidationError');
      assert.match(res.body.error.field, new RegExp(field));
    }
    const b = await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: 'wallet-b-pay' }] }));
    const wrong = await pay(b.body.id, b.body.transactions[0].id, {
      paymentToken: token,
      setupToken: b.body.transactions[0].payment_method_details.setup_token,
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.field, 'transaction_id');
    assert.equal((await pay(b.body.id, txn.id, { paymentToken: token, setupToken })).status, 404, 'another order');
    assert.equal(await vaultRows(txn.id), 0);
  });

  test('trust: test projects take test and production roots, live projects production only', async () => {
    const live = await t.newProject('live');
    const o = await walletOrder(live.api_key);
    assertRefused(
      await pay(o.order.id, o.txn.id, { paymentToken: await sealed({ key: live.api_key }), setupToken: o.setupToken }),
      'untrusted_certificate',
    );
    simulatedLive.add(live.project_id);
    try {
      const res = await pay(o.order.id, o.txn.id, {
        paymentToken: await sealed({ key: live.api_key, chain: prodChain }),
        setupToken: o.setupToken,
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.is_successful, true);
    } finally {
      simulatedLive.delete(live.project_id);
    }
    const testOrder = await walletOrder();
    assert.equal(
      (
        await pay(testOrder.order.id, testOrder.txn.id, {
          paymentToken: await sealed({ chain: prodChain }),
          setupToken: testOrder.setupToken,
        })
      ).status,
      200,
    );
  });
});

describe('hosted page', () => {
  const page = (path: string) => hostedPage(t, path);
  const configOf = (html: string) => deviceConfig(html, 'wallet-a-pay');
  const form = (url: string, fields: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  const csrfIn = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

  test('test projects: the sandbox sheet pays with a token signed by the project’s sandbox chain', async () => {
    const o = await t.api('POST', '/v1/orders/', validOrder());
    const p = await page(`/pay/${o.body.id}/`);
    const start = new RegExp(
      `<form method="post" action="/pay/${o.body.id}/wallet-a-pay/sheet/"><input type="hidden" name="csrf" value="([^"]+)">`,
    ).exec(p.html);
    assert.ok(start, 'the sandbox button');
    assert.doesNotMatch(p.html, /data-wallet="wallet-a-pay"/, 'no device button in test projects');
    const started = await form(`${t.url}/pay/${o.body.id}/wallet-a-pay/sheet/`, { csrf: start[1] });
    assert.equal(started.status, 303);
    const sheetPath = started.headers.get('location')!;
    assert.match(sheetPath, new RegExp(`^/pay/${o.body.id}/wallet-a-pay/[0-9a-f-]{36}/sheet/$`));
    const sheet = await page(sheetPath);
    assert.equal(sheet.status, 200);
    assert.match(sheet.html, /data-wallet-sheet="wallet-a-pay"/);
    assert.doesNotMatch(sheet.html, /name="auth_method"/, 'always on the device');
    const forged = await form(`${t.url}${sheetPath}`, { csrf: 'x', card: '0' });
    assert.equal(forged.status, 303, 'a forged form goes back to the sheet (POST/redirect/GET), paying nothing');
    assert.equal(forged.headers.get('location'), sheetPath);
    assert.notEqual((await t.api('GET', `/v1/orders/${o.body.id}/`)).body.status, 'completed');
    const paid = await form(`${t.url}${sheetPath}`, { csrf: csrfIn(sheet.html), card: '0' });
    assert.equal(paid.status, 303, await paid.text());
    assert.equal(paid.headers.get('location'), `https://shop.example/return?order_id=${o.body.id}&project_id=${t.project.project_id}`);
    const got = (await t.api('GET', `/v1/orders/${o.body.id}/`)).body;
    assert.equal(got.status, 'completed');
    assert.equal(got.transactions[0].payment_method, 'wallet-a-pay');
    assert.equal(got.transactions[0].payment_method_details.liability_shift, true);
    const [key] = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM wallet_a_keys WHERE project_id = $1 AND kind = 'sandbox_signer'",
      [t.project.project_id],
    );
    assert.equal(key.n, 1);
  });

  test('no wallet-a button without the method; orders without a billing address have it (the sheet asks for the address)', async () => {
    const noBilling = await page(`/pay/${(await t.api('POST', '/v1/orders/', validOrder({ customer: undefined }))).body.id}/`);
    assert.match(noBilling.html, /wallet-a-pay\/sheet/);
    const cardOnly = await page(`/pay/${(await t.api('POST', '/v1/orders/', validOrder({ payment_methods: ['credit-card'] }))).body.id}/`);
    assert.doesNotMatch(cardOnly.html, /wallet-a-pay/);
  });

  test('live projects: a hidden device button, its payment request, merchant validation and the device pay route', async () => {
    const live = await t.newProject('live');
    const o = await t.api('POST', '/v1/orders/', validOrder(), { key: live.api_key });
    const p = await page(`/pay/${o.body.id}/`);
    assert.match(p.html, /<div data-wallet="wallet-a-pay" data-config="[^"]+" hidden>/);
    assert.doesNotMatch(p.html, /wallet-a-pay\/sheet/, 'no sandbox in live projects');
    assert.match(p.csp, /script-src 'self'/);
    const cfg = configOf(p.html);
    const wallet = (await request(`${t.url}${cfg.config_url}`, 'GET')).body;
    assert.deepEqual(wallet, {
      version: 3,
      payment_request: {
        countryCode: 'NL',
        currencyCode: 'EUR',
        merchantCapabilities: ['supports3DS'],
        supportedNetworks: ['amex', 'masterCard', 'visa'],
        total: { label: 'Shop live', amount: '19.95', type: 'final' },
      },
    });
    // merchant validation goes through the session rules: a live project without a merchant identity is refused
    const host = await request(`${t.url}${cfg.session_url}`, 'POST', {
      csrf: cfg.csrf,
      validationUrl: 'https://evil.example/startSession',
    });
    assert.equal(host.status, 400, host.text);
    assert.equal(host.body.error.field, 'validationUrl');
    const noIdentity = await request(`${t.url}${cfg.session_url}`, 'POST', {
      csrf: cfg.csrf,
      validationUrl: 'https://apple-pay-gateway.apple.com/paymentservices/startSession',
    });
    assert.equal(noIdentity.status, 403, noIdentity.text);
    const forgedSession = await request(`${t.url}${cfg.session_url}`, 'POST', {
      csrf: 'x',
      validationUrl: 'https://apple-pay-gateway.apple.com/paymentservices/startSession',
    });
    assert.equal(forgedSession.status, 403);

    const token = await sealed({ key: live.api_key, chain: prodChain });
    const forged = await request(`${t.url}${cfg.pay_url}`, 'POST', {
      csrf: `${cfg.csrf.split('.')[0]}.${'A'.repeat(43)}`,
      paymentToken: token,
    });
    assert.equal(forged.status, 403);
    assert.equal(
      (await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: live.api_key })).body.transactions.length,
      0,
      'nothing started',
    );
    simulatedLive.add(live.project_id);
    try {
      const res = await request(`${t.url}${cfg.pay_url}`, 'POST', {
        csrf: cfg.csrf,
        paymentToken: token,
        browser_info_java_enabled: false,
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.is_successful, true);
      const paid = (await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: live.api_key })).body;
      assert.equal(paid.status, 'completed');
      assert.equal(paid.transactions[0].id, res.body.transaction_id);
    } finally {
      simulatedLive.delete(live.project_id);
    }
  });

  test('a wallet-a transaction’s payment_url offers the sandbox sheet', async () => {
    const o = await t.api('POST', '/v1/orders/', validOrder());
    const started = (await t.api('POST', `/v1/orders/${o.body.id}/transactions/`, { payment_method: 'wallet-a-pay' })).body.transactions[0];
    const txnId = started.id;
    const p = await page(new URL(started.payment_url).pathname);
    assert.equal(p.status, 200);
    assert.match(p.html, new RegExp(`href="/pay/${o.body.id}/wallet-a-pay/${txnId}/sheet/"`), 'the payment_url offers the sheet');
  });
});
