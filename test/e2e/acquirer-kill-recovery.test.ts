// The service is SIGKILLed while a capture's call is at the acquirer (which does it after the
// kill): the attempt is recorded, never applied, and the client has no answer. The restarted
// process recovers it (its job, inquiry: accepted) and the capture completes, once. On PGlite the
// restarted service used to hang for good here (its /readyz never answered again): the capture
// order was rendered inside the apply's transaction, and the project's data key, not yet cached in
// the new process, was read from outside that transaction, which waited for it. Found by the chaos
// test (test/e2e/acquirer-chaos.test.ts), which reaches this case by chance; here it is every time.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';
import { withFaults, type Fault } from '../../src/acquirer/faults.ts';
import { serveConnector } from '../helpers/acquirer-server.ts';
import { childStore, killed, sleep, waitFor } from '../helpers/child-service.ts';
import { runTender } from '../helpers/cli.ts';
import { basic, cardOrder, request } from '../helpers/service.ts';
import { futureExpiry } from '../helpers/cards.ts';

const store = childStore('killrec');

test('a capture at the acquirer when the service is killed is applied by the restarted one', { timeout: 240_000 }, async () => {
  // the capture is done by the acquirer 3 s after it was asked: the service is dead by then
  const acquirer = withFaults(createSimulator({ settleMs: 0 }), {
    rule: (c): Fault => (c.method === 'capture' ? 'delay' : 'none'),
    delayMs: 3000,
  });
  const served = await serveConnector(acquirer);
  after(() => served.close());
  const { env, url } = await store.env({
    TENDER_TEST_ACQUIRER_URL: served.url,
    ACQUIRER_TIMEOUT_MS: '5000',
    ACQUIRER_RECOVERY_MS: '8000',
    TENDER_WORKER_POLL_MS: '200',
    LOG_LEVEL: 'error',
  });
  let child = await store.serve(env, url);
  const created = await runTender(['project', 'create', '--name', 'Kill shop', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const project = JSON.parse(created.stdout.trim()) as { api_key: string };
  const auth = { authorization: basic(project.api_key) };
  const api = (method: string, path: string, body?: unknown) => request(`${url}${path}`, method, body, auth);

  const o = await api('POST', '/v1/orders/', cardOrder({ amount: 2000 }, { capture_mode: 'manual' }));
  assert.equal(o.status, 201, o.text);
  const txn = o.body.transactions[0];
  const card = await request(
    `${url}/vault/v1/cards/`,
    'POST',
    { pan: '4111111111111111', expiry: futureExpiry(), name: 'Ada Lovelace', setup_token: txn.payment_method_details.setup_token },
    auth,
  );
  assert.equal(card.status, 201, card.text);
  const a = await api('POST', `/v1/orders/${o.body.id}/transactions/${txn.id}/authenticate/`, {
    vault_token: card.body.vault_token,
    cvc: '123',
  });
  assert.equal(a.status, 200, a.text);
  const page = await fetch(a.body.redirect_url, { redirect: 'manual' });
  await page.arrayBuffer();
  const paid = await api('GET', `/v1/orders/${o.body.id}/`);
  assert.equal(paid.body.transactions[0].status, 'accepted', paid.text);

  const capture = api('POST', `/v1/orders/${o.body.id}/transactions/${txn.id}/captures/`).catch(() => undefined);
  await waitFor('the capture at the acquirer', async () => acquirer.injected.delay > 0);
  await sleep(500);
  await killed(child);
  assert.equal(await capture, undefined, 'the client had no answer');
  await waitFor('the acquirer to do the capture', async () => [...acquirer.acquirer.values()].some((r) => r.kind === 'capture'));

  child = await store.serve(env, url);
  await waitFor(
    'the recovered capture',
    async () => {
      const got = await api('GET', `/v1/orders/${o.body.id}/`);
      return got.body.transactions[0].status === 'completed';
    },
    90_000,
  );
  const captures = [...acquirer.acquirer.values()].filter((r) => r.kind === 'capture');
  assert.deepEqual(
    captures.map((r) => [r.outcome.status, r.amount]),
    [['accepted', 2000]],
    'one capture at the acquirer',
  );
});
