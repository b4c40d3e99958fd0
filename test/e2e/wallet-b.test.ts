import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { validOrder, type TestService } from '../helpers/service.ts';
import { BROWSER, prodRoot, startWalletBService, vectors, walletBClient } from '../helpers/wallet-b.ts';

/**
 * The wallet-b-pay token service over HTTP: the shared public test vectors, the project keys and
 * the token rules, with tokens sealed here by test root keys that the test (and production) root
 * key files list. The pay step and the hosted page: wallet-b-pay.test.ts.
 */

const EXPECTED: Record<string, string> = {
  expired_message: 'message_expired',
  plaintext_not_json: 'plaintext_not_json',
  invalid_tag: 'invalid_tag',
  expired_intermediate_key: 'intermediate_key_expired',
};

let t: TestService;
before(async () => {
  t = await startWalletBService();
});
after(async () => t?.close());

const { tokenize, pay, vaultRows, walletOrder, sealed } = walletBClient(() => t);

describe('shared test vectors through the token service', () => {
  let key: string;
  before(async () => {
    const p = await t.newProject('test');
    key = p.api_key;
    const set = await t.api(
      'PUT',
      '/v1/wallet-b-pay/tokenization/',
      { recipient_id: vectors.recipient_id, private_key: vectors.recipient_private_key_pkcs8_base64 },
      { key },
    );
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
    const [row] = await t.db.query<{ truncated_pan: string; expiry: string; brand: string }>(
      'SELECT truncated_pan, expiry, brand FROM vault_cards WHERE id = $1',
      [res.body.vaultToken],
    );
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
    const kinds = async (id: string) =>
      (
        await t.db.query<{ kind: string }>('SELECT kind FROM wallet_b_keys WHERE project_id = $1 AND retired IS NULL ORDER BY kind', [id])
      ).map((r) => r.kind);
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
    const rows = await t.db.query<{ private_key_ct: string; retired: Date | null }>(
      "SELECT private_key_ct, retired FROM wallet_b_keys WHERE project_id = $1 AND kind = 'recipient' ORDER BY created",
      [p.project_id],
    );
    assert.equal(rows.filter((r) => !r.retired).length, 1, 'the old key is retired');
    for (const r of rows) assert.ok(!r.private_key_ct.includes(vectors.recipient_private_key_pkcs8_base64.slice(40, 80)));
    const clock = await t.api('PUT', '/v1/test/wallet-b-pay/clock/', { now: 'yesterday' }, { key: p.api_key });
    assert.equal(clock.body.error.field, 'now');
    const liveProject = await t.newProject('live');
    assert.equal(
      (await t.api('PUT', '/v1/test/wallet-b-pay/clock/', { now: '2025-06-01T00:00:00Z' }, { key: liveProject.api_key })).status,
      403,
    );
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
    const res = await tokenize({
      walletBPayMessage: await sealed({}, { key: p.api_key }),
      setupToken: o.setupToken,
      transactionId: o.txn.id,
    });
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
      const res = await tokenize({
        walletBPayMessage: await sealed({ eci: '07' }, { version }),
        setupToken: o.setupToken,
        transactionId: o.txn.id,
      });
      assert.equal(res.status, 200, `${version}: ${res.text}`);
      assert.equal(res.body.cryptogram, 'AgAAAAAABk4DWZ4C28yUQAAAAAA=');
      assert.equal(res.body.eciIndicator, '07');
    }
    const o = await walletOrder();
    // a test root's token at the production service, and a production root's token at the test service
    const atProd = await tokenize({ walletBPayMessage: await sealed(), setupToken: o.setupToken, transactionId: o.txn.id }, false);
    assert.equal(atProd.body.error?.code, 'invalid_intermediate_signature', atProd.text);
    const atTest = await tokenize({
      walletBPayMessage: await sealed({}, { root: prodRoot }),
      setupToken: o.setupToken,
      transactionId: o.txn.id,
    });
    assert.equal(atTest.body.error?.code, 'invalid_intermediate_signature', atTest.text);
    const ok = await tokenize(
      { walletBPayMessage: await sealed({}, { root: prodRoot }), setupToken: o.setupToken, transactionId: o.txn.id },
      false,
    );
    assert.equal(ok.status, 200, ok.text);
  });

  test('a live project cannot use the test token service; other refusals', async () => {
    const live = await t.newProject('live');
    const o = await walletOrder(live.api_key);
    const res = await tokenize({
      walletBPayMessage: await sealed({}, { key: live.api_key }),
      setupToken: o.setupToken,
      transactionId: o.txn.id,
    });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.error.type, 'Forbidden');

    const card = await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: 'credit-card' }] }));
    const c = card.body.transactions[0];
    const notWallet = await tokenize({
      walletBPayMessage: await sealed(),
      setupToken: c.payment_method_details.setup_token,
      transactionId: c.id,
    });
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
