import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createCardOrder, followBrowser, futureExpiry, randomPan, startPayment, vault } from '../helpers/cards.ts';
import { commands } from '../../src/cli/commands.ts';
import { dataKeyFor } from '../../src/services/platform/crypto-envelope.ts';
import { openCard } from '../../src/services/vault/cards.ts';
import { findVaultCard } from '../../src/store/vault/cards.ts';
import type { Json } from '../helpers/json.ts';

// Every log line of the service, at level info, to prove no PAN reaches them.
const logs: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    logs.push(String(chunk));
    done();
  },
});

let t: TestService;
before(async () => {
  t = await startTestService({ logStream });
});
after(async () => t?.close());

const countCards = async () => Number((await t.db.query('SELECT count(*)::int AS n FROM vault_cards'))[0].n);

/** All text of all tables of the store, one JSON line per row. */
async function dumpDatabase(): Promise<string> {
  const tables = await t.db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  );
  assert.ok(tables.some((r) => r.table_name === 'vault_cards'));
  const out: string[] = [];
  for (const { table_name } of tables) {
    for (const r of await t.db.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${table_name}" t`)) out.push(r.j);
  }
  return out.join('\n');
}

test('stores a card: vault_token, truncated_pan, brand, brands', async () => {
  const { setup_token } = await createCardOrder(t);
  const res = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), name: 'Ada Lovelace', setup_token });
  assert.equal(res.status, 201, res.text);
  assert.match(res.body.vault_token, /^[0-9a-f-]{36}$/);
  assert.equal(res.body.truncated_pan, '411111******1111');
  assert.equal(res.body.brand, 'visa');
  assert.deepEqual(res.body.brands, ['visa']);
  assert.deepEqual(Object.keys(res.body).sort(), ['brand', 'brands', 'truncated_pan', 'vault_token']);
});

test('brands: amex, mastercard, and the co-badged Cartes Bancaires card', async () => {
  const cases: [string, string, string[], string][] = [
    ['378282246310005', 'amex', ['amex'], '378282*****0005'],
    ['5555555555554444', 'mastercard', ['mastercard'], '555555******4444'],
    ['4000002500001001', 'cartes_bancaires', ['cartes_bancaires', 'visa'], '400000******1001'],
  ];
  for (const [pan, brand, brands, truncated] of cases) {
    const { setup_token } = await createCardOrder(t);
    const res = await vault(t, { pan, expiry: futureExpiry(), setup_token });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.brand, brand);
    assert.deepEqual(res.body.brands, brands);
    assert.equal(res.body.truncated_pan, truncated);
  }
});

test('every field rule broken gives 400 ValidationError naming the field, and stores nothing', async () => {
  const { setup_token } = await createCardOrder(t);
  const good = { pan: '4111111111111111', expiry: futureExpiry(), name: 'Ada Lovelace', setup_token };
  const cases: [string, Record<string, unknown>, string][] = [
    ['pan missing', { pan: undefined }, 'pan'],
    ['pan of 11 digits', { pan: '41111111111' }, 'pan'],
    ['pan of 20 digits', { pan: '41111111111111111111' }, 'pan'],
    ['pan with spaces', { pan: '4111 1111 1111 1111' }, 'pan'],
    ['pan not a string', { pan: 4111111111111111 }, 'pan'],
    ['pan failing the Luhn check', { pan: '4111111111111112' }, 'pan'],
    ['pan of no known brand', { pan: randomPan('99', 16) }, 'pan'],
    ['expiry missing', { expiry: undefined }, 'expiry'],
    ['expiry month 13', { expiry: '132030' }, 'expiry'],
    ['expiry month 00', { expiry: '002030' }, 'expiry'],
    ['expiry MMYY', { expiry: '1230' }, 'expiry'],
    ['expiry with a slash', { expiry: '12/2030' }, 'expiry'],
    ['name empty', { name: '' }, 'name'],
    ['name of 121 characters', { name: 'a'.repeat(121) }, 'name'],
    ['name not a string', { name: 42 }, 'name'],
    ['setup_token missing', { setup_token: undefined }, 'setup_token'],
    ['setup_token not a uuid', { setup_token: 'abc' }, 'setup_token'],
    ['unknown field', { cvc: '123' }, 'cvc'],
  ];
  const before = await countCards();
  for (const [what, change, field] of cases) {
    const res = await vault(t, { ...good, ...change });
    assert.equal(res.status, 400, `${what}: ${res.text}`);
    assert.equal(res.body.error.type, 'ValidationError', what);
    assert.equal(res.body.error.field, field, what);
    assert.doesNotMatch(res.text, /4111111111111112|41111111111/, `${what}: the error does not echo the number`);
  }
  assert.equal(await countCards(), before);
  // the limits themselves are allowed
  const ok = await vault(t, { ...good, name: 'a'.repeat(120) });
  assert.equal(ok.status, 201, ok.text);
});

test('without or with a wrong API key: 401', async () => {
  const { setup_token } = await createCardOrder(t);
  const body = { pan: '4111111111111111', expiry: futureExpiry(), setup_token };
  const none = await fetch(`${t.config.vaultUrl}/v1/cards/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(none.status, 401);
  assert.equal((await vault(t, body, 'test_wrong')).status, 401);
});

test('a reused setup_token is refused and stores nothing', async () => {
  const { setup_token } = await createCardOrder(t);
  const body = { pan: '4111111111111111', expiry: futureExpiry(), setup_token };
  assert.equal((await vault(t, body)).status, 201);
  const before = await countCards();
  const again = await vault(t, body);
  assert.equal(again.status, 409);
  assert.equal(again.body.error.field, 'setup_token');
  assert.match(again.body.error.value, /already been used/);
  assert.equal(await countCards(), before);
});

test('one setup_token used by concurrent requests stores exactly one card', async () => {
  const { setup_token, txn } = await createCardOrder(t);
  const body = { pan: '4242424242424242', expiry: futureExpiry(), setup_token };
  const results = await Promise.all([vault(t, body), vault(t, body), vault(t, body), vault(t, body)]);
  assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409]);
  const rows = await t.db.query('SELECT id FROM vault_cards WHERE transaction_id = $1', [txn.id]);
  assert.equal(rows.length, 1);
});

test('an expired setup_token (past 300 s in the project clock) is refused and stores nothing', async () => {
  const shop = await t.newProject('test');
  const early = await createCardOrder(t, {}, {}, shop.api_key);
  const late = await createCardOrder(t, {}, {}, shop.api_key);
  const advanced = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT4M' }, { key: shop.api_key });
  assert.equal(advanced.status, 200);
  const inTime = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token: early.setup_token }, shop.api_key);
  assert.equal(inTime.status, 201, 'still valid after 4 minutes');
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT2M' }, { key: shop.api_key });
  const before = await countCards();
  const res = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token: late.setup_token }, shop.api_key);
  assert.equal(res.status, 400);
  assert.equal(res.body.error.type, 'ValidationError');
  assert.equal(res.body.error.field, 'setup_token');
  assert.match(res.body.error.value, /expired/);
  assert.equal(await countCards(), before);
});

test("another project's setup_token is unknown and stores nothing", async () => {
  const other = await t.newProject('test');
  const { setup_token } = await createCardOrder(t);
  const before = await countCards();
  const res = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token }, other.api_key);
  assert.equal(res.status, 400);
  assert.equal(res.body.error.field, 'setup_token');
  assert.match(res.body.error.value, /not known/);
  const unknown = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token: '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11' });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.value, res.body.error.value, 'same answer: another project does not leak that the token exists');
  assert.equal(await countCards(), before);
  // the owner can still use it
  assert.equal((await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token })).status, 201);
});

test('a cancelled order refuses its setup_token', async () => {
  const { order, setup_token } = await createCardOrder(t);
  assert.equal((await t.api('DELETE', `/v1/orders/${order.id}/`)).status, 200);
  const res = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token });
  assert.equal(res.status, 409);
  assert.match(res.body.error.value, /cancelled/);
});

test('the PAN is nowhere in the database or the logs in clear; the CVC is gone after authorization', async () => {
  const pan = randomPan('4', 16);
  const name = `Grace ${randomBytes(4).toString('hex')} Hopper`;
  const p = await startPayment(t, pan, { name, cvc: '737', orderOver: { return_url: 'https://shop.example/r' } });
  const [sealed] = await t.db.query('SELECT * FROM vault_cards WHERE id = $1', [p.vault_token]);
  assert.ok(sealed.cvc_ct, 'the CVC is sealed until the authorization');
  assert.ok(sealed.name_ct && !String(sealed.name_ct).includes('Grace'), 'the name is sealed in the vault');
  await followBrowser(p.redirect_url);
  const order = (await t.api('GET', `/v1/orders/${p.order.id}/`)).body;
  assert.equal(order.status, 'completed');
  const [done] = await t.db.query('SELECT cvc_ct FROM vault_cards WHERE id = $1', [p.vault_token]);
  assert.equal(done.cvc_ct, null, 'the CVC is deleted once authorized');

  const dump = await dumpDatabase();
  assert.ok(dump.includes(p.vault_token) && dump.includes(pan.slice(-4)), 'the dump holds the card row');
  // the full PAN, and the hidden middle digits with either visible end
  for (const s of [pan, pan.slice(6), pan.slice(0, 12)])
    assert.ok(!dump.includes(s), `${s.length} digits of the PAN found in the database`);
  assert.ok(logs.length > 10, 'the service logged at info level');
  const log = logs.join('');
  for (const s of [pan, pan.slice(6), pan.slice(0, 12)]) assert.ok(!log.includes(s), 'PAN digits found in the logs');
  assert.ok(log.includes(p.txn.id) || log.includes('/v1/cards'), 'the flow did reach the logs');
});

test('the same card gets the same fingerprint within a project', async () => {
  const fixed = randomPan('51', 16);
  const a = await startPayment(t, fixed);
  const b = await startPayment(t, fixed);
  const rows = await t.db.query<{ id: string; fingerprint: string; pan_ct: string }>(
    'SELECT id, fingerprint, pan_ct FROM vault_cards WHERE id = ANY($1::uuid[])',
    [[a.vault_token, b.vault_token]],
  );
  assert.equal(rows.length, 2);
  assert.equal(rows[0].fingerprint, rows[1].fingerprint);
  assert.notEqual(rows[0].pan_ct, rows[1].pan_ct, 'ciphertexts differ (random IV)');
});

test('tender keys rewrap: data keys re-wrapped under a new master key, old wraps pruned', async () => {
  const p = await startPayment(t, '4111111111111111');
  const ctx = t.svc.ctx;
  const oldKey = ctx.masterKey;
  const newKey = randomBytes(32);
  const rewrap = commands['keys rewrap'];
  const r1: Json = await rewrap(ctx, { new_master_key: newKey.toString('hex') });
  assert.ok(r1.data_keys >= 1);
  assert.equal(r1.rewrapped, r1.data_keys);
  const r2: Json = await rewrap(ctx, { new_master_key: newKey.toString('base64') });
  assert.equal(r2.rewrapped, 0, 'idempotent');
  assert.equal(r2.already_wrapped, r1.data_keys);

  const read = async (master: Buffer) => {
    const c = { ...ctx, masterKey: Buffer.from(master) }; // a fresh key object: no cached data key
    const dk = await dataKeyFor(c, t.project.project_id);
    return openCard(dk, (await findVaultCard(t.db, t.project.project_id, p.vault_token))!).pan;
  };
  assert.equal(await read(newKey), '4111111111111111', 'readable with the new key');
  assert.equal(await read(oldKey), '4111111111111111', 'still readable with the old key until pruned (no downtime)');
  await assert.rejects(read(randomBytes(32)), /not wrapped by the configured master key/);

  const r3: Json = await rewrap({ ...ctx, masterKey: Buffer.from(newKey) }, { new_master_key: newKey.toString('hex'), prune: true });
  assert.equal(r3.pruned, r1.data_keys);
  assert.equal(await read(newKey), '4111111111111111');
  await assert.rejects(read(oldKey), /not wrapped by the configured master key/);
  await assert.rejects(rewrap(ctx, { new_master_key: 'short' }), /32 bytes/);
  // back to the service's own key, so the store stays usable by it
  await rewrap({ ...ctx, masterKey: Buffer.from(newKey) }, { new_master_key: oldKey.toString('hex'), prune: true });
  assert.equal(await read(oldKey), '4111111111111111');
});
