import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { hostedPage, deviceConfig } from '../helpers/wallets.ts';
import { validOrder, request, basic, type TestService } from '../helpers/service.ts';
import { BROWSER, prodRoot, startWalletBService, walletBClient } from '../helpers/wallet-b.ts';
import { findProject, updateProjectSettings } from '../../src/store/platform/projects.ts';
import { settingsOf } from '../../src/domain/project.ts';
import { simulator } from '../../src/acquirer/simulator/index.ts';

/** Live projects whose acquirer is the simulator, for as long as a test needs (the service asks through its liveConnector). */
const simulatedLive = new Set<string>();
const liveConnector = (project: { id: string }) => (simulatedLive.has(project.id) ? simulator : undefined);

/**
 * wallet-b-pay payments over HTTP: the pay step with tokens from the token service and by the
 * decrypted payload flow, the billing address wallet orders need, and the hosted page (sandbox
 * sheet, device button). The token service: wallet-b.test.ts.
 */

let t: TestService;
before(async () => {
  t = await startWalletBService({ liveConnector });
});
after(async () => t?.close());

const { tokenize, pay, walletOrder, recipientOf, sealed } = walletBClient(() => t);

describe('pay step', () => {
  async function tokenized(card: Parameters<typeof sealed>[0] = {}, over: Record<string, unknown> = {}) {
    const o = await walletOrder(undefined, over);
    const res = await tokenize({ walletBPayMessage: await sealed(card), setupToken: o.setupToken, transactionId: o.txn.id });
    assert.equal(res.status, 200, res.text);
    return { ...o, token: res.body };
  }
  const getOrder = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;

  test('CRYPTOGRAM_3DS is authorized at once, with liability shift', async () => {
    const { order, txn, token } = await tokenized();
    const res = await pay(order.id, txn.id, { ...token, ...BROWSER });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      is_successful: true,
      redirect_url: `https://shop.example/return?order_id=${order.id}&project_id=${t.project.project_id}`,
      reason: '',
    });
    const o = await getOrder(order.id);
    assert.equal(o.status, 'completed');
    const [x] = o.transactions;
    assert.equal(x.status, 'accepted');
    assert.equal(x.payment_method, 'wallet-b-pay');
    assert.equal(x.payment_method_brand, 'visa');
    assert.equal(x.payment_method_details.liability_shift, true);
    assert.equal(x.payment_method_details.truncated_pan, '411111******1111');
    assert.equal(x.payment_method_details.vault_token, token.vaultToken);
    assert.equal(x.outcomes.three_d_secure.eci, '05');

    const twice = await pay(order.id, txn.id, { ...token });
    assert.equal(twice.status, 409);
    assert.equal(twice.body.error.type, 'TransactionAlreadyStarted');
  });

  test('PAN_ONLY goes through 3-D Secure, then completes', async () => {
    const { order, txn, token } = await tokenized({ authMethod: 'PAN_ONLY' });
    assert.deepEqual([token.cryptogram, token.eciIndicator], ['', '']);
    const res = await pay(order.id, txn.id, { ...token, ...BROWSER });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { is_successful: true, redirect_url: `${t.url}/pay/3ds/${txn.id}/`, reason: 'authentication_required' });
    assert.equal((await getOrder(order.id)).status, 'processing');
    const threeDs = await request(res.body.redirect_url, 'GET');
    assert.equal(threeDs.status, 302);
    assert.equal(threeDs.headers.get('location'), `https://shop.example/return?order_id=${order.id}&project_id=${t.project.project_id}`);
    const o = await getOrder(order.id);
    assert.equal(o.status, 'completed');
    assert.equal(o.transactions[0].status, 'accepted');
    assert.equal(o.transactions[0].payment_method_details.liability_shift, true);
  });

  test('a declined card: is_successful false with the reason, the order ends in error', async () => {
    const { order, txn, token } = await tokenized({ pan: '4000000000000002' }, { failure_url: 'https://shop.example/failed' });
    const res = await pay(order.id, txn.id, token);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.is_successful, false);
    assert.equal(res.body.reason, 'declined');
    assert.match(res.body.redirect_url, /^https:\/\/shop\.example\/failed\?order_id=/);
    assert.equal((await getOrder(order.id)).status, 'error');
  });

  test('decrypted payload flow: the merchant vaults pan and expiry, then pays with the vault token', async () => {
    for (const [cryptogram, eciIndicator] of [
      ['AgAAAAAABk4DWZ4C28yUQAAAAAA=', '05'],
      ['', ''],
    ]) {
      const o = await walletOrder();
      const stored = await request(
        `${t.config.vaultUrl}/v1/cards/`,
        'POST',
        { pan: '5555555555554444', expiry: '122030', setup_token: o.setupToken },
        { authorization: basic(t.project.api_key) },
      );
      assert.equal(stored.status, 201, stored.text);
      const res = await pay(o.order.id, o.txn.id, { vaultToken: stored.body.vault_token, cryptogram, eciIndicator, ...BROWSER });
      assert.equal(res.status, 200, res.text);
      if (cryptogram) {
        assert.equal(res.body.is_successful, true);
        const x = (await getOrder(o.order.id)).transactions[0];
        assert.equal(x.status, 'accepted');
        assert.equal(x.payment_method_brand, 'mastercard');
        assert.equal(x.payment_method_details.liability_shift, true);
      } else {
        assert.equal(res.body.redirect_url, `${t.url}/pay/3ds/${o.txn.id}/`);
        await request(res.body.redirect_url, 'GET');
        assert.equal((await getOrder(o.order.id)).status, 'completed');
      }
    }
  });

  test('browser_info fields are typed; the body is strict', async () => {
    const { order, txn, token } = await tokenized();
    const bad: Array<[string, unknown]> = [
      ['browser_info_screen_width', '1920'],
      ['browser_info_screen_height', 1080.5],
      ['browser_info_color_depth', true],
      ['browser_info_user_agent', 42],
      ['browser_info_time_zone_offset', '-60'],
      ['browser_info_language', 'not a language tag'],
      ['browser_info_java_enabled', 'false'],
      ['vaultToken', 'not-a-uuid'],
      ['eciIndicator', '5'],
      ['unknown_field', 1],
    ];
    for (const [field, value] of bad) {
      const res = await pay(order.id, txn.id, { ...token, ...BROWSER, [field]: value });
      assert.equal(res.status, 400, `${field}: ${res.text}`);
      assert.equal(res.body.error.type, 'ValidationError');
      assert.equal(res.body.error.field, field);
    }
    const missing = await pay(order.id, txn.id, { cryptogram: '' });
    assert.equal(missing.body.error.field, 'vaultToken');
    // nothing started
    assert.equal((await getOrder(order.id)).transactions[0].status, 'new');
  });

  test('the vault token, cryptogram and ids must belong together', async () => {
    const a = await tokenized();
    const b = await tokenized({ authMethod: 'PAN_ONLY' });
    const cases: Array<[string, string, Record<string, unknown>, number, string]> = [
      [a.order.id, a.txn.id, { ...b.token }, 400, 'vaultToken'],
      [a.order.id, a.txn.id, { ...a.token, cryptogram: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' }, 400, 'cryptogram'],
      [b.order.id, b.txn.id, { ...b.token, cryptogram: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=', eciIndicator: '05' }, 400, 'cryptogram'],
      [b.order.id, b.txn.id, { ...b.token, eciIndicator: '05' }, 400, 'eciIndicator'],
    ];
    for (const [o, x, body, status, field] of cases) {
      const res = await pay(o, x, body);
      assert.equal(res.status, status, res.text);
      assert.equal(res.body.error.field, field);
    }
    const wrongOrder = await pay(b.order.id, a.txn.id, a.token);
    assert.equal(wrongOrder.status, 404);
    assert.equal((await getOrder(a.order.id)).transactions[0].status, 'new');
  });
});

describe('billing address of wallet orders', () => {
  test('wallet orders need a complete billing address where the project requires one', async () => {
    for (const method of ['wallet-a-pay', 'wallet-b-pay']) {
      const none = await t.api('POST', '/v1/orders/', validOrder({ customer: undefined, transactions: [{ payment_method: method }] }));
      assert.equal(none.status, 422, none.text);
      assert.equal(none.body.error.type, 'MissingInformationToCreateTransaction');
      assert.equal(none.body.error.field, 'customer.first_name');
      const partial = await t.api(
        'POST',
        '/v1/orders/',
        validOrder({ customer: { ...validOrder().customer, city: undefined }, transactions: [{ payment_method: method }] }),
      );
      assert.equal(partial.status, 422);
      assert.equal(partial.body.error.field, 'customer.city');
      const type = await t.api(
        'POST',
        '/v1/orders/',
        validOrder({ customer: { ...validOrder().customer, address_type: undefined }, transactions: [{ payment_method: method }] }),
      );
      assert.equal(type.status, 422);
      assert.equal(type.body.error.field, 'customer.address_type');
      // and when the order starts its wallet transaction later
      const later = await t.api('POST', '/v1/orders/', validOrder({ customer: undefined }));
      const started = await t.api('POST', `/v1/orders/${later.body.id}/transactions/`, { payment_method: method });
      assert.equal(started.status, 422, started.text);
      assert.equal(started.body.error.type, 'MissingInformationToCreateTransaction');
    }
    const card = await t.api('POST', '/v1/orders/', validOrder({ customer: undefined, transactions: [{ payment_method: 'credit-card' }] }));
    assert.equal(card.status, 201, 'cards do not need it');
  });

  test('a project that does not require it takes wallet orders without one', async () => {
    const p = await t.newProject('test');
    const row = (await findProject(t.db, p.project_id))!;
    await updateProjectSettings(t.db, p.project_id, { ...settingsOf(row.settings), wallet_billing_required: false });
    const res = await t.api(
      'POST',
      '/v1/orders/',
      validOrder({ customer: undefined, transactions: [{ payment_method: 'wallet-b-pay' }] }),
      { key: p.api_key },
    );
    assert.equal(res.status, 201, res.text);
  });
});

describe('hosted page', () => {
  const page = (path: string) => hostedPage(t, path);
  const configOf = (html: string) => deviceConfig(html, 'wallet-b-pay');

  test('test projects show the sandbox sheet, also without a billing address (the sheet asks for it); not without the method', async () => {
    const o = await t.api('POST', '/v1/orders/', validOrder());
    const p = await page(`/pay/${o.body.id}/`);
    assert.match(p.html, /data-method="wallet-b-pay"/);
    assert.match(p.html, new RegExp(`<form method="post" action="/pay/${o.body.id}/wallet-b-pay/sheet/">`));
    assert.doesNotMatch(p.html, /data-wallet="wallet-b-pay"/, 'no device wallet in test projects');
    assert.doesNotMatch(p.csp, /connect-src/, 'the sandbox button is a plain form: no wallet script, no outside hosts');
    const noBilling = await page(`/pay/${(await t.api('POST', '/v1/orders/', validOrder({ customer: undefined }))).body.id}/`);
    assert.match(noBilling.html, /data-method="wallet-b-pay"/);
    const cardOnly = await page(`/pay/${(await t.api('POST', '/v1/orders/', validOrder({ payment_methods: ['credit-card'] }))).body.id}/`);
    assert.doesNotMatch(cardOnly.html, /wallet-b-pay/);
    const script = await fetch(`${t.url}/pay/assets/wallets.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(await script.text(), /PaymentRequest/);
  });

  test('live projects: the device button pays through the token service and the pay step', async () => {
    const live = await t.newProject('live');
    const o = await t.api('POST', '/v1/orders/', validOrder(), { key: live.api_key });
    const p = await page(`/pay/${o.body.id}/`);
    assert.equal(p.status, 200);
    assert.match(p.html, /<div data-wallet="wallet-b-pay" data-config="[^"]+" hidden>/);
    assert.match(p.html, /<script src="\/pay\/assets\/wallets.js" defer><\/script>/);
    assert.match(p.csp, /script-src 'self'/);
    assert.match(p.csp, /connect-src 'self' https:\/\/google.com https:\/\/pay.google.com/);
    const cfg = configOf(p.html);
    assert.equal(cfg.pay_url, `/pay/${o.body.id}/wallet-b-pay/device/`);

    const wallet = (await request(`${t.url}${cfg.config_url}`, 'GET')).body;
    const { recipientId, publicKey } = await recipientOf(live.api_key);
    assert.equal(wallet.supported_methods, 'https://google.com/pay');
    assert.equal(wallet.amount, '19.95');
    assert.equal(wallet.payment_data_request.environment, 'PRODUCTION');
    assert.equal(wallet.payment_data_request.merchantInfo.merchantId, recipientId.replace(/^merchant:/, ''));
    assert.deepEqual(wallet.payment_data_request.allowedPaymentMethods[0].tokenizationSpecification, {
      type: 'DIRECT',
      parameters: { protocolVersion: 'ECv2', publicKey },
    });

    const token = await sealed({}, { root: prodRoot, key: live.api_key });
    const forged = await request(`${t.url}${cfg.pay_url}`, 'POST', {
      csrf: `${cfg.csrf.split('.')[0]}.${'A'.repeat(43)}`,
      walletBPayMessage: token,
    });
    assert.equal(forged.status, 403);
    assert.equal(
      (await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: live.api_key })).body.transactions.length,
      0,
      'nothing started',
    );

    simulatedLive.add(live.project_id);
    try {
      const res = await request(`${t.url}${cfg.pay_url}`, 'POST', { csrf: cfg.csrf, walletBPayMessage: token, ...BROWSER });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.is_successful, true);
      assert.equal(res.body.redirect_url, `https://shop.example/return?order_id=${o.body.id}&project_id=${live.project_id}`);
      const paid = (await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: live.api_key })).body;
      assert.equal(paid.status, 'completed');
      assert.equal(paid.transactions[0].payment_method, 'wallet-b-pay');
      assert.equal(paid.transactions[0].id, res.body.transaction_id);
    } finally {
      simulatedLive.delete(live.project_id);
    }
  });
});
