// Issue 29's chaos test (docs/reliability.md "The acquirer over a network"): at least 1,000
// acquirer operations (sales, pre-authorizations, partial and full captures, partial and full
// voids, partial refunds; through the API, with and without an Idempotency-Key, and through the
// portal's confirmations) from 8 clients against the real service in a child process, whose
// acquirer is the simulator behind withFaults (lost answers, timeouts, duplicate answers,
// errors) served by this test over loopback, so what the acquirer did survives the kills; the
// service is SIGKILLed at random moments (seeded) and restarted. Then recovery runs to the end,
// and: `tender ledger check` passes, every operation Tender recorded is what the acquirer did,
// no payment moved money twice, nothing is left in flight. A keyed request or a portal form cut by
// a kill is sent again, the same, once the service is back (issue 41): it acts once.
// PGlite: a data directory of its own; PostgreSQL (DATABASE_URL): a schema of its own.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';
import { random, withFaults } from '../../src/acquirer/faults.ts';
import type { Connector } from '../../src/acquirer/connector.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { serveConnector } from '../helpers/acquirer-server.ts';
import { childStore, exited, killed, pgUrl, sleep } from '../helpers/child-service.ts';
import { compareWithAcquirer } from '../helpers/acquirer-truth.ts';
import { runTender } from '../helpers/cli.ts';
import { basic, cardOrder, request, type TestService } from '../helpers/service.ts';
import { PortalClient } from '../helpers/portal.ts';
import { futureExpiry } from '../helpers/cards.ts';

const SEED = Number(process.env.CHAOS_SEED ?? 29);
const OPERATIONS = Number(process.env.CHAOS_OPERATIONS ?? 1000);
const CLIENTS = 8;
const STALL_MS = 90_000;
const LEASE_MS = 5000;
const store = childStore('chaos');

/** Counts the calls the service makes to the acquirer, by method, and the inquiries' answers. */
function tapped(c: Connector, calls: Record<string, number>): Connector {
  const count =
    <R extends { operation_id: string }, O>(name: string, fn: (r: R) => Promise<O>) =>
    async (r: R) => {
      calls[name] = (calls[name] ?? 0) + 1;
      const o = await fn(r);
      const answer = `inquire:${(o as { status?: string }).status}`;
      if (name === 'inquire') calls[answer] = (calls[answer] ?? 0) + 1;
      return o;
    };
  return {
    ...c,
    authorize: count('authorize', (r) => c.authorize(r)),
    capture: count('capture', (r) => c.capture(r)),
    void: count('void', (r) => c.void(r)),
    refund: count('refund', (r) => c.refund(r)),
    inquire: count('inquire', (r) => c.inquire(r)),
    reverse: count('reverse', (r) => c.reverse(r)),
  };
}

test(
  `${OPERATIONS} acquirer operations through faults and SIGKILLs: Tender records what the acquirer did, once`,
  { timeout: 900_000 },
  async () => {
    const began = Date.now();
    const acquirer = withFaults(createSimulator({ settleMs: 0 }), {
      probability: { error: 0.05, lost_answer: 0.1, duplicate: 0.1, delay: 0.04 },
      // longer than ACQUIRER_TIMEOUT_MS: a delayed call is a timeout, its operation done after Tender gave up
      delayMs: 1500,
      seed: SEED,
    });
    const calls: Record<string, number> = {};
    const served = await serveConnector(tapped(acquirer, calls));
    after(() => served.close());
    const { env, url } = await store.env({
      TENDER_TEST_ACQUIRER_URL: served.url,
      ACQUIRER_TIMEOUT_MS: '1000',
      // the recovery job comes 5 s after the record (real time); a call is sent within 2 s of it
      // or not at all (the send deadline), so even a delayed one has reached the acquirer before
      // the inquiry asks about it
      ACQUIRER_RECOVERY_MS: '5000',
      TENDER_WORKER_POLL_MS: '200',
      // a job the killed process had claimed waits out its lease (real time) before another run takes it
      TENDER_JOB_LEASE_MS: String(LEASE_MS),
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: process.env.CHAOS_CHILD_LOG ?? 'error', // every lost answer is a warning
    });
    let child = await store.serve(env, url);
    const created = await runTender(['project', 'create', '--name', 'Chaos shop', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const project = JSON.parse(created.stdout.trim()) as { project_id: string; api_key: string; merchant_id: string };
    const auth = { authorization: basic(project.api_key) };
    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      request(`${url}${path}`, method, body, { ...auth, ...headers });
    // a portal user of the shop's merchant, signed in once (the session outlives restarts)
    const made = await runTender(['user', 'create', '--merchant', project.merchant_id, '--email', 'chaos@shop.example', '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    const portal = new PortalClient({ config: { portalUrl: `${url}/portal` } } as unknown as TestService);
    assert.equal((await portal.signIn('chaos@shop.example', JSON.parse(made.stdout.trim()).password)).status, 303);
    await portal.get(`/projects/${project.project_id}/orders/`);

    // the kills: at random moments (seeded: after 60 to 140 more operations answered, then 0 to
    // 300 ms into whatever is under way), SIGKILL, then a restart; clients cut off wait for it.
    // Counted in operations rather than seconds, so a slow restart does not eat the run.
    const pick = random(SEED + 1);
    let up: Promise<void> = Promise.resolve();
    let stop = false;
    const restarts: number[] = [];
    let answered = 0;
    let lastKill = 0;
    const killer = (async () => {
      let nextAt = 0;
      while (!stop) {
        nextAt = answered + 60 + Math.floor(pick() * 80);
        // a service that stops answering fails the test rather than stalling it
        for (let last = answered, since = Date.now(); !stop && answered < nextAt; await sleep(50)) {
          if (answered !== last) [last, since] = [answered, Date.now()];
          if (Date.now() - since > STALL_MS) throw new Error(`no operation answered for ${STALL_MS / 1000} s (${answered} so far)`);
        }
        await sleep(pick() * 300);
        if (stop) break;
        let restarted!: () => void;
        up = new Promise((r) => (restarted = r));
        const at = Date.now();
        await killed(child);
        child = await store.serve(env, url);
        restarted();
        restarts.push(Date.now() - at);
        lastKill = at;
        if (process.env.CHAOS_TRACE) console.error(`kill ${restarts.length}: restart ${Date.now() - at} ms, ${answered} answered`);
      }
    })();

    // the clients: each runs one payment's story at a time; a story cut by a kill is dropped (its
    // requests carry no Idempotency-Key, so none is sent again) and the client starts another
    const asked: Record<string, number> = {};
    const money = async (kind: string, method: string, path: string, body?: unknown) => {
      asked[kind] = (asked[kind] ?? 0) + 1;
      const res = await api(method, path, body);
      if (res.status === 201) answered++; // an operation recorded (a refusal before the call records none)
      return res;
    };
    // a keyed request or a portal form, sent again the same when a kill cut it (and while it is
    // told to wait: the key's claim, an operation in progress), until it has its answer
    let resent = 0;
    const again = async (kind: string, send: () => Promise<{ status: number; text: string }>, ok: number) => {
      asked[kind] = (asked[kind] ?? 0) + 1;
      for (let tries = 0; ; tries++) {
        const res = await send().catch(() => undefined);
        // recorded, its outcome being recovered (the retry of an attempt left in flight): Tender settles it
        if (res && (res.status === ok || /in progress at the acquirer/.test(res.text))) return void answered++;
        // refused: nothing done; else told to wait (409: the key's claim, a form still being processed)
        if (res && !(res.status === 409 && /still being processed/.test(res.text))) return;
        if (tries > 240) throw new Error(`${kind}: no answer after ${tries} sends`);
        if (!res) await up;
        resent++;
        await sleep(250);
      }
    };
    let seq = 0;
    const keyed = (kind: string, path: string, body?: unknown) => {
      const key = { 'idempotency-key': `chaos-${SEED}-${++seq}` };
      return again(`keyed ${kind}`, () => api('POST', path, body, key), 201);
    };
    const form = (kind: string, order: string, fields: Record<string, string>) => {
      const token = `chaos-${SEED}-form-${String(++seq).padStart(8, '0')}`;
      const path = `/projects/${project.project_id}/orders/${order}/actions`;
      return again(`portal ${kind}`, () => portal.post(path, { ...fields, token }), 303);
    };
    const pay = async (captureMode?: 'manual') => {
      const o = await api('POST', '/v1/orders/', cardOrder({ amount: 2000 }, captureMode ? { capture_mode: captureMode } : {}));
      if (o.status !== 201) throw new Error(`order ${o.status}`);
      const txn = o.body.transactions[0];
      const card = await request(
        `${url}/vault/v1/cards/`,
        'POST',
        { pan: '4111111111111111', expiry: futureExpiry(), name: 'Ada Lovelace', setup_token: txn.payment_method_details.setup_token },
        auth,
      );
      if (card.status !== 201) throw new Error(`vault ${card.status}`);
      const a = await api('POST', `/v1/orders/${o.body.id}/transactions/${txn.id}/authenticate/`, {
        vault_token: card.body.vault_token,
        cvc: '123',
      });
      if (a.status !== 200) throw new Error(`authenticate ${a.status}`);
      // the 3-D Secure page (frictionless): its visit is the authorization
      asked[captureMode ? 'pre-authorization' : 'sale'] = (asked[captureMode ? 'pre-authorization' : 'sale'] ?? 0) + 1;
      const page = await fetch(a.body.redirect_url, { redirect: 'manual' });
      await page.arrayBuffer();
      if (page.status < 400) answered++;
      return { order: o.body.id as string, txn: `/v1/orders/${o.body.id}/transactions/${txn.id}` };
    };
    const stories = [
      // a sale and up to two partial refunds
      async (r: number) => {
        const p = await pay();
        for (let i = 0; i < Math.floor(r * 3); i++)
          await money('partial refund', 'POST', `/v1/orders/${p.order}/refunds/`, { amount: 600 });
      },
      // a pre-authorization, a partial void, the capture of the rest (a partial capture)
      async () => {
        const p = await pay('manual');
        await money('partial void', 'POST', `${p.txn}/voids/amount/`, { amount: 500, description: 'part' });
        await money('capture', 'POST', `${p.txn}/captures/`);
      },
      // a pre-authorization captured in full, then partly refunded
      async () => {
        const p = await pay('manual');
        await money('capture', 'POST', `${p.txn}/captures/`);
        await money('partial refund', 'POST', `/v1/orders/${p.order}/refunds/`, { amount: 700 });
      },
      // a pre-authorization voided in full
      async () => {
        const p = await pay('manual');
        await money('void', 'POST', `${p.txn}/voids/`);
      },
      // keyed: a pre-authorization captured, then partly refunded, each with an Idempotency-Key
      async () => {
        const p = await pay('manual');
        await keyed('capture', `${p.txn}/captures/`);
        await keyed('partial refund', `/v1/orders/${p.order}/refunds/`, { amount: 800 });
      },
      // the portal: a pre-authorization partly voided, captured, partly refunded; or voided in full
      async (r: number) => {
        const p = await pay('manual');
        const txn = p.txn.split('/').at(-1)!;
        if (r < 0.3) return form('void', p.order, { action: 'void', transaction_id: txn });
        await form('partial void', p.order, { action: 'void', transaction_id: txn, amount: '400', description: 'part' });
        await form('capture', p.order, { action: 'capture', transaction_id: txn });
        await form('partial refund', p.order, { action: 'refund', amount: '500' });
      },
    ];
    let cut = 0;
    const story = random(SEED + 2);
    const clients = Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (answered < OPERATIONS) {
          const [s, r] = [story(), story()];
          await stories[Math.floor(s * stories.length)](r).catch(async () => {
            cut++;
            await up;
          });
        }
      }),
    );
    await Promise.race([clients, killer]); // the killer ends early only by throwing
    stop = true;
    await killer;
    await up;
    const chaosMs = Date.now() - began;

    // recovery: the attempts' jobs, reached by advancing the project's clock, until none is due
    // (once the jobs the last killed process held are free again)
    await sleep(Math.max(0, lastKill + LEASE_MS + 500 - Date.now()));
    for (let round = 0; round < 30; round++) {
      const r = await api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT1H' });
      assert.equal(r.status, 200, r.text);
      if (process.env.CHAOS_TRACE) console.error(`recovery round ${round}: ${r.body.jobs_run} jobs`);
      if (r.body.jobs_run === 0) break;
    }
    child.kill('SIGTERM');
    await exited(child);

    // the real command, on the store the service left
    const ledger = await runTender(['ledger', 'check', '--json'], { ...env, TENDER_WORKER: 'off' });
    assert.equal(ledger.code, 0, `${ledger.stdout}\n${ledger.stderr}`);
    assert.equal(JSON.parse(ledger.stdout.trim()).ok, true);

    const db = pgUrl ? pgDb({ url: pgUrl, schema: store.schema, max: 2 }) : await pgliteDb(store.dir);
    try {
      const truth = await compareWithAcquirer(db, acquirer.acquirer, project.project_id);
      const [{ n }] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM acquirer_attempts WHERE error IS NOT NULL AND status IN ('succeeded', 'failed') AND kind <> 'authorization'",
      );
      // calls a loaded or stalled service held past their send deadline: failed unsent (docs/money.md)
      const [{ unsent }] = await db.query<{ unsent: number }>(
        "SELECT count(*)::int AS unsent FROM acquirer_attempts WHERE status = 'failed' AND response_description LIKE 'Not sent:%'",
      );
      const figures = {
        store: pgUrl ? 'PostgreSQL' : 'PGlite',
        seed: SEED,
        requests: asked,
        attempts: truth.attempts,
        operations: Object.values(truth.attempts).reduce((x, y) => x + y, 0),
        stories_cut: cut,
        resent,
        kills: restarts.length,
        restart_ms: restarts.length ? Math.round(restarts.reduce((x, y) => x + y, 0) / restarts.length) : 0,
        faults: acquirer.injected,
        acquirer_calls: calls,
        answers_lost_then_settled_by_inquiry: n,
        authorizations_reversed: truth.reversed,
        not_sent_past_deadline: unsent,
        chaos_s: Math.round(chaosMs / 1000),
        total_s: Math.round((Date.now() - began) / 1000),
      };
      console.log(`acquirer chaos: ${JSON.stringify(figures)}`);
      assert.ok(figures.operations >= OPERATIONS, `${figures.operations} operations`);
      assert.ok(restarts.length >= 3, `${restarts.length} kills`);
      for (const f of ['error', 'lost_answer', 'duplicate', 'delay'] as const) assert.ok(acquirer.injected[f] > 0, `no ${f} injected`);
      assert.ok(truth.reversed > 0 && n > 0, 'lost answers were recovered, by reversal and by inquiry');
      assert.deepEqual(truth.violations, []);
    } finally {
      await db.close();
    }
  },
);
