// Secrets at rest and in logs (issue 22): after a card payment with a distinctive cardholder name,
// neither the database (pg_dump on PostgreSQL, every row of every table on both stores) nor the
// service log holds the name, the PAN, the CVC or an API key; the API still shows the name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { request, basic, type TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { randomPan, startPayment } from '../helpers/cards.ts';
import { migrate } from '../../src/store/db/migrate.ts';
import { sealPendingHolderNames } from '../../src/services/vault/holder-names.ts';
import { logUrl, maskDigits } from '../../src/log.ts';

const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

let t: TestService;
before(async () => (t = await startTestService({ logStream })));
after(async () => t?.close());

const NAME = 'Zebulon Quixotic-Farnsworth';
const CVC = '739';

/** Every row of every table of the service's store, as text: each column's value between tabs (JSON columns as JSON text). */
async function allRows(): Promise<string> {
  const tables = await t.db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
  );
  const out: string[] = [];
  for (const { name } of tables)
    for (const r of await t.db.query<{ row: string }>(
      `SELECT E'\\t' || array_to_string(ARRAY(SELECT coalesce(value, '') FROM json_each_text(row_to_json(t))), E'\\t') || E'\\t' AS row FROM "${name}" t`,
    ))
      out.push(`${name}: ${r.row}`);
  return out.join('\n');
}

/** pg_dump of the service's schema (PostgreSQL only). */
async function pgDump(): Promise<string> {
  const [{ schema }] = await t.db.query<{ schema: string }>('SELECT current_schema() AS schema');
  return execFileSync('pg_dump', ['--no-owner', '-n', schema, process.env.DATABASE_URL!], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
}

function assertHoldsNone(text: string, secrets: Record<string, string>, where: string) {
  for (const [what, secret] of Object.entries(secrets)) assert.ok(!text.includes(secret), `${where} holds the ${what}`);
}

test('after a card payment, neither the store nor the log holds the cardholder name, PAN, CVC or API key; the API shows the name', async () => {
  const pan = randomPan('4', 16);
  const paid = await startPayment(t, pan, { name: NAME, cvc: CVC });
  // the customer's browser finishes 3-D Secure, so the CVC was used and the payment authorized
  let url: string | null = new URL(paid.redirect_url, t.url).toString();
  for (let hop = 0; url && url.startsWith(t.url) && hop < 10; hop++) {
    const res: Response = await fetch(url, { redirect: 'manual' });
    await res.arrayBuffer();
    url = res.headers.get('location') && new URL(res.headers.get('location')!, url).toString();
  }
  const order = await t.api('GET', `/v1/orders/${paid.order.id}/`);
  assert.equal(order.body.status, 'completed', order.text);
  assert.equal(order.body.transactions[0].payment_method_details.cardholder_name, NAME);
  assert.equal(order.body.transactions[0].payment_method_details.cardholder_name_sealed, undefined);
  const found = await t.api('POST', '/v1/search/orders/', { query: `id:${paid.order.id}` });
  assert.equal(found.status, 200, found.text);
  assert.equal(found.body.orders[0]?.transactions[0].payment_method_details.cardholder_name, NAME);
  const refund = await t.api('POST', `/v1/orders/${paid.order.id}/refunds/`, { amount: 100 });
  assert.equal(refund.status, 201, refund.text);

  // a key in the query string and a PAN in a path are requests' text the log must not keep
  await request(`${t.url}/v1/orders/${pan}/?api_key=${t.project.api_key}`, 'GET', undefined, { authorization: basic(t.project.api_key) });
  await request(`${t.url}/pay/${pan.slice(0, 4)}-${pan.slice(4, 8)}-${pan.slice(8, 12)}-${pan.slice(12)}/`, 'GET');

  const secrets = { 'cardholder name': NAME, PAN: pan, 'API key': t.project.api_key, CVC: `"${CVC}"` };
  const rows = await allRows();
  assert.ok(rows.includes(paid.order.id), 'the dump holds the payment');
  assert.ok(rows.includes(`\t${paid.order.id}\t`), 'a column is one tab-delimited cell');
  assertHoldsNone(rows, { ...secrets, 'CVC column': `\t${CVC}\t` }, 'the store');
  if (process.env.DATABASE_URL) {
    const dump = await pgDump();
    assert.ok(dump.includes(paid.order.id), 'pg_dump holds the payment');
    assertHoldsNone(dump, { ...secrets, CVC: `\t${CVC}\t` }, 'pg_dump');
  }
  const log = lines.join('');
  assert.ok(log.includes(paid.order.id), 'the log covers the payment');
  assertHoldsNone(log, secrets, 'the log');
  assert.ok(!log.includes('api_key='), 'the log keeps no query strings');
});

test('names stored in clear before migration 085 are sealed at the next start, and still shown', async () => {
  const paid = await startPayment(t, randomPan('4', 16), { name: 'Old Clear-Name' });
  const txnId = paid.txn.id;
  // the store as it was before 085: the name in clear in the transaction's details
  await t.db.query(
    "UPDATE transactions SET details = (details - 'cardholder_name_sealed') || jsonb_build_object('cardholder_name', 'Old Clear-Name') WHERE id = $1",
    [txnId],
  );
  await t.db.exec("DROP TABLE holder_names_to_seal; DELETE FROM schema_migrations WHERE name = '085_encrypt_holder_names.sql'");
  assert.deepEqual(await migrate(t.db), ['085_encrypt_holder_names.sql']);
  const [moved] = await t.db.query<{ details: string }>('SELECT details::text AS details FROM transactions WHERE id = $1', [txnId]);
  assert.ok(!moved.details.includes('Old Clear-Name'), 'the migration took the name out of the transaction');
  assert.equal(await sealPendingHolderNames(t.svc.ctx), 1);
  assert.ok(!(await allRows()).includes('Old Clear-Name'), 'no clear name left');
  const got = await t.api('GET', `/v1/orders/${paid.order.id}/`);
  assert.equal(got.body.transactions[0].payment_method_details.cardholder_name, 'Old Clear-Name');
  assert.equal(await sealPendingHolderNames(t.svc.ctx), 0, 'nothing left to do at the next start');
});

test('the log serializer drops query strings and masks digit runs that could be card numbers', () => {
  assert.equal(logUrl('/v1/orders/?api_key=test_abc&x=1'), '/v1/orders/');
  assert.equal(logUrl('/pay/4111111111111111/'), '/pay/[masked]/');
  assert.equal(maskDigits('card 4111 1111 1111 1111 and 4111-1111-1111-1111 end'), 'card [masked] and [masked] end');
  assert.equal(maskDigits('order 12345678901 of 2026'), 'order 12345678901 of 2026', 'shorter runs are not card numbers');
  // an id whose digits run on across its dashes (01a2|1511-8176-7123-9456|...) stays searchable
  assert.equal(logUrl('/v1/orders/01a21511-8176-7123-9456-aabbccddeeff/'), '/v1/orders/01a21511-8176-7123-9456-aabbccddeeff/');
  assert.equal(maskDigits('a UUID-shaped run of digits 41111111-1111-1111-1111-111111111111'), 'a UUID-shaped run of digits [masked]');
  assert.equal(
    maskDigits('4111111111111111 beside 01a21511-8176-7fe6-becb-5fc9f4bdfeaa'),
    '[masked] beside 01a21511-8176-7fe6-becb-5fc9f4bdfeaa',
  );
});
