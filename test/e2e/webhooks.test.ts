// Webhooks end to end against a real HTTP receiver on 127.0.0.1 (test projects may call loopback).
// Retries are 1 minute apart in the project's clock, so tests move them with run-due-jobs; the
// timeout is 2 s so a slow receiver costs seconds, not minutes. Each test has its own project.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { LOCAL_RECEIVERS, startTestService, validOrder, cardOrder, type TestService } from '../helpers/service.ts';
import { commands } from '../../src/cli/commands.ts';
import { findOrder } from '../../src/store/payments/orders.ts';
import { setOrderStatus } from '../../src/services/payments/transitions.ts';
import { findProject } from '../../src/store/platform/projects.ts';
import { createOrder } from '../../src/services/payments/orders.ts';
import { nowFor } from '../../src/services/platform/context.ts';
import { publicOnlyLookup } from '../../src/services/webhooks/delivery.ts';
import type { CreatedProject } from '../../src/services/platform/tenancy.ts';
import type { Json } from '../helpers/json.ts';

type Project = CreatedProject; // with the webhook_secret shown at creation
interface Call {
  headers: IncomingHttpHeaders;
  body: string;
}
type Respond = (call: Call, n: number, res: ServerResponse) => { status?: number; delayMs?: number } | 'handled' | void;

let t: TestService;
const receivers: Array<() => Promise<void>> = [];

before(async () => {
  // every attempt reaches the receiver here: no circuit breaker (webhook-fairness.test.ts has it)
  t = await startTestService({
    env: {
      ...LOCAL_RECEIVERS,
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_INTERVAL_MS: '60000',
      WEBHOOK_MAX_ATTEMPTS: '10',
      WEBHOOK_BREAKER_FAILURES: '0',
    },
  });
});
after(async () => {
  for (const close of receivers) await close();
  await t?.close();
});

async function receiver(respond: Respond = () => undefined) {
  const calls: Call[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const call = { headers: req.headers, body };
      calls.push(call);
      const r = respond(call, calls.length, res);
      if (r === 'handled') return;
      const reply = () => {
        if (!res.destroyed) res.writeHead(r?.status ?? 200, { 'content-type': 'text/plain' }).end('ok');
      };
      if (r?.delayMs) setTimeout(reply, r.delayMs).unref();
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  receivers.push(close);
  return { url: `http://127.0.0.1:${port}/hook`, calls };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

const newProject = async (mode?: 'test' | 'live'): Promise<Project> => t.newProject(mode);
const as = (p: Project) => ({ key: p.api_key });
const log = async (p: Project, orderId: string) => {
  const res = await t.api('GET', `/v1/orders/${orderId}/webhooks/`, undefined, as(p));
  assert.equal(res.status, 200, res.text);
  return res.body as { order_id: string; deliveries: Json[] };
};
const runDue = async (p: Project, advance?: string) => {
  const res = await t.api('POST', '/v1/test/clock/run-due-jobs/', advance ? { advance } : {}, as(p));
  assert.equal(res.status, 200, res.text);
};
/** An order of project p, cancelled: one status change. */
async function cancelledOrder(p: Project, over: Record<string, unknown> = {}) {
  const o = await t.api('POST', '/v1/orders/', validOrder(over), as(p));
  assert.equal(o.status, 201, o.text);
  const c = await t.api('DELETE', `/v1/orders/${o.body.id}/`, undefined, as(p));
  assert.equal(c.status, 200, c.text);
  return o.body.id as string;
}
/** No delivery job left for the order: nothing more will be sent unless something new happens. */
const idle = (orderId: string) =>
  waitFor(
    'the delivery job to finish',
    async () => (await t.db.query("SELECT 1 FROM jobs WHERE kind = 'deliver_webhook' AND ref_id = $1", [orderId])).length === 0,
  );
const verify = (secret: string, call: Call) => new Webhook(secret).verify(call.body, call.headers as Record<string, string>);

test('first try: one signed POST of {event, order_id, project_id}, logged as succeeded', async () => {
  const p = await newProject();
  const r = await receiver();
  const id = await cancelledOrder(p, { webhook_url: r.url });
  await waitFor('the webhook', () => r.calls.length === 1);
  const [call] = r.calls;
  assert.deepEqual(JSON.parse(call.body), { event: 'status_changed', order_id: id, project_id: p.project_id });
  assert.match(String(call.headers['content-type']), /^application\/json/);
  assert.deepEqual(verify(p.webhook_secret!, call), { event: 'status_changed', order_id: id, project_id: p.project_id });
  const d = await waitFor('succeeded', async () => (await log(p, id)).deliveries.find((x) => x.status === 'succeeded'));
  assert.equal(call.headers['webhook-id'], d.id);
  assert.equal(d.url, r.url);
  assert.equal(d.target, 'order');
  assert.equal(d.order_status, 'cancelled');
  assert.equal(d.resend, false);
  assert.equal(d.next_attempt, undefined);
  assert.equal(d.attempts.length, 1);
  assert.equal(d.attempts[0].attempt, 1);
  assert.equal(d.attempts[0].response_status, 200);
  assert.equal(d.attempts[0].error, undefined);
  assert.equal(d.attempts[0].next_retry, undefined);
  assert.equal(d.attempts[0].url, r.url);
  assert.ok(Number.isInteger(d.attempts[0].duration_ms));
  assert.match(d.attempts[0].time, /^\d{4}-\d\d-\d\dT.*\+00:00$/);
});

test('a 500 is retried a retry interval later in the project clock, then succeeds', async () => {
  const p = await newProject();
  const r = await receiver((_c, n) => ({ status: n === 1 ? 500 : 204 }));
  const id = await cancelledOrder(p, { webhook_url: r.url });
  const first = await waitFor(
    'first attempt',
    async () => (await log(p, id)).deliveries[0]?.attempts.length === 1 && (await log(p, id)).deliveries[0],
  );
  assert.equal(first.status, 'pending');
  assert.equal(first.attempts[0].response_status, 500);
  assert.equal(new Date(first.next_attempt).getTime(), new Date(first.attempts[0].next_retry).getTime());
  assert.ok(new Date(first.next_attempt).getTime() - new Date(first.attempts[0].time).getTime() >= 60_000);
  await runDue(p); // not due yet in the project clock
  assert.equal(r.calls.length, 1);
  await runDue(p, 'PT1M');
  const done = await waitFor('success', async () => (await log(p, id)).deliveries.find((x) => x.status === 'succeeded'));
  assert.deepEqual(
    done.attempts.map((a: Json) => a.response_status),
    [500, 204],
  );
  assert.equal(r.calls.length, 2);
  assert.equal(r.calls[0].headers['webhook-id'], r.calls[1].headers['webhook-id']); // the same message, retried
  for (const c of r.calls) assert.ok(verify(p.webhook_secret!, c));
});

test('a receiver slower than the timeout counts as a failure', async () => {
  const p = await newProject();
  const r = await receiver((_c, n) => (n === 1 ? { status: 200, delayMs: 5000 } : { status: 200 }));
  const id = await cancelledOrder(p, { webhook_url: r.url });
  const first = await waitFor('first attempt', async () => (await log(p, id)).deliveries[0]?.attempts[0]);
  assert.match(first.error, /^timeout/);
  assert.equal(first.response_status, undefined);
  assert.ok(first.next_retry);
  assert.equal((await log(p, id)).deliveries[0].status, 'pending');
  await runDue(p, 'PT1M');
  const done = await waitFor('success', async () => (await log(p, id)).deliveries.find((x) => x.status === 'succeeded'));
  assert.equal(done.attempts.length, 2);
  assert.equal(done.attempts[1].response_status, 200);
});

test('a receiver that answers with an endless body does not hold the worker', async () => {
  const p = await newProject();
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const r = await receiver((_c, _n, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(chunk)), 5);
    timer.unref();
    return 'handled';
  });
  const id = await cancelledOrder(p, { webhook_url: r.url });
  const done = await waitFor('success', async () => (await log(p, id)).deliveries.find((x) => x.status === 'succeeded'));
  assert.equal(done.attempts[0].response_status, 200);
  // the worker moved on: another order's webhook to a normal receiver goes out too
  const ok = await receiver();
  await cancelledOrder(p, { webhook_url: ok.url });
  await waitFor('the next webhook', () => ok.calls.length === 1);
});

test('ten failures end as failed, and nothing is sent after', async () => {
  const p = await newProject();
  const r = await receiver(() => ({ status: 500 }));
  const id = await cancelledOrder(p, { webhook_url: r.url });
  for (let n = 1; n <= 10; n++) {
    await waitFor(`attempt ${n}`, async () => (await log(p, id)).deliveries[0]?.attempts.length === n);
    if (n < 10) await runDue(p, 'PT1M');
  }
  const [d] = (await log(p, id)).deliveries;
  assert.equal(d.status, 'failed');
  assert.equal(d.next_attempt, undefined);
  assert.ok(d.completed);
  assert.equal(d.attempts.length, 10);
  assert.deepEqual(
    d.attempts.map((a: Json) => a.attempt),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  assert.ok(d.attempts.slice(0, 9).every((a: Json) => a.next_retry && a.response_status === 500));
  assert.equal(d.attempts[9].next_retry, undefined);
  await idle(id);
  await runDue(p, 'PT10M');
  assert.equal(r.calls.length, 10);
});

test('a status change sends exactly one delivery: cancel, and expiry through run-due-jobs', async () => {
  const p = await newProject();
  const r = await receiver();
  const o = await t.api('POST', '/v1/orders/', cardOrder({ webhook_url: r.url }), as(p));
  assert.equal((await t.api('DELETE', `/v1/orders/${o.body.id}/`, undefined, as(p))).status, 200);
  const e = await t.api('POST', '/v1/orders/', cardOrder({ webhook_url: r.url }, { expiration_period: 'PT10M' }), as(p));
  await runDue(p, 'PT11M');
  await idle(o.body.id);
  await idle(e.body.id);
  await runDue(p, 'PT5M');
  for (const [id, status] of [
    [o.body.id, 'cancelled'],
    [e.body.id, 'expired'],
  ]) {
    const outbox = await t.db.query('SELECT status FROM outbox WHERE order_id = $1', [id]);
    assert.deepEqual(
      outbox.map((x) => x.status),
      [status],
    );
    const { deliveries } = await log(p, id);
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0].order_status, status);
    assert.equal(deliveries[0].attempts.length, 1);
    assert.equal(r.calls.filter((c) => JSON.parse(c.body).order_id === id).length, 1);
  }
  assert.equal(r.calls.length, 2);
});

test('deliveries of one order go out in order: a later one waits while an earlier one is pending', async () => {
  const p = await newProject();
  const r = await receiver((_c, n) => ({ status: n === 1 ? 503 : 200 }));
  const o = await t.api('POST', '/v1/orders/', validOrder({ webhook_url: r.url }), as(p));
  const id = o.body.id;
  const project = (await findProject(t.db, p.project_id))!;
  for (const status of ['processing', 'completed'] as const) {
    await t.db.tx(async (q) => setOrderStatus(t.svc.ctx, q, (await findOrder(q, p.project_id, id, true))!, status, nowFor(project)));
  }
  const resent = await t.api('POST', `/v1/orders/${id}/webhooks/resend/`, undefined, as(p));
  assert.equal(resent.status, 202, resent.text);
  // the first failed and waits for its retry; the job sleeps until then; the others were not tried
  await waitFor('the first attempt', async () => (await log(p, id)).deliveries[0]?.attempts.length === 1);
  await waitFor('the job to sleep', async () => {
    const [job] = await t.db.query<{ locked_until: Date | null; run_at: Date }>(
      "SELECT locked_until, run_at FROM jobs WHERE kind = 'deliver_webhook' AND ref_id = $1",
      [id],
    );
    return job && job.locked_until === null && new Date(job.run_at).getTime() > nowFor(project).getTime();
  });
  let { deliveries } = await log(p, id);
  assert.deepEqual(
    deliveries.map((d) => d.order_status),
    ['processing', 'completed', 'completed'],
  );
  assert.deepEqual(
    deliveries.map((d) => d.resend),
    [false, false, true],
  );
  assert.deepEqual(
    deliveries.map((d) => d.attempts.length),
    [1, 0, 0],
  );
  assert.equal(r.calls.length, 1);
  await runDue(p, 'PT1M');
  await waitFor('all delivered', async () => (await log(p, id)).deliveries.every((d) => d.status === 'succeeded'));
  ({ deliveries } = await log(p, id));
  assert.deepEqual(
    r.calls.map((c) => c.headers['webhook-id']),
    [deliveries[0].id, deliveries[0].id, deliveries[1].id, deliveries[2].id],
  );
});

test('the project URL is the fallback; an order URL overrides it; a payment link URL is notified too', async () => {
  const p = await newProject();
  const projectHook = await receiver();
  const orderHook = await receiver();
  const linkHook = await receiver();
  const set = (await commands['project set-webhook'](t.svc.ctx, { project: p.project_id, url: projectHook.url })) as Json;
  assert.equal(set.webhook_url, projectHook.url);
  const viaProject = await cancelledOrder(p);
  const viaOrder = await cancelledOrder(p, { webhook_url: orderHook.url });
  await waitFor('project webhook', () => projectHook.calls.length === 1);
  await waitFor('order webhook', () => orderHook.calls.length === 1);
  assert.equal(JSON.parse(projectHook.calls[0].body).order_id, viaProject);
  assert.equal(JSON.parse(orderHook.calls[0].body).order_id, viaOrder);
  assert.equal((await log(p, viaProject)).deliveries[0].target, 'project');

  const link = await t.api(
    'POST',
    '/v1/paymentlinks/',
    { merchant_order_id: 'l-1', amount: 500, currency: 'EUR', webhook_url: linkHook.url },
    as(p),
  );
  assert.equal(link.status, 201, link.text);
  const project = (await findProject(t.db, p.project_id))!;
  const fromLink = await createOrder(t.svc.ctx, project, validOrder({ webhook_url: orderHook.url }) as Json, {
    paymentLinkId: link.body.id,
  });
  assert.equal((await t.api('DELETE', `/v1/orders/${fromLink.id}/`, undefined, as(p))).status, 200);
  await waitFor('link webhook', () => linkHook.calls.length === 1);
  await waitFor('order webhook', () => orderHook.calls.length === 2);
  const targets = (await log(p, fromLink.id)).deliveries.map((d) => d.target).sort();
  assert.deepEqual(targets, ['order', 'payment_link']);
  assert.equal(projectHook.calls.length, 1);

  await commands['project set-webhook'](t.svc.ctx, { project: p.project_id });
  assert.equal((await findProject(t.db, p.project_id))!.webhook_url, null);
  await assert.rejects(commands['project set-webhook'](t.svc.ctx, { project: p.project_id, url: 'ftp://x' }) as Promise<unknown>, /http/);
});

test('delivery log and resend', async () => {
  const p = await newProject();
  const other = await newProject();
  const r = await receiver();
  const id = await cancelledOrder(p, { webhook_url: r.url });
  await waitFor('first', async () => (await log(p, id)).deliveries[0]?.status === 'succeeded');
  const res = await t.api('POST', `/v1/orders/${id}/webhooks/resend`, undefined, as(p));
  assert.equal(res.status, 202, res.text);
  assert.equal(res.body.order_id, id);
  assert.equal(res.body.deliveries.length, 1);
  assert.equal(res.body.deliveries[0].resend, true);
  assert.equal(res.body.deliveries[0].url, r.url);
  await waitFor('resent', () => r.calls.length === 2);
  assert.notEqual(r.calls[0].headers['webhook-id'], r.calls[1].headers['webhook-id']);
  assert.equal(JSON.parse(r.calls[1].body).order_id, id);
  const { deliveries } = await waitFor('both succeeded', async () => {
    const l = await log(p, id);
    return l.deliveries.length === 2 && l.deliveries.every((d) => d.status === 'succeeded') && l;
  });
  assert.deepEqual(
    deliveries.map((d) => d.resend),
    [false, true],
  );

  // a process that died between numbering an attempt and writing its outcome leaves a number without
  // a log row: the log shows that attempt as interrupted (here the first delivery's attempt 2, made by hand)
  await t.db.query('UPDATE webhook_deliveries SET attempts = 2 WHERE id = $1', [deliveries[0].id]);
  const cut = (await log(p, id)).deliveries[0];
  assert.deepEqual(
    cut.attempts.map((a: Json) => [a.attempt, a.interrupted ?? false]),
    [
      [1, false],
      [2, true],
    ],
  );
  assert.match(cut.attempts[1].error, /^interrupted: /);
  assert.equal(cut.attempts[1].time, undefined);

  // another project's order is not found; an order without any webhook URL cannot be resent
  assert.equal((await t.api('GET', `/v1/orders/${id}/webhooks/`, undefined, as(other))).status, 404);
  assert.equal((await t.api('POST', `/v1/orders/${id}/webhooks/resend/`, undefined, as(other))).body.error.type, 'NotFound');
  assert.equal((await t.api('GET', '/v1/orders/3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11/webhooks/', undefined, as(p))).status, 404);
  const silent = await cancelledOrder(p);
  assert.deepEqual((await log(p, silent)).deliveries, []);
  const refused = await t.api('POST', `/v1/orders/${silent}/webhooks/resend/`, undefined, as(p));
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error.type, 'Forbidden');
});

test('signatures verify with the standardwebhooks package, with both secrets during a rotation', async () => {
  const p = await newProject();
  assert.match(p.webhook_secret!, /^whsec_/);
  const r = await receiver();
  const rotated = (await commands['webhook-secret rotate'](t.svc.ctx, { project: p.project_id })) as Json;
  assert.match(rotated.webhook_secret, /^whsec_/);
  assert.notEqual(rotated.webhook_secret, p.webhook_secret);
  assert.ok(rotated.previous_secret_expires);
  const id = await cancelledOrder(p, { webhook_url: r.url });
  await waitFor('webhook', () => r.calls.length === 1);
  assert.equal(String(r.calls[0].headers['webhook-signature']).split(' ').length, 2);
  assert.ok(verify(rotated.webhook_secret, r.calls[0]));
  assert.ok(verify(p.webhook_secret!, r.calls[0]));
  // 24 h later (project clock) only the new secret signs
  await runDue(p, 'PT24H1M');
  await t.api('POST', `/v1/orders/${id}/webhooks/resend/`, undefined, as(p));
  await waitFor('resent', () => r.calls.length === 2);
  assert.equal(String(r.calls[1].headers['webhook-signature']).split(' ').length, 1);
  assert.ok(verify(rotated.webhook_secret, r.calls[1]));
  assert.throws(() => verify(p.webhook_secret!, r.calls[1]), /No matching signature/);
});

test('live projects refuse webhook and return URLs into private networks, at creation and at delivery', async () => {
  const live = await newProject('live');
  for (const [field, url] of [
    ['webhook_url', 'http://127.0.0.1:9/hook'],
    ['webhook_url', 'http://localhost:8080/hook'],
    ['webhook_url', 'http://[::1]/hook'],
    ['webhook_url', 'http://[::ffff:7f00:1]/hook'],
    ['webhook_url', 'http://169.254.169.254/latest/meta-data'],
    ['webhook_url', 'https://10.1.2.3/hook'],
    ['return_url', 'http://192.168.1.1/return'],
    ['failure_url', 'http://[fd00::1]/failed'],
  ]) {
    const res = await t.api('POST', '/v1/orders/', validOrder({ [field]: url }), as(live));
    assert.equal(res.status, 400, `${url}: ${res.text}`);
    assert.equal(res.body.error.type, 'ValidationError');
    assert.equal(res.body.error.field, field);
  }
  const ok = await t.api('POST', '/v1/orders/', validOrder({ webhook_url: 'https://hooks.shop.example/tender' }), as(live));
  assert.equal(ok.status, 201, ok.text);
  const put = await t.api('PUT', `/v1/orders/${ok.body.id}/`, { webhook_url: 'http://127.0.0.1/x' }, as(live));
  assert.equal(put.status, 400);
  assert.equal(put.body.error.field, 'webhook_url');
  await assert.rejects(
    commands['project set-webhook'](t.svc.ctx, { project: live.project_id, url: 'http://10.0.0.1/' }) as Promise<unknown>,
    /public address/,
  );
  // a test project may use loopback
  const test = await newProject();
  assert.equal((await t.api('POST', '/v1/orders/', validOrder({ webhook_url: 'http://127.0.0.1:9/hook' }), as(test))).status, 201);

  // at delivery: the URL points at loopback now (as after DNS rebinding): refused, nothing sent
  const r = await receiver();
  await t.db.query("UPDATE orders SET body = jsonb_set(body, '{webhook_url}', to_jsonb($2::text)) WHERE id = $1", [ok.body.id, r.url]);
  assert.equal((await t.api('DELETE', `/v1/orders/${ok.body.id}/`, undefined, as(live))).status, 200);
  const first = await waitFor('the refused attempt', async () => (await log(live, ok.body.id)).deliveries[0]?.attempts[0]);
  assert.match(first.error, /127\.0\.0\.1 is a loopback address: refused for a live project/);
  assert.equal(r.calls.length, 0);
  // names are resolved by a lookup that refuses private answers, so the connection uses only checked addresses
  const refusal = await new Promise<Error | null>((resolve) => publicOnlyLookup('localhost', {}, (err: Error | null) => resolve(err)));
  assert.equal(
    String(refusal?.message),
    'localhost does not resolve to public addresses only: refused for a live project',
    'no address named',
  );
  assert.equal((refusal as Json).code, 'ESSRF');
});
