// Live device wallet buttons on orders without the billing address the project requires: the
// page offers both, their payment requests ask the wallet for the address, and the device pay
// routes take it (stored on the order's customer, then paid), refuse a wrong or missing one
// with a clear 4xx (nothing stored, nothing started, nothing paid), and leave an order that has
// its address as it is.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { hostedPage, deviceConfig, walletAPayload } from '../helpers/wallets.ts';
import { validOrder, request, type TestService } from '../helpers/service.ts';
import { BROWSER, prodRoot, startWalletBService, walletBClient } from '../helpers/wallet-b.ts';
import { makeSandboxChain } from '../../src/wallets/wallet-a-pki.ts';
import { sealPaymentToken } from '../../src/wallets/wallet-a-token.ts';
import { simulator } from '../../src/acquirer/simulator/index.ts';
import { billingOf } from '../../src/services/wallets/billing.ts';

/** Live projects whose acquirer is the simulator (the service asks through its liveConnector). */
const simulatedLive = new Set<string>();
const liveConnector = (project: { id: string }) => (simulatedLive.has(project.id) ? simulator : undefined);

const prodChain = makeSandboxChain('wallet-a production', new Date('2020-01-01T00:00:00Z'), new Date('2090-01-01T00:00:00Z'));

let t: TestService;
let dir: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-device-billing-'));
  writeFileSync(join(dir, 'roots.pem'), prodChain.root);
  t = await startWalletBService({
    liveConnector,
    config: { walletA: { validationHosts: [], timeoutMs: 2000, rootCaFile: join(dir, 'roots.pem') } },
  });
});
after(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const walletB = walletBClient(() => t);

type Method = 'wallet-a-pay' | 'wallet-b-pay';

/** A live project paying through the simulator, and an order of it (no customer unless given). */
async function liveOrder(over: Record<string, unknown> = { customer: undefined }) {
  const live = await t.newProject('live');
  simulatedLive.add(live.project_id);
  const res = await t.api('POST', '/v1/orders/', validOrder(over), { key: live.api_key });
  assert.equal(res.status, 201, res.text);
  return { live, order: res.body as { id: string; amount: number } };
}

/** A token as the device makes it for the project (production roots). */
async function deviceToken(method: Method, key: string, amount: number) {
  if (method === 'wallet-b-pay') return { walletBPayMessage: await walletB.sealed({}, { root: prodRoot, key }) };
  const proc = (await t.api('GET', '/v1/wallet-a-pay/payment-processing/', undefined, { key })).body;
  const payload = walletAPayload(amount);
  const paymentData = sealPaymentToken(payload, {
    signer: { leaf: prodChain.leaf, intermediate: prodChain.intermediate, privateKey: prodChain.leafKey },
    recipient: proc.public_key,
    merchantIdentifier: proc.merchant_identifier,
    signingTime: new Date(),
  });
  return {
    paymentToken: {
      paymentData,
      paymentMethod: { displayName: 'Visa 1111', network: 'Visa', type: 'debit' },
      transactionIdentifier: paymentData.header.transactionId.toUpperCase(),
    },
  };
}

/** The same address as each wallet hands it over. */
const contacts = {
  'wallet-a-pay': (o: Record<string, unknown> = {}) => ({
    givenName: ' Lech ',
    familyName: 'Wałęsa-Nowak',
    addressLines: ['Damrak  1', '', 'Apt 4/B'],
    locality: 'Amsterdam',
    postalCode: '1012 lg',
    countryCode: 'nl',
    administrativeArea: 'Noord-Holland',
    emailAddress: 'lech@example.com',
    ...o,
  }),
  'wallet-b-pay': (o: Record<string, unknown> = {}) => ({
    name: ' Lech  Wałęsa-Nowak ',
    address1: 'Damrak  1',
    address2: '',
    address3: 'Apt 4/B',
    locality: 'Amsterdam',
    postalCode: '1012 lg',
    countryCode: 'NL',
    administrativeArea: 'Noord-Holland',
    sortingCode: '',
    ...o,
  }),
};
const member = { 'wallet-a-pay': 'billingContact', 'wallet-b-pay': 'billingAddress' } as const;
const STORED = {
  first_name: 'Lech',
  last_name: 'Wałęsa-Nowak',
  address: 'Damrak 1, Apt 4/B',
  postal_code: '1012 LG',
  city: 'Amsterdam',
  country: 'NL',
  address_type: 'billing',
};

for (const method of ['wallet-a-pay', 'wallet-b-pay'] as const) {
  describe(method, () => {
    /** The order page's device button and its wallet's payment request. */
    async function devicePage(orderId: string) {
      const p = await hostedPage(t, `/pay/${orderId}/`);
      assert.equal(p.status, 200);
      assert.match(
        p.html,
        new RegExp(`<div data-wallet="${method}" data-config="[^"]+" hidden>`),
        'the device button, hidden until the browser has the wallet',
      );
      const cfg = deviceConfig(p.html, method);
      const wallet = (await request(`${t.url}${cfg.config_url}`, 'GET')).body;
      return {
        cfg,
        asked:
          method === 'wallet-a-pay'
            ? wallet.payment_request.requiredBillingContactFields
            : wallet.payment_data_request.allowedPaymentMethods[0].parameters,
      };
    }
    const getOrder = async (key: string, id: string) => (await t.api('GET', `/v1/orders/${id}/`, undefined, { key })).body;
    const payDevice = (cfg: { pay_url: string; csrf: string }, body: Record<string, unknown>) =>
      request(`${t.url}${cfg.pay_url}`, 'POST', { csrf: cfg.csrf, ...BROWSER, ...body });

    test('an order without a customer offers the device button, which asks the wallet for the billing address and stores it', async () => {
      const { live, order } = await liveOrder();
      const { cfg, asked } = await devicePage(order.id);
      if (method === 'wallet-a-pay') assert.deepEqual(asked, ['postalAddress']);
      else assert.deepEqual([asked.billingAddressRequired, asked.billingAddressParameters], [true, { format: 'FULL' }]);
      assert.equal(
        cfg.billing_text.labels[method === 'wallet-a-pay' ? 'postalCode' : 'name'],
        method === 'wallet-a-pay' ? 'Postal code' : 'Name',
      );

      const res = await payDevice(cfg, {
        ...(await deviceToken(method, live.api_key, order.amount)),
        [member[method]]: contacts[method](),
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.is_successful, true);
      const paid = await getOrder(live.api_key, order.id);
      assert.equal(paid.status, 'completed');
      assert.equal(paid.transactions[0].payment_method, method);
      assert.deepEqual(
        { ...paid.customer },
        STORED,
        'the tolerant readings: white space, upper-cased postcode and country, no region where the country has no states',
      );
    });

    test('a wrong address from the wallet: 400 naming the wallet’s field, nothing stored, started or paid; corrected, the same token pays', async () => {
      const { live, order } = await liveOrder();
      const { cfg } = await devicePage(order.id);
      const token = await deviceToken(method, live.api_key, order.amount);
      const cases: [Record<string, unknown>, string, string][] = [
        [{ postalCode: '1012-LG' }, 'postalCode', 'billing_format'],
        [{ countryCode: 'XX' }, 'countryCode', 'billing_format'],
        [{ countryCode: 'US', administrativeArea: '' }, 'administrativeArea', 'state_required'],
        [{ countryCode: 'US', administrativeArea: 'ZZ' }, 'administrativeArea', 'state_unknown'],
        [{ locality: '' }, 'locality', 'billing_required'],
        [{ locality: 12 }, 'locality', 'billing_format'],
        method === 'wallet-a-pay'
          ? [{ addressLines: ['Damrak <1>'] }, 'addressLines', 'billing_format']
          : [{ address1: 'Damrak <1>' }, 'address1', 'billing_format'],
        method === 'wallet-a-pay' ? [{ familyName: '' }, 'familyName', 'billing_required'] : [{ name: 'Lech' }, 'name', 'billing_required'],
      ];
      for (const [wrong, field, code] of cases) {
        const res = await payDevice(cfg, { ...token, [member[method]]: contacts[method](wrong) });
        assert.equal(res.status, 400, `${JSON.stringify(wrong)}: ${res.text}`);
        assert.equal(res.body.error.type, 'ValidationError');
        assert.equal(res.body.error.field, `${member[method]}.${field}`, JSON.stringify(wrong));
        assert.equal(res.body.error.code, code, JSON.stringify(wrong));
        assert.doesNotMatch(res.text, /Lech|Wałęsa|Damrak/, 'the customer’s address is not echoed');
      }
      const untouched = await getOrder(live.api_key, order.id);
      assert.deepEqual([untouched.status, untouched.transactions, untouched.customer], ['new', [], undefined]);

      const res = await payDevice(cfg, { ...token, [member[method]]: contacts[method]() });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.is_successful, true);
      assert.equal((await getOrder(live.api_key, order.id)).status, 'completed');
    });

    test('no address from the wallet where the order needs one: 422, nothing started', async () => {
      const { live, order } = await liveOrder();
      const { cfg } = await devicePage(order.id);
      const token = await deviceToken(method, live.api_key, order.amount);
      for (const none of [{}, { [member[method]]: null }]) {
        const res = await payDevice(cfg, { ...token, ...none });
        assert.equal(res.status, 422, res.text);
        assert.deepEqual(
          [res.body.error.type, res.body.error.field, res.body.error.code],
          ['MissingInformationToCreateTransaction', member[method], 'billing_required'],
        );
      }
      const unknown = await payDevice(cfg, { ...token, billing: contacts[method]() });
      assert.equal(unknown.status, 400, 'the strict body: no other member');
      const untouched = await getOrder(live.api_key, order.id);
      assert.deepEqual([untouched.status, untouched.transactions, untouched.customer], ['new', [], undefined]);
    });

    test('two taps at once with different addresses: one pays, the other is refused; the order keeps one whole address', async () => {
      const { live, order } = await liveOrder();
      const { cfg } = await devicePage(order.id);
      const other = method === 'wallet-a-pay' ? { givenName: 'Ada', familyName: 'Byron' } : { name: 'Ada Byron' };
      const sent = [contacts[method](), contacts[method]({ ...other, locality: 'Utrecht', postalCode: '3511 AB' })];
      const answers = await Promise.all(
        sent.map(async (c) => payDevice(cfg, { ...(await deviceToken(method, live.api_key, order.amount)), [member[method]]: c })),
      );
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409], answers.map((a) => a.text).join('\n'));
      assert.equal(answers.find((a) => a.status === 409)!.body.error.type, 'TransactionAlreadyStarted');
      const paid = await getOrder(live.api_key, order.id);
      assert.equal(paid.status, 'completed');
      assert.equal(paid.transactions.length, 1);
      const stored = { ...paid.customer };
      assert.ok(
        [STORED, { ...STORED, first_name: 'Ada', last_name: 'Byron', city: 'Utrecht', postal_code: '3511 AB' }].some((x) =>
          isDeepStrictEqual(x, stored),
        ),
        JSON.stringify(stored),
      );
    });

    test('an order that has its billing address: the wallet is not asked, and an address it hands over anyway is not used', async () => {
      const { live, order } = await liveOrder({});
      const { cfg, asked } = await devicePage(order.id);
      if (method === 'wallet-a-pay') assert.equal(asked, undefined);
      else assert.deepEqual([asked.billingAddressRequired, asked.billingAddressParameters], [undefined, undefined]);
      assert.equal(cfg.billing_text, undefined);
      const before = (await getOrder(live.api_key, order.id)).customer;
      const res = await payDevice(cfg, {
        ...(await deviceToken(method, live.api_key, order.amount)),
        [member[method]]: contacts[method]({ postalCode: 'not valid!' }),
      });
      assert.equal(res.status, 200, res.text);
      const paid = await getOrder(live.api_key, order.id);
      assert.equal(paid.status, 'completed');
      assert.deepEqual(paid.customer, before);
    });
  });
}

test('the wallets’ contacts as the order’s fields: a state where the country has states, the rest of a name as the last name', () => {
  const a = billingOf('wallet-a-pay', {
    givenName: 'Ada',
    familyName: 'Lovelace',
    addressLines: ['1 Main St', 'Floor 2'],
    locality: 'New York',
    postalCode: '10001',
    countryCode: 'US',
    administrativeArea: 'ny',
  });
  assert.deepEqual(a, {
    values: {
      first_name: 'Ada',
      last_name: 'Lovelace',
      address: '1 Main St, Floor 2',
      postal_code: '10001',
      city: 'New York',
      country: 'US',
      state: 'ny',
    },
    wrong: [],
  });
  const b = billingOf('wallet-b-pay', {
    name: 'Anne van der Berg',
    address1: 'Kerkstraat 12/3',
    locality: 'Utrecht',
    postalCode: '3511 AB',
    countryCode: 'NL',
    administrativeArea: 'Utrecht',
  });
  assert.deepEqual(b.values, {
    first_name: 'Anne',
    last_name: 'van der Berg',
    address: 'Kerkstraat 12/3',
    postal_code: '3511 AB',
    city: 'Utrecht',
    country: 'NL',
    state: '',
  });
  assert.deepEqual(billingOf('wallet-a-pay', { addressLines: [1], givenName: ['x'] }).wrong, ['first_name', 'address']);
  assert.deepEqual(billingOf('wallet-b-pay', { name: 7 }).wrong, ['first_name', 'last_name']);
});
