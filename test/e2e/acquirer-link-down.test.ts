// A live acquirer link known to be down (its `tender acquirer-host` killed): a payment of a project
// bound to it is not sent and fails at once, nothing charged, the attempt recorded as failed and
// not sent (nothing to recover); /readyz stays 200 and says "degraded" for that link, so the
// balancer keeps the node for every other project; a test project pays as before.
// Both stores (PGlite by default, PostgreSQL with DATABASE_URL).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { exited, waitFor } from '../helpers/child-service.ts';
import { payOrder } from '../helpers/pay.ts';
import { createBoundProject } from '../../src/services/payments/acquirer-link.ts';

let t: TestService;
let host: HostProcess;
let dir: string;
let live: { project_id: string; api_key: string };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-link-down-'));
  host = await startHostProcess(dir);
  // the link's own wait as shipped (20 s): what a customer waited on a dead host before
  t = await startTestService({ env: { ISO8583_TIMEOUT_MS: '20000' } });
  live = await createBoundProject(t.svc.ctx, {
    merchantId: t.project.merchant_id,
    name: 'Live shop',
    mode: 'live',
    acquirer: host.url,
    terminalId: 'TLINK001',
    cardAcceptorId: 'SHOPLINK0000001',
  });
});
after(async () => {
  await t?.close();
  host?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const readyz = async () => {
  const res = await fetch(`${t.url}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { acquirer_links?: Array<{ connected: boolean }> } };
};

test('a payment on a live link known to be down fails at once, not sent; /readyz is 200 degraded; a test project still pays', async () => {
  assert.equal((await payOrder(t, { amount: 1000 }, { key: live.api_key })).status, 'completed', 'the link works first');
  assert.equal((await readyz()).body.status, 'ready');

  host.child.kill('SIGKILL');
  await exited(host.child);
  const down = await waitFor('the link to be seen down', async () => {
    const r = await readyz();
    return r.body.acquirer_links?.every((l) => !l.connected) && r;
  });
  assert.equal(down.status, 200, 'one link down does not take the node out of the balancer');
  assert.equal(down.body.status, 'degraded');
  assert.deepEqual(down.body.degraded, [`acquirer link down: ${host.url}`]);
  assert.equal(down.body.problems, undefined);

  const started = Date.now();
  const failed = await payOrder(t, { amount: 1500 }, { key: live.api_key });
  const took = Date.now() - started;
  assert.equal(failed.status, 'error');
  assert.equal(failed.transactions[0].status, 'error');
  assert.equal(failed.transactions[0].reason, 'processing_error');
  // the structural cause: the authorization was never sent, so nothing waits on the dead host
  const attempts = await t.db.query<{ status: string; response_code: string | null; recover_at: Date | null }>(
    "SELECT status, response_code, recover_at FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'authorization'",
    [failed.transactions[0].id],
  );
  assert.deepEqual(
    attempts.map((a) => [a.status, a.response_code]),
    [['failed', '91']],
    'recorded as failed, not sent: nothing to recover',
  );
  assert.ok(took < 5000, `the customer waited ${took} ms`);

  // the node serves every other project meanwhile
  assert.equal((await payOrder(t, { amount: 700 })).status, 'completed');
});
