import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { walletOrder as walletOrderOf, hostedPage, deviceConfig } from '../helpers/wallets.ts';
import { startTestService, validOrder, request, basic, type TestService } from '../helpers/service.ts';
import { generateSandboxKeys, sealToken, type ProtocolVersion } from '../../src/wallets/wallet-b-token.ts';
import { findProject, updateProjectSettings } from '../../src/store/projects.ts';
import { settingsOf } from '../../src/domain/project.ts';
import { liveConnectors } from '../../src/acquirer/connector.ts';
import { simulator } from '../../src/acquirer/simulator/index.ts';

/**
 * The wallet-b-pay token service, pay step and decrypted payload flow over HTTP, with the
 * shared public test vectors and with tokens sealed here by test root keys that the test
 * (and production) root key files list.
 */

const vectors = JSON.parse(readFileSync(new URL('../../../shared/vectors/google-pay/ecv2-tink-test-keys.json', import.meta.url), 'utf8'));
const EXPECTED: Record<string, string> = {
  expired_message: 'message_expired',
  plaintext_not_json: 'plaintext_not_json',
  invalid_tag: 'invalid_tag',
  expired_intermediate_key: 'intermediate_key_expired',
};

const testRoot = generateSandboxKeys(); // listed in the test root keys file
const prodRoot = generateSandboxKeys(); // listed in the production root keys file
const FAR = '32506264800000';
const rootsOf = (publicKey: string) => (['ECv1', 'ECv2', 'ECv2SigningOnly'] as const).map((protocolVersion) => ({ keyValue: publicKey, protocolVersion, keyExpiration: FAR }));

let t: TestService;
let dir: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-wallet-b-'));
  const testFile = join(dir, 'test-keys.json');
  const prodFile = join(dir, 'keys.json');
  writeFileSync(testFile, JSON.stringify({ keys: [...vectors.root_signing_keys.keys, ...rootsOf(testRoot.rootPublicKey)] }));
  writeFileSync(prodFile, JSON.stringify({ keys: rootsOf(prodRoot.rootPublicKey) }));
  t = await startTestService({ config: { walletBTestRootKeysFile: testFile, walletBRootKeysFile: prodFile } });
});
after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const tokenUrl = (test = true) => `${t.config.walletBTokenUrl}/${test ? 'test/' : ''}tokens/`;
const tokenize = (body: Record<string, unknown>, test = true) => request(tokenUrl(test), 'POST', body);
const payUrl = (o: string, txn: string) => `${t.url}/pay/${o}/select-payment-method/wallet-b-pay/${txn}/`;
const pay = (o: string, txn: string, body: Record<string, unknown>) => request(payUrl(o, txn), 'POST', body);
const vaultRows = async (txnId: string) => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM vault_cards WHERE transaction_id = $1', [txnId]))[0].n;

const BROWSER = {
  browser_info_screen_width: 1920,
  browser_info_screen_height: 1080,
  browser_info_color_depth: 24,
  browser_info_user_agent: 'Mozilla/5.0 (test)',
  browser_info_time_zone_offset: -60,
  browser_info_language: 'nl-NL',
  browser_info_java_enabled: false,
};

const walletOrder = (key = t.project.api_key, over: Record<string, unknown> = {}) => walletOrderOf(t, 'wallet-b-pay', key, over);

/** The project's tokenization parameters, as a merchant reads them. */
async function recipientOf(key = t.project.api_key) {
  const res = await t.api('GET', '/v1/wallet-b-pay/tokenization/', undefined, { key });
  assert.equal(res.status, 200, res.text);
  return { recipientId: res.body.recipient_id as string, publicKey: res.body.tokenization_specification.parameters.publicKey as string };
}

let messages = 0;
/** A token as the wallet makes it, for the project's recipient key. */
async function sealed(
  card: { pan?: string; authMethod?: 'PAN_ONLY' | 'CRYPTOGRAM_3DS'; cryptogram?: string; eci?: string } = {},
  opts: { version?: ProtocolVersion; root?: typeof testRoot; key?: string; messageId?: string } = {},
) {
  const { recipientId, publicKey } = await recipientOf(opts.key);
  const authMethod = card.authMethod ?? 'CRYPTOGRAM_3DS';
  const details: Record<string, unknown> = { pan: card.pan ?? '4111111111111111', expirationMonth: 12, expirationYear: 2031, authMethod };
  if (authMethod === 'CRYPTOGRAM_3DS') Object.assign(details, { cryptogram: card.cryptogram ?? 'AgAAAAAABk4DWZ4C28yUQAAAAAA=', eciIndicator: card.eci ?? '05' });
  const payload = { messageExpiration: String(Date.now() + 3_600_000), messageId: opts.messageId ?? `m-${++messages}-${Date.now()}`, paymentMethod: 'CARD', paymentMethodDetails: details };
  const root = opts.root ?? testRoot;
  return sealToken(payload, { protocolVersion: opts.version ?? 'ECv2', rootPrivateKey: root.rootPrivateKey, recipientId, recipientPublicKey: publicKey });
}

describe('shared test vectors through the token service', () => {
  let key: string;
  before(async () => {
    const p = await t.newProject('test');
    key = p.api_key;
    const set = await t.api('PUT', '/v1/wallet-b-pay/tokenization/', { recipient_id: vectors.recipient_id, private_key: vectors.recipient_private_key_pkcs8_base64 }, { key });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.recipient_id, 'someRecipient');
    const clock = await t.api('PUT', '/v1/test/wallet-b-pay/clock/', { now: '2025-06-01T12:00:00Z' }, { key });
    assert.equal(clock.status, 200, clock.text);
    assert.deepEqual(clock.body, { now: '2025-06-01T12:00:00.000Z', pinned: true });
  });

  test('every vector in the file is covered', () => {
    assert.deepEqual(Object.keys(vectors.tokens).sort(), [...Object.keys(EXPECTED), 'valid'].sort());
  });

  test('each bad vector is refused with its own code, and nothing is vaulted', async () => {
    const { txn, setupToken } = await walletOrder(key);
    for (const [name, code] of Object.entries(EXPECTED)) {
      const res = await tokenize({ walletBPayMessage: JSON.stringify(vectors.tokens[name]), setupToken, transactionId: txn.id });
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assert.equal(res.body.error.type, 'ValidationError');
      assert.equal(res.body.error.field, 'walletBPayMessage');
      assert.equal(res.body.error.code, code, name);
      assert.match(res.body.error.value, /^walletBPayMessage refused: /);
    }
    assert.equal(await vaultRows(txn.id), 0);
  });

  test('the valid vector decrypts: its PAN_ONLY card is vaulted', async () => {
    const { order, txn, setupToken } = await walletOrder(key);
    const res = await tokenize({ walletBPayMessage: JSON.stringify(vectors.tokens.valid), setupToken, transactionId: txn.id });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.vaultToken, /^[0-9a-f-]{36}$/);
    assert.equal(res.body.cryptogram, '');
    assert.equal(res.body.eciIndicator, '');
    assert.equal(await vaultRows(txn.id), 1);
    const [row] = await t.db.query<{ truncated_pan: string; expiry: string; brand: string }>('SELECT truncated_pan, expiry, brand FROM vault_cards WHERE id = $1', [res.body.vaultToken]);
    assert.deepEqual({ ...row }, { truncated_pan: '411111******1111', expiry: '122026', brand: 'visa' });
    // and it pays like a card: 3-D Secure first
    const paid = await pay(order.id, txn.id, { vaultToken: res.body.vaultToken, cryptogram: '', eciIndicator: '', ...BROWSER });
    assert.equal(paid.status, 200, paid.text);
    assert.equal(paid.body.redirect_url, `${t.url}/pay/3ds/${txn.id}/`);
  });

  test('the token clock decides: past its intermediate key expiry the valid vector is refused', async () => {
    await t.api('PUT', '/v1/test/wallet-b-pay/clock/', { now: '2029-07-23T00:00:00Z' }, { key });
    const { txn, setupToken } = await walletOrder(key);
    const res = await tokenize({ walletBPayMessage: JSON.stringify(vectors.tokens.valid), setupToken, transactionId: txn.id });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'intermediate_key_expired');
    const released = await t.api('PUT', '/v1/test/wallet-b-pay/clock/', {}, { key });
    assert.equal(released.body.pinned, false);
  });
});

describe('project keys', () => {
  test('a new project gets its recipient key (and a test project its sandbox root key), stored sealed', async () => {
    const test = await t.newProject('test');
    const live = await t.newProject('live');
    const kinds = async (id: string) => (await t.db.query<{ kind: string }>('SELECT kind FROM wallet_b_keys WHERE project_id = $1 AND retired IS NULL ORDER BY kind', [id])).map((r) => r.kind);
    assert.deepEqual(await kinds(test.project_id), ['recipient', 'sandbox_root']);
    assert.deepEqual(await kinds(live.project_id), ['recipient']);
    const res = await t.api('GET', '/v1/wallet-b-pay/tokenization/', undefined, { key: live.api_key });
    assert.equal(res.status, 200);
    assert.equal(res.body.recipient_id, `merchant:${live.project_id.replace(/-/g, '')}`);
    assert.equal(res.body.token_service_url, `${t.config.walletBTokenUrl}/tokens/`);
    const point = Buffer.from(res.body.tokenization_specification.parameters.publicKey, 'base64');
    assert.equal(point.length, 65);
    assert.equal(point[0], 4);
  });

  test('the recipient id can be set and a private key imported; bad ones are refused', async () => {
    const p = await t.newProject('test');
    const put = (body: unknown) => t.api('PUT', '/v1/wallet-b-pay/tokenization/', body, { key: p.api_key });
    assert.equal((await put({ recipient_id: 'merchant:BCR2DN4T7X' })).body.recipient_id, 'merchant:BCR2DN4T7X');
    assert.equal((await put({ recipient_id: 'merchant: spaces' })).body.error.field, 'recipient_id');
    assert.equal((await put({ private_key: 'bm90IGEga2V5' })).body.error.field, 'private_key');
    const imported = await put({ private_key: vectors.recipient_private_key_pkcs8_base64 });
    assert.equal(imported.status, 200, imported.text);
    assert.equal(imported.body.recipient_id, 'merchant:BCR2DN4T7X', 'the recipient id stays');
    const rows = await t.db.query<{ private_key_ct: string; retired: Date | null }>("SELECT private_key_ct, retired FROM wallet_b_keys WHERE project_id = $1 AND kind = 'recipient' ORDER BY created", [p.project_id]);
    assert.equal(rows.filter((r) => !r.retired).length, 1, 'the old key is retired');
    for (const r of rows) assert.ok(!r.private_key_ct.includes(vectors.recipient_private_key_pkcs8_base64.slice(40, 80)));
    const clock = await t.api('PUT', '/v1/test/wallet-b-pay/clock/', { now: 'yesterday' }, { key: p.api_key });
    assert.equal(clock.body.error.field, 'now');
    const liveProject = await t.newProject('live');
    assert.equal((await t.api('PUT', '/v1/test/wallet-b-pay/clock/', { now: '2025-06-01T00:00:00Z' }, { key: liveProject.api_key })).status, 403);
  });
});

describe('token service rules', () => {
  test('a setupToken reused or of another transaction is refused, and nothing more is vaulted', async () => {
    const a = await walletOrder();
    const b = await walletOrder();
    const foreign = await tokenize({ walletBPayMessage: await sealed(), setupToken: a.setupToken, transactionId: b.txn.id });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.field, 'setupToken');
    assert.match(foreign.body.error.value, /does not belong to transaction/);
    assert.equal(await vaultRows(a.txn.id), 0);
    assert.equal(await vaultRows(b.txn.id), 0);

    const first = await tokenize({ walletBPayMessage: await sealed(), setupToken: a.setupToken, transactionId: a.txn.id });
    assert.equal(first.status, 200, first.text);
    const again = await tokenize({ walletBPayMessage: await sealed(), setupToken: a.setupToken, transactionId: a.txn.id });
    assert.equal(again.status, 409, again.text);
    assert.equal(again.body.error.field, 'setupToken');
    assert.match(again.body.error.value, /already been used/);
    assert.equal(await vaultRows(a.txn.id), 1);
  });

  test('an expired setupToken is refused', async () => {
    const p = await t.newProject('test');
    const o = await walletOrder(p.api_key);
    await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT6M' }, { key: p.api_key });
    const res = await tokenize({ walletBPayMessage: await sealed({}, { key: p.api_key }), setupToken: o.setupToken, transactionId: o.txn.id });
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.error.value, /setupToken expired/);
    assert.equal(await vaultRows(o.txn.id), 0);
  });

  test('one token pays once: the same messageId on another order is refused', async () => {
    const token = await sealed({}, { messageId: 'one-token-only' });
    const a = await walletOrder();
    const b = await walletOrder();
    assert.equal((await tokenize({ walletBPayMessage: token, setupToken: a.setupToken, transactionId: a.txn.id })).status, 200);
    const replay = await tokenize({ walletBPayMessage: token, setupToken: b.setupToken, transactionId: b.txn.id });
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error.code, 'token_already_used');
    assert.equal(await vaultRows(b.txn.id), 0);
  });

  test('ECv1, ECv2 and ECv2SigningOnly tokens open; the root key sets are kept apart', async () => {
    for (const version of ['ECv1', 'ECv2', 'ECv2SigningOnly'] as const) {
      const o = await walletOrder();
      const res = await tokenize({ walletBPayMessage: await sealed({ eci: '07' }, { version }), setupToken: o.setupToken, transactionId: o.txn.id });
      assert.equal(res.status, 200, `${version}: ${res.text}`);
      assert.equal(res.body.cryptogram, 'AgAAAAAABk4DWZ4C28yUQAAAAAA=');
      assert.equal(res.body.eciIndicator, '07');
    }
    const o = await walletOrder();
    // a test root's token at the production service, and a production root's token at the test service
    const atProd = await tokenize({ walletBPayMessage: await sealed(), setupToken: o.setupToken, transactionId: o.txn.id }, false);
    assert.equal(atProd.body.error?.code, 'invalid_intermediate_signature', atProd.text);
    const atTest = await tokenize({ walletBPayMessage: await sealed({}, { root: prodRoot }), setupToken: o.setupToken, transactionId: o.txn.id });
    assert.equal(atTest.body.error?.code, 'invalid_intermediate_signature', atTest.text);
    const ok = await tokenize({ walletBPayMessage: await sealed({}, { root: prodRoot }), setupToken: o.setupToken, transactionId: o.txn.id }, false);
    assert.equal(ok.status, 200, ok.text);
  });

  test('a live project cannot use the test token service; other refusals', async () => {
    const live = await t.newProject('live');
    const o = await walletOrder(live.api_key);
    const res = await tokenize({ walletBPayMessage: await sealed({}, { key: live.api_key }), setupToken: o.setupToken, transactionId: o.txn.id });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.error.type, 'Forbidden');

    const card = await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: 'credit-card' }] }));
    const c = card.body.transactions[0];
    const notWallet = await tokenize({ walletBPayMessage: await sealed(), setupToken: c.payment_method_details.setup_token, transactionId: c.id });
    assert.equal(notWallet.status, 400);
    assert.equal(notWallet.body.error.field, 'transactionId');

    const w = await walletOrder();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ walletBPayMessage: 'not json', setupToken: w.setupToken, transactionId: w.txn.id }, 'invalid_json'],
      [{ walletBPayMessage: '{"protocolVersion":"ECv3"}', setupToken: w.setupToken, transactionId: w.txn.id }, 'unsupported_protocol'],
    ];
    for (const [body, code] of cases) assert.equal((await tokenize(body)).body.error.code, code);
    const schema = await tokenize({ walletBPayMessage: {}, setupToken: w.setupToken, transactionId: w.txn.id });
    assert.equal(schema.status, 400);
    assert.equal(schema.body.error.field, 'walletBPayMessage');
    const extra = await tokenize({ walletBPayMessage: 'x', setupToken: w.setupToken, transactionId: w.txn.id, apiKey: 'x' });
    assert.equal(extra.body.error.field, 'apiKey');
    assert.equal(await vaultRows(w.txn.id), 0);
  });
});

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
    assert.deepEqual(res.body, { is_successful: true, redirect_url: `https://shop.example/return?order_id=${order.id}&project_id=${t.project.project_id}`, reason: '' });
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
    for (const [cryptogram, eciIndicator] of [['AgAAAAAABk4DWZ4C28yUQAAAAAA=', '05'], ['', '']]) {
      const o = await walletOrder();
      const stored = await request(`${t.config.vaultUrl}/v1/cards/`, 'POST', { pan: '5555555555554444', expiry: '122030', setup_token: o.setupToken }, { authorization: basic(t.project.api_key) });
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
      const partial = await t.api('POST', '/v1/orders/', validOrder({ customer: { ...validOrder().customer, city: undefined }, transactions: [{ payment_method: method }] }));
      assert.equal(partial.status, 422);
      assert.equal(partial.body.error.field, 'customer.city');
      const type = await t.api('POST', '/v1/orders/', validOrder({ customer: { ...validOrder().customer, address_type: undefined }, transactions: [{ payment_method: method }] }));
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
    const res = await t.api('POST', '/v1/orders/', validOrder({ customer: undefined, transactions: [{ payment_method: 'wallet-b-pay' }] }), { key: p.api_key });
    assert.equal(res.status, 201, res.text);
  });
});

describe('hosted page', () => {
  const page = (path: string) => hostedPage(t, path);
  const configOf = (html: string) => deviceConfig(html, 'wallet-b-pay');

  test('test projects show the sandbox sheet; without a billing address or method no wallet is offered', async () => {
    const o = await t.api('POST', '/v1/orders/', validOrder());
    const p = await page(`/pay/${o.body.id}/`);
    assert.match(p.html, /data-method="wallet-b-pay"/);
    assert.match(p.html, new RegExp(`<form method="post" action="/pay/${o.body.id}/wallet-b-pay/sheet/">`));
    assert.doesNotMatch(p.html, /data-wallet="wallet-b-pay"/, 'no device wallet in test projects');
    const noBilling = await page(`/pay/${(await t.api('POST', '/v1/orders/', validOrder({ customer: undefined }))).body.id}/`);
    assert.doesNotMatch(noBilling.html, /data-method="wallet-b-pay"/);
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
    assert.deepEqual(wallet.payment_data_request.allowedPaymentMethods[0].tokenizationSpecification, { type: 'DIRECT', parameters: { protocolVersion: 'ECv2', publicKey } });

    const token = await sealed({}, { root: prodRoot, key: live.api_key });
    const forged = await request(`${t.url}${cfg.pay_url}`, 'POST', { csrf: `${cfg.csrf.split('.')[0]}.${'A'.repeat(43)}`, walletBPayMessage: token });
    assert.equal(forged.status, 403);
    assert.equal((await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: live.api_key })).body.transactions.length, 0, 'nothing started');

    liveConnectors.forProject = (project) => (project.id === live.project_id ? simulator : undefined);
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
      delete liveConnectors.forProject;
    }
  });
});
