import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, startShop, phonePage } from '../helpers/browser.ts';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { makeSandboxChain } from '../../src/wallets/wallet-a-pki.ts';
import { sealPaymentToken } from '../../src/wallets/wallet-a-token.ts';
import { simulator } from '../../src/acquirer/simulator/index.ts';
import { assertPaidByDevice, reported, walletAPayload } from '../helpers/wallets.ts';
import type { Json } from '../helpers/json.ts';

/** Live projects whose acquirer is the simulator, for as long as a test needs (the service asks through its liveConnector). */
const simulatedLive = new Set<string>();
const liveConnector = (project: { id: string }) => (simulatedLive.has(project.id) ? simulator : undefined);

/**
 * A customer in a real browser (Debian's headless Chromium) pays with wallet-a-pay on the
 * hosted page: through the sandbox sheet of a test project, and in a live project through the
 * device button of wallets.js, hidden in a plain browser and driven by a stand-in for the
 * browser's wallet session API (window.ApplePaySession). Merchant validation goes over mutual
 * TLS to a local HTTPS "provider" (a throwaway CA made with the openssl CLI); the device's
 * token is sealed here under a production root the service is configured to trust.
 */

const prodChain = makeSandboxChain('wallet-a production', new Date('2020-01-01T00:00:00Z'), new Date('2090-01-01T00:00:00Z'));

let t: TestService;
let browser: Browser;
let shop: Awaited<ReturnType<typeof startShop>>;
let dir: string;
let provider: Server;
let providerHost: string;
const providerSession = {
  epochTimestamp: 1,
  expiresAt: 2,
  merchantSessionIdentifier: 'SSH-from-provider',
  nonce: 'abc',
  signature: '3080',
  extra: { kept: true },
};
const seen: { body: Json; path?: string; clientSubject: string }[] = [];

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
const pem = (name: string) => readFileSync(join(dir, name), 'utf8');

/** A key and a certificate signed by the throwaway CA. */
function issue(name: string, subject: string, ext: string) {
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
  openssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  );
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-browser-wallet-a-'));
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
  issue('server', '/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  issue('merchant', '/CN=merchant.test-shop', 'extendedKeyUsage=clientAuth\n');
  writeFileSync(join(dir, 'roots.pem'), prodChain.root);

  provider = createServer(
    { key: pem('server.key'), cert: pem('server.crt'), ca: pem('ca.crt'), requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        seen.push({
          body: JSON.parse(raw || 'null'),
          path: req.url,
          clientSubject: String((req.socket as TLSSocket).getPeerCertificate()?.subject?.CN ?? ''),
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(providerSession));
      });
    },
  );
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  providerHost = `localhost:${(provider.address() as AddressInfo).port}`;

  t = await startTestService({
    liveConnector,
    config: {
      walletA: { validationHosts: [providerHost], timeoutMs: 10_000, caFile: join(dir, 'ca.crt'), rootCaFile: join(dir, 'roots.pem') },
    },
  });
  shop = await startShop();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await shop?.close();
  provider?.closeAllConnections();
  await new Promise((resolve) => (provider ? provider.close(resolve) : resolve(undefined)));
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const phone = () => phonePage(browser);

/**
 * Opens the order page on `page` with the stand-in device wallet `init` (its reports land in
 * `events`) and waits for the device button; `alert` is where the page says what went wrong.
 */
async function withDevice(page: Page, orderUrl: string, init: string) {
  const events: [string, Json][] = [];
  await page.exposeFunction('__walletA', (kind: string, value: unknown) => void events.push([kind, value]));
  await page.addInitScript(init);
  await page.goto(orderUrl);
  const button = page.locator('[data-wallet="wallet-a-pay"] button');
  await button.waitFor({ state: 'visible' });
  return { events, button, alert: page.locator('[data-wallet="wallet-a-pay"] [data-wallet-error]') };
}

/** Live projects take public return URLs only: theirs is shop.example, answered by the browser context (see liveShop). */
const LIVE_SHOP = 'https://shop.example';
async function order(key = t.project.api_key, returnBase = shop.url) {
  const res = await t.api(
    'POST',
    '/v1/orders/',
    validOrder({ customer: { ...validOrder().customer, locale: 'en-GB' }, return_url: `${returnBase}/return` }),
    { key },
  );
  assert.equal(res.status, 201, res.text);
  return res.body;
}
const getOrder = async (id: string, key = t.project.api_key) => (await t.api('GET', `/v1/orders/${id}/`, undefined, { key })).body;

test('a test project pays through the wallet-a sandbox sheet by clicking', { timeout: 120_000 }, async () => {
  const o = await order();
  const { page, cspErrors } = await phone();
  try {
    await page.goto(o.order_url);
    assert.equal(await page.locator('[data-wallet="wallet-a-pay"]').count(), 0, 'no device button in test projects');
    assert.equal(await page.locator('script[src="/pay/assets/wallets.js"]').count(), 0, 'the sandbox needs no wallet script');
    const sandbox = page.getByRole('button', { name: 'Wallet A Pay', exact: true });
    assert.equal(await sandbox.count(), 1);
    await sandbox.click();

    await page.waitForURL(new RegExp(`/pay/${o.id}/wallet-a-pay/[0-9a-f-]{36}/sheet/$`));
    await page.getByRole('heading', { name: 'Wallet A Pay (sandbox)' }).waitFor();
    const cards = page.locator('input[type="radio"][name="card"]');
    assert.ok((await cards.count()) > 1);
    assert.equal(await cards.first().isChecked(), true, 'the first card is preselected');
    assert.equal(await page.getByLabel(/4111 1111 1111 1111/).isChecked(), true);
    assert.equal(await page.locator('input[name="auth_method"]').count(), 0, 'always on the device: nothing to choose');
    await page.getByRole('button', { name: /^Pay / }).click();

    await page.waitForURL(`${shop.url}/return**`);
    assert.equal(new URL(page.url()).searchParams.get('order_id'), o.id);
    const paid = await getOrder(o.id);
    assert.equal(paid.status, 'completed');
    const [txn] = paid.transactions;
    assert.equal(txn.payment_method, 'wallet-a-pay');
    assert.equal(txn.status, 'accepted');
    assert.equal(txn.payment_method_details.liability_shift, true);
    assert.deepEqual(cspErrors, []);
  } finally {
    await page.context().close();
  }
});

test('a live order page in a browser without the wallet: the wallet-a device button stays hidden', { timeout: 120_000 }, async () => {
  const live = await t.newProject('live');
  const o = await order(live.api_key, LIVE_SHOP);
  const { page, cspErrors } = await phone();
  try {
    const script = page.waitForResponse((r) => new URL(r.url()).pathname === '/pay/assets/wallets.js');
    await page.goto(o.order_url);
    assert.equal((await script).status(), 200);
    await page.waitForFunction(() => (window as unknown as { __tenderWallets?: boolean }).__tenderWallets === true);
    await page.waitForLoadState('networkidle');
    assert.equal(await page.evaluate(() => 'ApplePaySession' in window), false);
    const device = page.locator('[data-wallet="wallet-a-pay"]');
    assert.equal(await device.count(), 1);
    assert.equal(await device.isHidden(), true);
    assert.equal(await page.getByRole('button', { name: 'Wallet A Pay' }).count(), 0);
    assert.equal(await page.locator('[data-wallet-sandbox]').count(), 0, 'no sandbox sheet in live projects');
    assert.deepEqual(cspErrors, []);
  } finally {
    await page.context().close();
  }
});

/**
 * The browser's wallet session API as a device that can pay would offer it; it reports to
 * window.__walletA. `billingContact`, when given, comes with the payment, and
 * window.__authorize(contact) authorizes again, as a customer correcting it in the sheet.
 */
const standIn = (token: unknown, validationURL: string, billingContact?: unknown) => `(() => {
  const token = ${JSON.stringify(token)};
  const billingContact = ${JSON.stringify(billingContact ?? null)};
  class ApplePayError {
    constructor(code, contactField, message) { Object.assign(this, { code, contactField, message }); }
  }
  window.ApplePayError = ApplePayError;
  class ApplePaySession {
    static STATUS_SUCCESS = 0;
    static STATUS_FAILURE = 1;
    static supportsVersion(v) { return v === 3; }
    static canMakePayments() { return true; }
    constructor(version, request) {
      window.__walletA('created', { version, request });
      window.__authorize = (contact) => this.onpaymentauthorized({ payment: { token, billingContact: contact } });
    }
    begin() { this.onvalidatemerchant({ validationURL: ${JSON.stringify(validationURL)} }); }
    completeMerchantValidation(session) {
      window.__walletA('session', session);
      this.onpaymentauthorized({ payment: billingContact ? { token, billingContact } : { token } });
    }
    completePayment(result) { window.__walletA('completed', JSON.parse(JSON.stringify(result))); }
    abort() { window.__walletA('aborted', null); }
  }
  window.ApplePaySession = ApplePaySession;
})();`;

/** A live project with its merchant identity (merchant validation can succeed). */
async function liveWithIdentity() {
  const live = await t.newProject('live');
  const identity = await t.api(
    'PUT',
    '/v1/wallet-a-pay/merchant-identity/',
    { certificate: pem('merchant.crt'), private_key: pem('merchant.key') },
    { key: live.api_key },
  );
  assert.equal(identity.status, 200, identity.text);
  return live;
}

/** The device's token for an amount, sealed under the production root the service trusts. */
async function deviceToken(key: string, amount: number) {
  const proc = await t.api('GET', '/v1/wallet-a-pay/payment-processing/', undefined, { key });
  assert.equal(proc.status, 200, proc.text);
  const paymentData = sealPaymentToken(walletAPayload(amount), {
    signer: { leaf: prodChain.leaf, intermediate: prodChain.intermediate, privateKey: prodChain.leafKey },
    recipient: proc.body.public_key,
    merchantIdentifier: proc.body.merchant_identifier,
    signingTime: new Date(),
  });
  return {
    paymentData,
    paymentMethod: { displayName: 'Visa 1111', network: 'Visa', type: 'debit' },
    transactionIdentifier: paymentData.header.transactionId.toUpperCase(),
  };
}

test('a live order paid with a device: merchant validation over mutual TLS, the token to the pay step', { timeout: 120_000 }, async () => {
  const live = await liveWithIdentity();
  const o = await order(live.api_key, LIVE_SHOP);
  const token = await deviceToken(live.api_key, o.amount);

  seen.length = 0;
  const { page, cspErrors, pageErrors } = await phone();
  simulatedLive.add(live.project_id);
  try {
    await page.route(`${LIVE_SHOP}/**`, (route) =>
      route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Thank you for your order</h1>' }),
    );
    const { events, button } = await withDevice(
      page,
      o.order_url,
      standIn(token, `https://${providerHost}/paymentservices/paymentSession`),
    );
    assert.equal(await button.textContent(), 'Wallet A Pay');
    await button.click();

    await page.waitForURL(`${LIVE_SHOP}/return**`);
    assert.equal(new URL(page.url()).searchParams.get('order_id'), o.id);
    await page.getByRole('heading', { name: 'Thank you for your order' }).waitFor();
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(
      events.map(([kind]) => kind),
      ['created', 'session', 'completed'],
    );
    const [created, session, completed] = events.map(([, value]) => value);
    assert.equal(created.version, 3);
    assert.deepEqual(created.request.total, { label: 'Shop live', amount: '19.95', type: 'final' });
    assert.deepEqual(session, providerSession, 'the provider’s session, unchanged');
    assert.deepEqual(completed, { status: 0 }, 'STATUS_SUCCESS');

    assert.equal(seen.length, 1);
    assert.equal(seen[0].path, '/paymentservices/paymentSession');
    assert.equal(seen[0].clientSubject, 'merchant.test-shop');
    assert.deepEqual(seen[0].body, {
      merchantIdentifier: live.project_id.replace(/-/g, ''),
      displayName: 'Shop live',
      initiative: 'web',
      initiativeContext: new URL(t.config.publicBaseUrl).hostname,
    });

    const paid = await getOrder(o.id, live.api_key);
    assert.equal(paid.status, 'completed');
    assert.equal(paid.transactions.length, 1);
    assert.equal(paid.transactions[0].payment_method, 'wallet-a-pay');
    assert.equal(paid.transactions[0].status, 'accepted');
    assert.equal(paid.transactions[0].payment_method_details.liability_shift, true);
    assert.deepEqual(cspErrors, []);
  } finally {
    simulatedLive.delete(live.project_id);
    await page.context().close();
  }
});

test(
  'merchant validation refused (no merchant identity): the sheet is aborted, the page says so, nothing starts',
  { timeout: 120_000 },
  async () => {
    const live = await t.newProject('live');
    const o = await order(live.api_key, LIVE_SHOP);
    const { page, cspErrors, pageErrors } = await phone();
    try {
      const { events, button, alert } = await withDevice(
        page,
        o.order_url,
        standIn({}, `https://${providerHost}/paymentservices/paymentSession`),
      );
      await button.click();
      await alert.waitFor({ state: 'visible' });
      assert.match((await alert.textContent()) ?? '', /did not go through/);
      assert.equal(await button.isEnabled(), true, 'the customer can try again or pick another method');
      assert.deepEqual(
        events.map(([kind]) => kind),
        ['created', 'aborted'],
      );
      assert.deepEqual(pageErrors, []);
      assert.deepEqual(cspErrors, []);
      assert.equal((await getOrder(o.id, live.api_key)).transactions.length, 0);
    } finally {
      await page.context().close();
    }
  },
);

test(
  'a live order without a customer: the device button shows, the wallet is asked for the billing address; a wrong one is pointed at, the corrected one is stored and paid',
  { timeout: 120_000 },
  async () => {
    const live = await liveWithIdentity();
    const created = await t.api('POST', '/v1/orders/', validOrder({ customer: undefined, return_url: `${LIVE_SHOP}/return` }), {
      key: live.api_key,
    });
    assert.equal(created.status, 201, created.text);
    const o = created.body;
    const token = await deviceToken(live.api_key, o.amount);
    const contact = {
      givenName: 'Ada',
      familyName: 'Lovelace',
      addressLines: ['Damrak 1'],
      locality: 'Amsterdam',
      postalCode: '1012 LG',
      countryCode: 'NL',
      administrativeArea: 'Noord-Holland',
    };

    const { page, cspErrors, pageErrors } = await phone();
    simulatedLive.add(live.project_id);
    try {
      await page.route(`${LIVE_SHOP}/**`, (route) =>
        route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Thank you for your order</h1>' }),
      );
      const { events, button, alert } = await withDevice(
        page,
        o.order_url,
        standIn(token, `https://${providerHost}/paymentservices/paymentSession`, { ...contact, postalCode: '1012-LG' }),
      );
      await button.click();

      // the wallet's postal code is refused: the sheet is told which field, the page says why
      await alert.waitFor({ state: 'visible' });
      assert.equal(
        await alert.textContent(),
        'The billing address from the wallet cannot be used (Postal code). Correct it in the wallet, or choose another method.',
      );
      // the stand-in's reports reach us asynchronously
      await reported(() => events.length >= 3);
      assert.deepEqual(
        events.map(([kind]) => kind),
        ['created', 'session', 'completed'],
      );
      assert.deepEqual(events[0][1].request.requiredBillingContactFields, ['postalAddress'], 'the wallet is asked for the billing address');
      assert.deepEqual(events[2][1], {
        status: 1,
        errors: [{ code: 'billingContactInvalid', contactField: 'postalCode', message: await alert.textContent() }],
      });
      const untouched = await getOrder(o.id, live.api_key);
      assert.deepEqual([untouched.transactions, untouched.customer], [[], undefined], 'nothing stored, nothing started');

      // corrected in the sheet: stored on the order, paid
      await page.evaluate((c) => (window as unknown as { __authorize: (c: unknown) => void }).__authorize(c), contact);
      await page.waitForURL(`${LIVE_SHOP}/return**`);
      await reported(() => events.length >= 4);
      assert.deepEqual(events.at(-1), ['completed', { status: 0 }]);
      const paid = await getOrder(o.id, live.api_key);
      assertPaidByDevice(paid, 'wallet-a-pay');
      assert.deepEqual(pageErrors, []);
      assert.deepEqual(cspErrors, []);
    } finally {
      simulatedLive.delete(live.project_id);
      await page.context().close();
    }
  },
);
