import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, request, type TestService } from '../helpers/service.ts';
import { createCardOrder, futureExpiry, vault } from '../helpers/cards.ts';
import { moneyClient } from '../helpers/money.ts';
import { payOrder } from '../helpers/pay.ts';

/**
 * Round trips to the database per request of the card flow and the money operations
 * (issue 20): every statement the store sends is counted (Db.observe), BEGIN and COMMIT
 * included, with the job worker off so that only the request's own statements are seen. A later
 * change that adds a round trip to one of these steps fails here; change the figure on purpose.
 * The counts are the same on PGlite (its transaction's BEGIN and COMMIT are counted as well).
 */
let t: TestService;
before(async () => {
  t = await startTestService({ env: { TENDER_WORKER: 'off' } });
});
after(async () => t?.close());

const { capture, voidAll, refund, preauth, sale, ledgerSound } = moneyClient(() => t);

/** The statements `fn` made the store send. */
async function counted<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const stop = t.db.observe((sql) => statements.push(sql.replace(/\s+/g, ' ').trim().slice(0, 90)));
  try {
    return { result: await fn(), statements };
  } finally {
    stop();
  }
}

/** The most round trips each step may take (docs/performance-cards.md has the before and after). */
const LIMIT = { create: 2, vault: 3, authenticate: 3, threeDs: 3, capture: 3, void: 3, refund: 3 };

function expectAtMost(step: keyof typeof LIMIT, statements: string[]) {
  assert.ok(statements.length <= LIMIT[step], `${step}: ${statements.length} round trips, at most ${LIMIT[step]}:\n  ${statements.join('\n  ')}`);
}

test('the card flow: create, vault, authenticate and the 3-D Secure page each take few round trips', async () => {
  const create = await counted(() => createCardOrder(t));
  const { order, txn, setup_token } = create.result;
  const stored = await counted(() => vault(t, { pan: '4111111111111111', expiry: futureExpiry(), name: 'Ada Lovelace', setup_token }));
  assert.equal(stored.result.status, 201, stored.result.text);
  const auth = await counted(() => t.api('POST', `/v1/orders/${order.id}/transactions/${txn.id}/authenticate/`, { vault_token: stored.result.body.vault_token, cvc: '123' }));
  assert.equal(auth.result.status, 200, auth.result.text);
  const page = await counted(() => request(auth.result.body.redirect_url, 'GET'));
  assert.equal(page.result.status, 302, page.result.text);
  const after = (await t.api('GET', `/v1/orders/${order.id}/`)).body;
  assert.equal(after.status, 'completed');
  console.log(JSON.stringify({ create: create.statements, vault: stored.statements, authenticate: auth.statements, threeDs: page.statements }, null, 1));
  expectAtMost('create', create.statements);
  expectAtMost('vault', stored.statements);
  expectAtMost('authenticate', auth.statements);
  expectAtMost('threeDs', page.statements);
  await ledgerSound();
});

test('capture, void and refund each take few round trips', async () => {
  const held = await preauth();
  const captured = await counted(() => capture(held));
  assert.equal(captured.result.status, 201, captured.result.text);
  const other = await preauth();
  const voided = await counted(() => voidAll(other));
  assert.equal(voided.result.status, 201, voided.result.text);
  const paid = await sale();
  const refunded = await counted(() => refund(paid, 500));
  assert.equal(refunded.result.status, 201, refunded.result.text);
  console.log(JSON.stringify({ capture: captured.statements, void: voided.statements, refund: refunded.statements }, null, 1));
  expectAtMost('capture', captured.statements);
  expectAtMost('void', voided.statements);
  expectAtMost('refund', refunded.statements);
  await ledgerSound();
});

void payOrder;
