// Issue 41: a portal capture of a live project bound to `tender acquirer-host`. The portal held a
// transaction across the call, so the ISO 8583 journal's row and the STAN block the connector
// reserved were written inside it: a kill rolled them back while the host had the message, and the
// next node reused the STAN (the host answered 94, "duplicate transmission"). Now, while the host
// still holds the capture's answer, its journal row and its STAN block are committed (seen from
// another connection), and a node drawing STANs afresh starts past it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { eventually } from '../helpers/money.ts';
import { createBoundProject, linkJournal } from '../../src/services/payments/acquirer-link.ts';

let t: TestService;
let host: HostProcess;
let dir: string;
let live: { project_id: string; api_key: string };
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-portal-stan-'));
  host = await startHostProcess(dir);
  // the link waits longer than the host's delay; the service longer than the link
  t = await startTestService({ env: { ISO8583_TIMEOUT_MS: '20000', ACQUIRER_TIMEOUT_MS: '30000', ACQUIRER_RECOVERY_MS: '40000' } });
  live = await createBoundProject(t.svc.ctx, {
    merchantId: t.project.merchant_id,
    name: 'Live shop',
    mode: 'live',
    acquirer: host.url,
    terminalId: 'TNDR0041',
    cardAcceptorId: 'SHOP00000000041',
  });
});
after(async () => {
  await t?.close();
  host?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a portal capture at a slow host: its journal row and STAN block are committed before the answer, and never drawn again', async () => {
  const o = await payOrder(t, { amount: 2100 }, { capture_mode: 'manual', key: live.api_key });
  assert.equal(o.transactions[0].status, 'accepted', JSON.stringify(o.transactions[0]));
  const user = await portalUser(t);
  const c = new PortalClient(t);
  assert.equal((await c.signIn(user.email, user.password)).status, 303);
  const page = `/projects/${live.project_id}/orders/${o.id}/`;
  await c.get(page);

  assert.equal(await host.admin('delay 4000'), 'ok');
  let answered = false;
  const capture = c
    .post(`${page}actions`, { action: 'capture', transaction_id: o.transactions[0].id, token: 'stan-capture-00000001' })
    .finally(() => (answered = true));
  // the capture's message (a completion), from another connection, while the host has not answered it
  let row: { stan: string; day: string; response_code: string | null } | undefined;
  await eventually(async () => {
    [row] = await t.db.query<NonNullable<typeof row>>(
      "SELECT stan, to_char(day, 'YYYY-MM-DD') AS day, response_code FROM acquirer_link_messages WHERE project_id = $1 AND kind = 'completion'",
      [live.project_id],
    );
    assert.ok(row, 'the capture is in the journal');
  }, 15_000);
  if (!row) return;
  assert.equal(answered, false, 'the host had not answered yet');
  assert.equal(row.response_code, null, 'its answer not yet in');
  const [block] = await t.db.query<{ last: number }>('SELECT last FROM acquirer_link_stans WHERE terminal_id = $1 AND day = $2::date', [
    'TNDR0041',
    row.day,
  ]);
  assert.ok(block && Number(block.last) >= Number(row.stan), 'the STAN block holding it is committed');
  // a node starting now draws after it
  const fresh = await linkJournal(t.db).nextStan('TNDR0041', row.day);
  assert.ok(fresh > Number(row.stan), `a fresh node drew ${fresh}, after ${row.stan}`);

  assert.equal((await capture).status, 303);
  assert.equal(await host.admin('delay 0'), 'ok');
  const got = await t.api('GET', `/v1/orders/${o.id}/`, undefined, { key: live.api_key });
  assert.equal(got.body.transactions[0].status, 'completed', got.text);
});
