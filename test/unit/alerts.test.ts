// The alerting rules and the dashboard shipped in ops/prometheus: `promtool check rules` and
// `promtool test rules` (Debian's promtool, installed by .ci/run), and every metric the rules and
// the dashboard read is one Tender exports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { registry } from '../../src/telemetry/metrics.ts';

const run = promisify(execFile);
const DIR = join(import.meta.dirname, '..', '..', 'ops', 'prometheus');

test('promtool check rules: the alerting rules are valid', async () => {
  const { stdout } = await run('promtool', ['check', 'rules', join(DIR, 'alerts.yml')]);
  assert.match(stdout, /SUCCESS: 10 rules found/);
});

test('promtool test rules: each alert fires on its synthetic series, and quiet series stay quiet', async () => {
  const { stdout } = await run('promtool', ['test', 'rules', join(DIR, 'alerts.test.yml')], { cwd: DIR });
  assert.match(stdout, /SUCCESS/);
  // one firing test per rule
  const rules = [...readFileSync(join(DIR, 'alerts.yml'), 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
  const tests = readFileSync(join(DIR, 'alerts.test.yml'), 'utf8');
  for (const rule of rules) {
    const firing = new RegExp(`alertname: ${rule}\\n\\s+exp_alerts:\\n\\s+- exp_labels`);
    assert.match(tests, firing, `a test where ${rule} fires`);
  }
});

test('a broken rule file is refused by promtool (the check can fail)', async () => {
  const bad = join(DIR, 'alerts.test.yml'); // a test file is not a rule file
  await assert.rejects(run('promtool', ['check', 'rules', bad]));
});

/** Metric names in PromQL text: tender_*, process_*, nodejs_*, up (histogram suffixes dropped). */
const namesIn = (text: string) =>
  new Set([...text.matchAll(/\b((?:tender|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, '')));

test('the rules and the Grafana dashboard read only metrics Tender exports', async () => {
  const exported = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
  const dashboard = JSON.parse(readFileSync(join(DIR, 'grafana-dashboard.json'), 'utf8')) as {
    panels: Array<{ targets?: Array<{ expr: string }> }>;
  };
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  assert.ok(exprs.length >= 10, 'the dashboard has its panels');
  for (const name of [...namesIn(readFileSync(join(DIR, 'alerts.yml'), 'utf8')), ...namesIn(exprs.join('\n'))])
    assert.ok(exported.has(name), `${name} is exported`);
});
