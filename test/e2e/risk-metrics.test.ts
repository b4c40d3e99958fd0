// tender_risk_decisions_total (docs/operations.md, docs/risk.md) read from /metrics while the
// velocity limits refuse and challenge card attempts: one count per screened attempt, by the
// project's mode, the decision and the rule that decided it, the same decisions the transactions'
// risk objects show, and labels from fixed sets only (no project, card or address).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { randomPan, startPayment } from '../helpers/cards.ts';
import { freePort } from '../helpers/cli.ts';
import { RULES } from '../../src/domain/risk/limits.ts';
import type { Json } from '../helpers/json.ts';
import { commands } from '../../src/cli/commands.ts';

let t: TestService;
let metricsPort: number;
before(async () => {
  metricsPort = await freePort();
  t = await startTestService({ env: { RISK_LIMITS: 'on', METRICS_PORT: String(metricsPort) } });
});
after(() => t?.close());

interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Every sample of tender_risk_decisions_total (or another counter) on /metrics, as Prometheus would scrape it. */
async function decisions(name = 'tender_risk_decisions_total'): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(text, new RegExp(`# TYPE ${name} counter`));
  return [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))].map((m) => ({
    labels: Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!])),
    value: Number(m[2]),
  }));
}

const valueOf = (samples: Sample[], mode: string, decision: string, rule: string) =>
  samples.find((s) => s.labels.mode === mode && s.labels.decision === decision && s.labels.rule === rule)?.value ?? 0;

test('refusals and challenges count on /metrics by mode, decision and rule, as the risk objects show them', async () => {
  const before = await decisions();
  const shop = await t.newProject('test');
  const orders: string[] = [];
  // 12 random cards from one address: address_attempts lets 10 through and refuses 2
  for (let i = 0; i < 12; i++)
    orders.push(
      (
        await startPayment(t, randomPan('4'), {
          key: shop.api_key,
          orderOver: { customer: { ip_address: '203.0.113.9', email_address: `tester${i}@card.example` } },
        })
      ).order.id,
    );
  // one guest's email from 6 networks: guest_attempts lets 5 through and challenges the 6th
  for (let i = 0; i < 6; i++)
    orders.push(
      (
        await startPayment(t, randomPan('5'), {
          key: shop.api_key,
          orderOver: { customer: { ip_address: `10.${i}.0.1`, email_address: 'guest@shop.example' } },
        })
      ).order.id,
    );
  const after = await decisions();
  const delta = (decision: string, rule: string) => valueOf(after, 'test', decision, rule) - valueOf(before, 'test', decision, rule);
  assert.equal(delta('refuse', 'address_attempts'), 2);
  assert.equal(delta('challenge', 'guest_attempts'), 1);
  assert.equal(delta('pass', 'none'), 15);
  // nothing else moved, and no live series (a test project's attempts are mode="test")
  const moved = after.filter((s) => s.value !== (before.find((b) => JSON.stringify(b.labels) === JSON.stringify(s.labels))?.value ?? 0));
  assert.deepEqual(moved.map((s) => `${s.labels.mode} ${s.labels.decision} ${s.labels.rule}`).sort(), [
    'test challenge guest_attempts',
    'test pass none',
    'test refuse address_attempts',
  ]);

  // the same decisions as the transactions' risk objects
  const risks: Json[] = [];
  for (const id of orders)
    risks.push((await t.api('GET', `/v1/orders/${id}/`, undefined, { key: shop.api_key })).body.transactions[0].risk);
  const tally = (action: string, rule?: string) =>
    risks.filter((r) => r.action === action && (!rule || r.rules.find((h: Json) => h.action === action)?.rule === rule)).length;
  assert.equal(tally('refuse', 'address_attempts'), 2);
  assert.equal(tally('challenge', 'guest_attempts'), 1);
  assert.equal(tally('pass'), 15);
});

test('the labels come from fixed sets: no project id, card, address or email in any series', async () => {
  const shop = await t.newProject('test');
  await startPayment(t, randomPan('4'), { key: shop.api_key, orderOver: { customer: { ip_address: '192.0.2.77' } } });
  const samples = await decisions();
  // every limit's series exists from the start, for both modes, so a first burst shows in rate()
  for (const mode of ['test', 'live']) assert.ok(samples.some((s) => s.labels.mode === mode && s.labels.decision === 'refuse'));
  assert.ok(samples.length <= 2 * (RULES.length + 1), `${samples.length} series`);
  for (const s of samples) {
    assert.deepEqual(Object.keys(s.labels).sort(), ['decision', 'mode', 'rule', 'service'], JSON.stringify(s.labels));
    assert.ok(['test', 'live'].includes(s.labels.mode!), s.labels.mode);
    assert.ok(['refuse', 'challenge', 'flag', 'pass'].includes(s.labels.decision!), s.labels.decision);
    assert.ok([...RULES, 'none'].includes(s.labels.rule!), s.labels.rule);
    const text = JSON.stringify(s.labels);
    for (const secret of [shop.project_id, shop.merchant_id, '192.0.2', 'example']) assert.ok(!text.includes(secret), text);
  }
});

test('tender_risk_allows_total counts the attempts an allowlist let past the limits, by mode, scope and kind only', async () => {
  const cli = (name: string, args: Record<string, unknown>) => commands[name]!(t.svc.ctx, args) as Promise<Json>;
  const shop = await t.newProject('test');
  const before = await decisions('tender_risk_allows_total');
  await cli('risk list add', { project: shop.project_id, list: 'allow', kind: 'email', value: 'ally@allow.example' });
  const platform = await cli('risk list add', { platform: true, list: 'allow', kind: 'network', value: '198.51.100.0/24' });
  try {
    const pay = async (customer: Record<string, string>) =>
      (await startPayment(t, randomPan('4'), { key: shop.api_key, orderOver: { customer } })).order.id;
    const orders = [
      await pay({ email_address: 'ally@allow.example', ip_address: '203.0.113.50' }),
      await pay({ email_address: 'ally@allow.example', ip_address: '203.0.113.51' }),
      // both lists match: the project's allow has its say first
      await pay({ email_address: 'ally@allow.example', ip_address: '198.51.100.5' }),
      await pay({ email_address: 'other@allow.example', ip_address: '198.51.100.6' }),
      // on no list: no allow counted
      await pay({ email_address: 'nobody@allow.example', ip_address: '203.0.113.52' }),
    ];
    const after = await decisions('tender_risk_allows_total');
    const key = (s: Sample) => `${s.labels.mode} ${s.labels.scope} ${s.labels.kind}`;
    const moved = after
      .map((s) => [key(s), s.value - (before.find((b) => key(b) === key(s))?.value ?? 0)] as const)
      .filter(([, d]) => d !== 0);
    assert.deepEqual(moved.sort(), [
      ['test platform network', 1],
      ['test project email', 3],
    ]);
    const rules = [];
    for (const id of orders)
      rules.push(
        (await t.api('GET', `/v1/orders/${id}/`, undefined, { key: shop.api_key })).body.transactions[0].risk.rules.map(
          (r: Json) => r.rule,
        ),
      );
    assert.deepEqual(rules, [['allowlist_email'], ['allowlist_email'], ['allowlist_email'], ['platform_allowlist_network'], []]);
    // the series exist from the start for every scope and kind and both modes, and name nothing else
    assert.equal(after.length, 2 * 2 * 6);
    for (const s of after) {
      assert.deepEqual(Object.keys(s.labels).sort(), ['kind', 'mode', 'scope', 'service']);
      const text = JSON.stringify(s.labels);
      for (const secret of [shop.project_id, shop.merchant_id, '198.51', 'allow.example']) assert.ok(!text.includes(secret), text);
    }
  } finally {
    await cli('risk list remove', { platform: true, id: platform.entry.id });
  }
});
