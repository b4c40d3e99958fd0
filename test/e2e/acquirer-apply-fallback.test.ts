import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';
import { holding } from '../helpers/holding.ts';
import { startTestService, request, type TestService } from '../helpers/service.ts';
import { createCardOrder, futureExpiry, vault } from '../helpers/cards.ts';
import { moneyClient } from '../helpers/money.ts';

/**
 * An acquirer's answer is applied in one statement planned from the rows the record read, gated
 * on their being as the record left them (docs/money.md "Acquirer attempts"). Here someone changes
 * the payment while its call is at the acquirer (a connector that holds the call until the test
 * lets it go): the gated statement writes nothing, and the locked apply plans again from the rows
 * as they are. Both stores; the job worker is off so that only the request's statements are seen.
 */

const acquirer = holding(createSimulator({ settleMs: 0 }));
let t: TestService;
before(async () => {
  t = await startTestService({ testConnector: acquirer.connector, env: { TENDER_WORKER: 'off' } });
});
after(async () => t?.close());

const { preauth, capture, voidPart, ledgerSound } = moneyClient(() => t);

/** Statements the store sends while `fn` runs. */
async function sent(fn: () => Promise<void>) {
  const statements: string[] = [];
  const stop = t.db.observe((sql) => statements.push(sql.replace(/\s+/g, ' ').trim()));
  try {
    await fn();
  } finally {
    stop();
  }
  return statements;
}

/**
 * The apply's statements: the gated one wrote nothing, then the locked apply: the lock, the read
 * once the lock is held (so it sees what the holder of the lock recorded), and its write.
 */
function fellBack(statements: string[]) {
  assert.equal(statements.length, 4, statements.map((s) => s.slice(0, 100)).join('\n'));
  assert.match(statements[0], /FOR UPDATE SKIP LOCKED/, 'first the statement gated on the rows as recorded');
  assert.match(statements[1], /FROM acquirer_attempts x .* FOR UPDATE OF t, o/, 'then the lock');
  assert.match(statements[2], /^SELECT to_jsonb\(t\)/, 'then the read');
  assert.match(statements[3], /^WITH /, 'then the write');
}

test('authenticate: the order changed while the 3-D Secure server is asked, the locked apply starts the transaction', async () => {
  const { order, txn, setup_token } = await createCardOrder(t);
  const stored = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token });
  const held = acquirer.holdNext('authenticate3ds');
  const started = t.api('POST', `/v1/orders/${order.id}/transactions/${txn.id}/authenticate/`, {
    vault_token: stored.body.vault_token,
    cvc: '123',
  });
  await held.reached;
  await t.db.query(`UPDATE orders SET body = body || '{"note": "kept"}' WHERE id = $1`, [order.id]);
  let answer!: Awaited<typeof started>;
  const statements = await sent(async () => {
    held.release();
    answer = await started;
  });
  assert.equal(answer.status, 200, answer.text);
  assert.equal(statements.length, 3, statements.map((s) => s.slice(0, 100)).join('\n'));
  assert.match(statements[0], /FOR UPDATE SKIP LOCKED/);
  assert.match(statements[1], /FOR UPDATE OF t, o/, 'the locking read of the start');
  const view = (await t.api('GET', `/v1/orders/${order.id}/`)).body;
  assert.deepEqual(
    view.transactions[0].events.map((e: { event: string }) => e.event),
    ['new', 'pending'],
  );
  const [row] = await t.db.query<{ body: Record<string, unknown>; n: number }>(
    'SELECT o.body, (SELECT count(*)::int FROM card_authentications a WHERE a.transaction_id = $2) AS n FROM orders o WHERE o.id = $1',
    [order.id, txn.id],
  );
  assert.equal(row.body.note, 'kept');
  assert.equal(row.n, 1, 'one 3-D Secure row');
});

test('the 3-D Secure page: the transaction changed while the authorization is at the acquirer, the locked apply takes over', async () => {
  const { order, txn, setup_token } = await createCardOrder(t);
  const stored = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token });
  const auth = await t.api('POST', `/v1/orders/${order.id}/transactions/${txn.id}/authenticate/`, {
    vault_token: stored.body.vault_token,
    cvc: '123',
  });
  assert.equal(auth.status, 200, auth.text);
  const held = acquirer.holdNext('authorize');
  const page = request(auth.body.redirect_url, 'GET');
  await held.reached;
  // another writer of the transaction's row, between the record and the apply
  await t.db.query(`UPDATE transactions SET details = details || '{"note": "kept"}' WHERE id = $1`, [txn.id]);
  let answer!: Awaited<typeof page>;
  const statements = await sent(async () => {
    held.release();
    answer = await page;
  });
  assert.equal(answer.status, 302, answer.text);
  fellBack(statements);
  const [row] = await t.db.query<{ status: string; details: Record<string, unknown> }>(
    'SELECT status, details FROM transactions WHERE id = $1',
    [txn.id],
  );
  assert.equal(row.status, 'accepted');
  // planned from the row as it is now: the other writer's change survives the apply
  assert.equal(row.details.note, 'kept');
  assert.equal(row.details.liability_shift, true);
  const [{ n }] = await t.db.query<{ n: number }>(
    'SELECT count(DISTINCT journal_id)::int AS n FROM ledger_entries WHERE payment_transaction_id = $1',
    [txn.id],
  );
  assert.equal(n, 1, 'one sale journal');
  const [attempt] = await t.db.query<{ status: string }>(
    "SELECT status FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'authorization'",
    [txn.id],
  );
  assert.equal(attempt.status, 'succeeded');
  assert.equal((await t.api('GET', `/v1/orders/${order.id}/`)).body.status, 'completed');
  await ledgerSound();
});

test('a partial void at the acquirer while a capture of the rest completes: the void is applied to the payment as it is then', async () => {
  const o = await preauth();
  const held = acquirer.holdNext('void');
  const part = voidPart(o, 500);
  await held.reached;
  // the capture takes what the void in flight leaves, and closes the authorization, in one round trip of its apply
  const captured = await capture(o);
  assert.equal(captured.status, 201, captured.text);
  assert.equal(captured.body.amount, o.amount - 500);
  assert.equal(captured.body.status, 'completed');
  let voided!: Awaited<typeof part>;
  const statements = await sent(async () => {
    held.release();
    voided = await part;
  });
  assert.equal(voided.status, 201, voided.text);
  assert.equal(voided.body.status, 'completed');
  fellBack(statements);
  const [txn] = await t.db.query<{ status: string; captured_amount: string; voided_amount: string }>(
    'SELECT status, captured_amount, voided_amount FROM transactions WHERE id = $1',
    [o.transactions[0].id],
  );
  assert.deepEqual([txn.status, Number(txn.captured_amount), Number(txn.voided_amount)], ['completed', o.amount - 500, 500]);
  await ledgerSound();
});
