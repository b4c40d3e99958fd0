// Issue 41: a portal capture, void and refund, each at the acquirer when the service is SIGKILLed
// (the acquirer does them after the kill). Before, the portal held a transaction across the call:
// the kill rolled back the attempts while the acquirer had moved the money, the capture was lost
// (the host captured, Tender not) and the refund form sent again refunded twice. Now each attempt
// is committed before its call and named by the form's token: the restarted service recovers
// them, the same forms sent again find the same attempts, and the acquirer is asked once each.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';
import { withFaults } from '../../src/acquirer/faults.ts';
import { serveConnector } from '../helpers/acquirer-server.ts';
import { childStore, killed, sleep, waitFor } from '../helpers/child-service.ts';
import { runTender } from '../helpers/cli.ts';
import { basic, request, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient } from '../helpers/portal.ts';
import type { Json } from '../helpers/json.ts';

const store = childStore('portalkill');
const MONEY = ['capture', 'void', 'refund'];

test('portal capture, void and refund killed mid-call: recovered, and the resent forms act once', { timeout: 300_000 }, async () => {
  // the first capture, void and refund are done by the acquirer 3 s after they are asked
  const delayed = new Set<string>();
  const acquirer = withFaults(createSimulator({ settleMs: 0 }), {
    rule: (c) => (MONEY.includes(c.method) && !delayed.has(c.method) ? (delayed.add(c.method), 'delay') : 'none'),
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
  const created = await runTender(['project', 'create', '--name', 'Portal kill shop', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const project = JSON.parse(created.stdout.trim()) as { api_key: string; project_id: string; merchant_id: string };
  const made = await runTender(['user', 'create', '--merchant', project.merchant_id, '--email', 'ops@shop.example', '--json'], env);
  assert.equal(made.code, 0, made.stderr);
  const user = JSON.parse(made.stdout.trim()) as { email: string; password: string };

  // the helpers' view of a service in a child process
  const auth = { authorization: basic(project.api_key) };
  const t = {
    url,
    config: { vaultUrl: `${url}/vault`, portalUrl: `${url}/portal` },
    project,
    api: (method: string, path: string, body?: unknown) => request(`${url}${path}`, method, body, auth),
  } as unknown as TestService;
  const preauth = await payOrder(t, { amount: 2500 }, { capture_mode: 'manual' });
  const voided = await payOrder(t, { amount: 1800 }, { capture_mode: 'manual' });
  const sale = await payOrder(t, { amount: 3000 });

  const c = new PortalClient(t);
  assert.equal((await c.signIn(user.email, user.password)).status, 303);
  const orders = `/projects/${project.project_id}/orders/`;
  await c.get(`${orders}${sale.id}/`);
  const forms: Array<[string, Record<string, string>]> = [
    [preauth.id, { action: 'capture', transaction_id: preauth.transactions[0].id, token: 'kill-capture-000001' }],
    [voided.id, { action: 'void', transaction_id: voided.transactions[0].id, token: 'kill-void-000000001' }],
    [sale.id, { action: 'refund', amount: '700', token: 'kill-refund-0000001' }],
  ];
  const send = ([id, form]: (typeof forms)[number]) => c.post(`${orders}${id}/actions`, form);

  const sent = forms.map((f) => send(f).catch(() => undefined));
  await waitFor('the three calls at the acquirer', async () => acquirer.injected.delay === 3);
  await sleep(500);
  await killed(child);
  for (const s of sent) assert.equal(await s, undefined, 'the browser had no answer');
  const done = (kind: string) => [...acquirer.acquirer.values()].filter((r) => r.kind === kind);
  await waitFor('the acquirer to do them', async () => MONEY.every((k) => done(k).length === 1));

  child = await store.serve(env, url);
  // the same forms sent again (the session outlives the restart): told the action is in
  // progress until recovery applied the acquirer's answer, then its result; never a second call
  for (const f of forms) {
    let res = await send(f);
    for (let i = 0; res.status !== 303 && i < 180; i++) {
      assert.match(res.text, /in progress|still being processed/, `${f[1].action}: ${res.status}`);
      await sleep(500);
      res = await send(f);
    }
    assert.equal(res.status, 303, res.text);
    assert.match(res.location ?? '', new RegExp(`/orders/${f[0]}/\\?done=${f[1].action}$`));
    assert.equal((await send(f)).status, 303, 'sent once more: its stored result');
  }
  assert.deepEqual(
    MONEY.map((k) => done(k).map((r) => [r.outcome.status, r.amount, r.calls])),
    [[['accepted', 2500, 1]], [['accepted', 1800, 1]], [['accepted', 700, 1]]],
    'one capture, one void, one refund at the acquirer, each asked once',
  );
  const get = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body as Json;
  assert.equal((await get(preauth.id)).transactions[0].status, 'completed');
  assert.notEqual((await get(voided.id)).transactions[0].status, 'accepted');
  assert.equal((await get(sale.id)).refunded_amount, 700);
  const ledger = await runTender(['ledger', 'check'], env);
  assert.equal(ledger.code, 0, ledger.stdout + ledger.stderr);
  await killed(child);
});
