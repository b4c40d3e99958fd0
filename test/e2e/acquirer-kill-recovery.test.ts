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

/** A service on `s` whose acquirer is `acquirerUrl`, with a project of its own: its env, URL, child and the key's header. */
async function killableService(s: typeof store, acquirerUrl: string, timeoutMs: number, name: string) {
  const { env, url } = await s.env({
    TENDER_TEST_ACQUIRER_URL: acquirerUrl,
    ACQUIRER_TIMEOUT_MS: String(timeoutMs),
    ACQUIRER_RECOVERY_MS: '8000',
    TENDER_WORKER_POLL_MS: '200',
    LOG_LEVEL: 'error',
  });
  const child = await s.serve(env, url);
  const created = await runTender(['project', 'create', '--name', name, '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const project = JSON.parse(created.stdout.trim()) as { api_key: string };
  return { env, url, child, auth: { authorization: basic(project.api_key) } };
}

/** A pre-authorization of `amount` paid through the vault, authenticate and the 3-D Secure page: its order and transaction. */
async function preauthorized(url: string, auth: Record<string, string>, amount: number) {
  const api = (method: string, path: string, body?: unknown) => request(`${url}${path}`, method, body, auth);
  const created = await api('POST', '/v1/orders/', cardOrder({ amount }, { capture_mode: 'manual' }));
  assert.equal(created.status, 201, created.text);
  const txn = created.body.transactions[0];
  const card = await request(
    `${url}/vault/v1/cards/`,
    'POST',
    {
      pan: '4111111111111111',
      expiry: futureExpiry(),
      name: 'Ada Lovelace',
      setup_token: txn.payment_method_details.setup_token,
    },
    auth,
  );
  assert.equal(card.status, 201, card.text);
  const a = await api('POST', `/v1/orders/${created.body.id}/transactions/${txn.id}/authenticate/`, {
    vault_token: card.body.vault_token,
    cvc: '123',
  });
  assert.equal(a.status, 200, a.text);
  await (await fetch(a.body.redirect_url, { redirect: 'manual' })).arrayBuffer();
  const paid = await api('GET', `/v1/orders/${created.body.id}/`);
  assert.equal(paid.body.transactions[0].status, 'accepted', paid.text);
  return { o: created.body as { id: string }, txn: txn as { id: string } };
}

/** The simulator behind a socket, its captures done 3 s after they are asked (all, or only the first). */
async function serveDelayedCaptures(opts: { onlyFirst: boolean }) {
  const acquirer = withFaults(createSimulator({ settleMs: 0 }), {
    rule: (c): Fault => (c.method === 'capture' && (!opts.onlyFirst || acquirer.injected.delay === 0) ? 'delay' : 'none'),
    delayMs: 3000,
  });
  const served = await serveConnector(acquirer);
  after(() => served.close());
  return { acquirer, served };
}

test('a capture at the acquirer when the service is killed is applied by the restarted one', { timeout: 240_000 }, async () => {
  // the capture is done by the acquirer 3 s after it was asked: the service is dead by then
  const { acquirer, served } = await serveDelayedCaptures({ onlyFirst: false });
  const started = await killableService(store, served.url, 5000, 'Kill shop');
  const { env, url, auth } = started;
  let child = started.child;
  const api = (method: string, path: string, body?: unknown) => request(`${url}${path}`, method, body, auth);

  const { o, txn } = await preauthorized(url, auth, 2000);

  const capture = api('POST', `/v1/orders/${o.id}/transactions/${txn.id}/captures/`).catch(() => undefined);
  await waitFor('the capture at the acquirer', async () => acquirer.injected.delay > 0);
  await sleep(500);
  await killed(child);
  assert.equal(await capture, undefined, 'the client had no answer');
  await waitFor('the acquirer to do the capture', async () => [...acquirer.acquirer.values()].some((r) => r.kind === 'capture'));

  child = await store.serve(env, url);
  await waitFor(
    'the recovered capture',
    async () => {
      const got = await api('GET', `/v1/orders/${o.id}/`);
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

const keyedStore = childStore('killkey');

// The same with an Idempotency-Key: the key is claimed and committed before the call (no
// transaction stays open across it), the service dies, and the client retries with the key. While
// the dead request's claim lasts the retry is told to wait (409); then it is answered with the
// attempt the key named (its id derives from the key): the capture order, and the acquirer was
// asked once. Before, the request ran in one transaction with its key: the kill rolled back the
// attempt while the acquirer had the capture, and the retry captured again.
test(
  'a keyed capture at the acquirer when the service is killed: the retry answers it, the acquirer captured once',
  { timeout: 240_000 },
  async () => {
    const { acquirer, served } = await serveDelayedCaptures({ onlyFirst: true });
    const started = await killableService(keyedStore, served.url, 4000, 'Keyed kill shop');
    const { env, url, auth } = started;
    let child = started.child;
    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      request(`${url}${path}`, method, body, { ...auth, ...headers });

    const { o, txn } = await preauthorized(url, auth, 2500);

    const path = `/v1/orders/${o.id}/transactions/${txn.id}/captures/`;
    const key = { 'idempotency-key': 'capture-once-1' };
    const capture = api('POST', path, undefined, key).catch(() => undefined);
    await waitFor('the capture at the acquirer', async () => acquirer.injected.delay > 0);
    // a second request with the key while the first is at the acquirer: told to wait while the
    // first one's claim holds (10 s), else it joins the first one's attempt (and dies with it)
    const duplicate = await api('POST', path, undefined, key).catch(() => undefined);
    if (duplicate) assert.deepEqual([duplicate.status, duplicate.body.error?.type], [409, 'IdempotencyError'], duplicate.text);
    await killed(child);
    assert.equal(await capture, undefined, 'the client had no answer');
    await waitFor('the acquirer to do the capture', async () => [...acquirer.acquirer.values()].some((r) => r.kind === 'capture'));

    child = await keyedStore.serve(env, url);
    // the dead request's claim lasts 10 s: the retry may be told to wait (409 IdempotencyError),
    // then that the capture is in progress (409) until the recovery job has asked the acquirer
    // about it, then gets the capture; never anything else
    const answers = new Set<string>();
    let retry = await api('POST', path, undefined, key);
    for (let i = 0; retry.status === 409 && i < 180; i++) {
      answers.add(retry.body.error.type);
      await sleep(500);
      retry = await api('POST', path, undefined, key);
    }
    assert.ok(
      [...answers].every((t) => ['IdempotencyError', 'CanNotCaptureTransaction'].includes(t)),
      [...answers].join(),
    );
    assert.equal(retry.status, 201, retry.text);
    assert.equal(retry.body.amount, 2500);
    assert.equal(retry.body.status, 'completed', retry.text);
    const again = await api('POST', path, undefined, key);
    assert.equal(again.status, 201, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.id, retry.body.id);
    const paid = await api('GET', `/v1/orders/${o.id}/`);
    assert.equal(paid.body.transactions[0].status, 'completed', paid.text);
    const captures = [...acquirer.acquirer.values()].filter((r) => r.kind === 'capture');
    assert.deepEqual(
      captures.map((r) => [r.outcome.status, r.amount]),
      [['accepted', 2500]],
      'one capture at the acquirer',
    );
  },
);
