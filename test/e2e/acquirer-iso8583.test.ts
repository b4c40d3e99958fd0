// Live projects through the ISO 8583 link: `tender acquirer-host` runs as its own process on a
// real socket; a live project bound to it pays orders through the API; the host's settlement
// file reconciles against Tender with no mismatch.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { startPayment } from '../helpers/cards.ts';
import { moneyClient, expectError } from '../helpers/money.ts';
import { embeddedEnv, freePort, runTender } from '../helpers/cli.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { createBoundProject, setAcquirer } from '../../src/services/payments/acquirer-link.ts';
import { reconcile } from '../../src/services/payments/reconcile.ts';
import { advanceTestClock } from '../../src/services/platform/tenancy.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { findProject } from '../../src/store/platform/projects.ts';

let t: TestService;
let hostProcess: HostProcess;
let dir: string;
let port: number;
let live: { project_id: string; api_key: string };

const admin = (line: string) => hostProcess.admin(line);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-host-'));
  hostProcess = await startHostProcess(dir);
  port = hostProcess.port;
  // a lost answer is known after 3 s (the link's timeout) instead of 20
  t = await startTestService({ env: { ISO8583_TIMEOUT_MS: '3000' } });
  live = await createBoundProject(t.svc.ctx, {
    merchantId: t.project.merchant_id,
    name: 'Live shop',
    mode: 'live',
    acquirer: `iso8583://127.0.0.1:${port}`,
    terminalId: 'TNDR0001',
    cardAcceptorId: 'SHOP00000000001',
  });
});
after(async () => {
  await t?.close();
  hostProcess?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const { capture, voidAll, voidPart, refund, get } = moneyClient(() => t);
const key = () => ({ key: live.api_key });

/**
 * The money core's recovery of the live project's attempts left in flight: its clock moved past
 * ACQUIRER_RECOVERY_MS and its due jobs run now (what run-due-jobs does for a test project).
 */
async function recover() {
  await advanceTestClock(t.svc.ctx, live.project_id, t.config.acquirer.recoveryMs + 1000);
  await t.svc.ctx.dueWork.settle(live.project_id);
}

/** A payment whose answer the host dropped or cut: processing, then reversed by the recovery and declined. */
async function lostThenReversed(o: { id: string; transactions: { status: string }[] }) {
  assert.equal(o.transactions[0].status, 'processing', 'no answer yet: the money may have moved');
  await recover();
  const after = await get(o.id, key());
  assert.equal(after.transactions[0].status, 'declined');
  assert.equal(after.transactions[0].reason, 'processing_error');
  const [rev] = await t.db.query<{ status: string }>(
    "SELECT status FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'reversal'",
    [after.transactions[0].id],
  );
  assert.equal(rev?.status, 'succeeded', 'the authorization was reversed at the host');
}

test('a live project without a binding keeps the clear 403; bad bindings are refused and change nothing', async () => {
  const unbound = await t.newProject('live');
  const res = await t.api(
    'POST',
    '/v1/orders/',
    { merchant_order_id: 'x', currency: 'EUR', amount: 100, transactions: [{ payment_method: 'credit-card' }] },
    { key: unbound.api_key },
  );
  if (res.status === 201) await assert.rejects(payOrder(t, res.body, { key: unbound.api_key }), /403/);
  else assert.equal(res.status, 403, res.text);
  await assert.rejects(
    setAcquirer(t.svc.ctx, unbound.project_id, { acquirer: 'http://x:1', terminalId: 'T', cardAcceptorId: 'M' }),
    /iso8583:\/\/HOST:PORT/,
  );
  await assert.rejects(
    setAcquirer(t.svc.ctx, unbound.project_id, { acquirer: `iso8583://127.0.0.1:${port}`, terminalId: 'TOO-LONG-ID', cardAcceptorId: 'M' }),
    /terminal id/,
  );
  await assert.rejects(
    setAcquirer(t.svc.ctx, t.project.project_id, { acquirer: `iso8583://127.0.0.1:${port}`, terminalId: 'T', cardAcceptorId: 'M' }),
    /only live projects/,
  );
  await assert.rejects(
    createBoundProject(t.svc.ctx, { name: 'x', mode: 'test', acquirer: `iso8583://127.0.0.1:${port}` }),
    /only live projects/,
  );
});

test('a sale through the host: accepted, with the host approval; the link is up in /readyz', async () => {
  const o = await payOrder(t, { amount: 1250 }, key());
  assert.equal(o.status, 'completed');
  assert.equal(o.transactions[0].status, 'accepted');
  const ready = await fetch(`${t.url}/readyz`).then((r) => r.json());
  assert.equal(ready.status, 'ready');
  const link = ready.acquirer_links.find((l: { url: string }) => l.url === `iso8583://127.0.0.1:${port}`);
  assert.deepEqual([link.connected, link.signed_on, link.in_flight], [true, true, 0]);
  assert.ok(link.last_echo);
});

test("a live payment's 3-D Secure page writes the journal in two statements: the row with its STAN, then the answer", async () => {
  await payOrder(t, { amount: 900 }, key()); // this node's block of STANs is reserved before
  const { redirect_url, order } = await startPayment(t, '4111111111111111', { ...key(), orderOver: { amount: 901 } });
  const journal: string[] = [];
  const stop = t.db.observe((sql) => {
    if (sql.includes('acquirer_link_')) journal.push(sql.replace(/\s+/g, ' ').trim());
  });
  try {
    const page = await fetch(redirect_url, { redirect: 'manual' });
    await page.arrayBuffer();
    assert.equal(page.status, 302);
  } finally {
    stop();
  }
  // no read before the row, no STAN statement of its own (the block), the answer once
  assert.deepEqual(
    journal.map((sql) => sql.split(' ').slice(0, 3).join(' ')),
    ['INSERT INTO acquirer_link_messages', 'UPDATE acquirer_link_messages SET'],
    journal.join('\n'),
  );
  assert.equal((await get(order.id, key())).transactions[0].status, 'accepted');
});

test('declines by reason: the host answers 05, 51, 54, N7 and 96 and Tender shows the reasons', async () => {
  for (const [pan, reason] of [
    ['4000000000000002', 'declined'],
    ['4000000000009995', 'insufficient_funds'],
    ['4000000000000069', 'expired_card'],
    ['4000000000000127', 'incorrect_cvc'],
    ['4000000000000119', 'processing_error'],
  ]) {
    const o = await payOrder(t, { amount: 700 }, { pan, ...key() });
    assert.equal(o.transactions[0].reason, reason, pan);
    assert.notEqual(o.transactions[0].status, 'accepted', pan);
  }
});

test('pre-authorization, partial void, partial capture, partial refunds; a full void', async () => {
  const o = await payOrder(t, { amount: 3000 }, { capture_mode: 'manual', ...key() });
  assert.equal(o.transactions[0].status, 'accepted');
  assert.equal((await voidPart(o, 500, key())).status, 201);
  const c = await capture(o, key());
  assert.equal(c.status, 201, c.text);
  const after = await get(o.id, key());
  assert.equal(after.transactions[0].is_capturable, false);
  assert.equal((await refund(o, 1000, key())).status, 201);
  assert.equal((await refund(o, 700, key())).status, 201);
  expectError(await refund(o, 900, key()), 422, 'RefundError');

  const v = await payOrder(t, { amount: 900 }, { capture_mode: 'manual', ...key() });
  assert.equal((await voidAll(v, key())).status, 201);
  assert.equal((await get(v.id, key())).transactions[0].status, 'cancelled');
  // the host released the hold: a capture of it is refused there too (Tender refuses first)
  expectError(await capture(v, key()), 409, 'CanNotCaptureTransaction');

  const s = await payOrder(t, { amount: 2000 }, key());
  assert.equal((await refund(s, 2000, key())).status, 201);
});

test('an answer the host drops: processing, then the recovery reverses it at the host and nothing is charged', async () => {
  assert.equal(await admin('drop 1'), 'ok');
  const o = await payOrder(t, { amount: 4321 }, key());
  await lostThenReversed(o);
  // a doubled answer is dropped by the link without disturbing the next payment
  assert.equal(await admin('duplicate 1'), 'ok');
  const d = await payOrder(t, { amount: 111 }, key());
  assert.equal(d.transactions[0].status, 'accepted');
  const next = await payOrder(t, { amount: 222 }, key());
  assert.equal(next.transactions[0].status, 'accepted');
});

test('faults in a row: dropped, doubled and cut answers; every lost authorization is reversed, nothing charged twice', async () => {
  const plan: [string | null, number, boolean][] = [
    [null, 301, true],
    ['drop 1', 302, false],
    ['duplicate 1', 303, true],
    ['cut 1', 304, false],
    [null, 305, true],
    ['drop 1', 306, false],
  ];
  for (const [fault, amount, approved] of plan) {
    if (fault) assert.equal(await admin(fault), 'ok');
    const o = await payOrder(t, { amount }, key());
    if (approved) assert.equal(o.transactions[0].status, 'accepted', `${fault ?? 'no fault'}: ${amount}`);
    else await lostThenReversed(o);
  }
  const stats = JSON.parse(await admin('stats'));
  assert.equal(stats.collisions, 0, 'no STAN was used twice');
});

test('the ledger holds and the settlement file reconciles with no mismatch; `tender reconcile` agrees', async () => {
  const ledger = await checkLedger(t.db, live.project_id);
  assert.deepEqual(ledger.violations, []);
  const [file] = readdirSync(dir).filter((f) => f.startsWith('settlement-'));
  const text = readFileSync(join(dir, file), 'utf8');
  const acquirer = `iso8583://127.0.0.1:${port}`;
  const r = await reconcile(t.svc.ctx, text, { acquirer });
  assert.deepEqual([r.host_only, r.tender_only, r.amount_differences], [[], [], []]);
  assert.ok(r.ok);
  // sale 1250, sales 900 and 901 (the journal test), completion 2500, refunds 1000 and 700,
  // sale and refund 2000, sales 111 and 222; the dropped sale reversed
  assert.deepEqual(r.matches.map((m) => [m.type, m.host_amount]).sort(), [
    ['completion', 2500],
    ['refund', 1000],
    ['refund', 2000],
    ['refund', 700],
    ['sale', 111],
    ['sale', 1250],
    ['sale', 2000],
    ['sale', 222],
    ['sale', 301],
    ['sale', 303],
    ['sale', 305],
    ['sale', 900],
    ['sale', 901],
  ]);
  // the dropped sale of the test before, and the dropped, cut and dropped ones of the faults in a row
  assert.equal(r.cancelled, 4);

  // a line Tender never sent, and an amount changed: both found, exit status 1
  const lines = text.trim().split('\n');
  const changed = lines[1].split(',');
  changed[5] = String(Number(changed[5]) + 1);
  const forged = [lines[0], changed.join(','), ...lines.slice(2), `${changed[0]},TNDR0001,999999999999,999999,sale,5,EUR,ABC123`].join(
    '\n',
  );
  const bad = await reconcile(t.svc.ctx, forged, { acquirer: `iso8583://127.0.0.1:${port}` });
  assert.equal(bad.ok, false);
  assert.equal(bad.amount_differences.length, 1);
  assert.deepEqual(
    bad.host_only.map((x) => x.rrn),
    ['999999999999'],
  );
  await assert.rejects(reconcile(t.svc.ctx, 'not,a,file'), /not a settlement file/);
});

test('tender CLI: project create --mode live with a binding, project set-acquirer, reconcile exit status', async () => {
  // its own embedded store, whatever DATABASE_URL this suite runs with
  const env = embeddedEnv(mkdtempSync(join(tmpdir(), 'tender-cli-')));
  try {
    const made = await runTender(
      [
        'project',
        'create',
        '--name',
        'CLI live',
        '--mode',
        'live',
        '--acquirer',
        `iso8583://127.0.0.1:${port}`,
        '--terminal-id',
        'TCLI0001',
        '--card-acceptor-id',
        'CLISHOP',
        '--json',
      ],
      env,
    );
    assert.equal(made.code, 0, made.stderr);
    const p = JSON.parse(made.stdout);
    assert.deepEqual(p.acquirer, {
      acquirer: `iso8583://127.0.0.1:${port}`,
      terminal_id: 'TCLI0001',
      card_acceptor_id: 'CLISHOP',
      refuse_unauthenticated: false,
    });
    const changed = await runTender(
      [
        'project',
        'set-acquirer',
        '--project',
        p.project_id,
        '--acquirer',
        'iso8583s://acquirer.example:7000',
        '--terminal-id',
        'TCLI0002',
        '--card-acceptor-id',
        'CLISHOP',
        '--json',
      ],
      env,
    );
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal(JSON.parse(changed.stdout).terminal_id, 'TCLI0002');
    const bad = await runTender(
      ['project', 'set-acquirer', '--project', p.project_id, '--acquirer', 'tcp://x:1', '--terminal-id', 'T', '--card-acceptor-id', 'M'],
      env,
    );
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /iso8583:\/\/HOST:PORT/);
    const [file] = readdirSync(dir).filter((f) => f.startsWith('settlement-'));
    // this store sent nothing to the host: every host line is host-only, exit status 1
    const rec = await runTender(['reconcile', join(dir, file), '--csv', join(env.TENDER_DATA_DIR!, 'out.csv')], env);
    assert.equal(rec.code, 1, rec.stderr);
    assert.match(rec.stdout, /MISMATCH/);
    assert.match(readFileSync(join(env.TENDER_DATA_DIR!, 'out.csv'), 'utf8'), /^result,terminal,rrn/);
  } finally {
    rmSync(env.TENDER_DATA_DIR!, { recursive: true, force: true });
  }
});

test("the portal shows a live project's binding read-only", async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  const page = await c.get(`/projects/${live.project_id}/settings/`);
  assert.equal(page.status, 200, page.text);
  assert.match(page.text, new RegExp(`<code>iso8583://127\\.0\\.0\\.1:${port}</code>`));
  assert.match(page.text, /TNDR0001/);
  assert.match(page.text, /SHOP00000000001/);
  assert.match(page.text, /ECI 07, no liability shift/);
  assert.doesNotMatch(page.text, /name="acquirer"/, 'no form changes it');
});

// last: it leaves this node degraded
test('a link to a host that does not answer makes /readyz degraded naming it (still 200), its state in the body', async () => {
  const nowhere = `iso8583://127.0.0.1:${await freePort()}`;
  const p = await createBoundProject(t.svc.ctx, {
    merchantId: t.project.merchant_id,
    name: 'Live shop, host down',
    mode: 'live',
    acquirer: nowhere,
    terminalId: 'TDOWN001',
    cardAcceptorId: 'SHOPDOWN',
  });
  // the link opens on the project's first use
  assert.ok(t.svc.ctx.connectors.live!((await findProject(t.db, p.project_id))!));
  const res = await fetch(`${t.url}/readyz`);
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.status, 'degraded');
  assert.deepEqual(body.degraded, [`acquirer link down: ${nowhere}`]);
  const states = new Map(body.acquirer_links.map((l: { url: string; signed_on: boolean }) => [l.url, l.signed_on]));
  assert.deepEqual([states.get(nowhere), states.get(`iso8583://127.0.0.1:${port}`)], [false, true]);
});
