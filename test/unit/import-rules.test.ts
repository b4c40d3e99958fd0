// The layers of docs/architecture.md, checked on src/ by an import-graph check of our own
// (test/helpers/import-graph.ts), which is itself tested on fixture trees that keep and break each rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { checkImports, RULES, specifiers } from '../helpers/import-graph.ts';

const ROOT = join(import.meta.dirname, '..', '..');
// written apart so the expected messages are not taken for paths leaving the repository
const up = '..' + '/';
const fixture = (name: string) => join(ROOT, 'test', 'fixtures', 'import-rules', name, 'src');

test('src/ keeps every import rule and has no import cycle, with no exceptions', () => {
  assert.deepEqual(checkImports(join(ROOT, 'src')), []);
});

test('a tree where each layer imports only what its rule allows passes', () => {
  assert.deepEqual(checkImports(fixture('clean')), []);
});

test('a tree where each layer breaks its rule fails, naming each file and import', () => {
  const problems = checkImports(fixture('broken'))
    .filter((p) => !p.message.startsWith('import cycle'))
    .map((p) => `${p.file}: ${p.message}`)
    .sort();
  assert.deepEqual(problems, [
    `acquirer/conn.ts: acquirer may not import store (${up}store/payments/rows.ts)`,
    `cli/cmd.ts: cli may not import http (${up}http/route.ts)`,
    'config.ts: config may not import store (./store/payments/rows.ts)',
    `domain/rule.ts: domain may not import config (${up}config.ts)`,
    'extra/odd.ts: extra is not a known layer',
    `http/route.ts: http may not import store (${up}store/payments/rows.ts)`,
    `jobs/work.ts: jobs may not import http (${up}http/route.ts)`,
    'log.ts: log may not import domain (./domain/rule.ts)',
    'main.ts: main may not import cli (./cli/cmd.ts)',
    'services/loose.ts: services/ files live in a capability folder (platform, vault, threeds, risk, payments, webhooks, wallets, links, reporting, payouts, disputes, portal)',
    `services/payments/use.ts: services may not import jobs (${up}${up}jobs/work.ts)`,
    `services/platform/far.ts: imports ${up}${up}${up}outside.ts, outside the source tree`,
    `services/platform/reach.ts: services/platform may not import store/payments, a group above it (${up}${up}store/payments/rows.ts)`,
    'services/platform/sql.ts: services runs SQL: every statement belongs in store/',
    `services/vault/up.ts: services/vault may not import services/portal, a group above it (${up}portal/top.ts)`,
    `store/payments/rows.ts: store may not import services (${up}${up}services/payments/use.ts)`,
    `store/platform/up.ts: store/platform may not import store/payments, a group above it (${up}payments/rows.ts)`,
    `telemetry/metric.ts: telemetry may not import log (${up}log.ts)`,
    `wallets/token.ts: wallets may not import acquirer (${up}acquirer/conn.ts)`,
  ]);
  // every layer with a rule to break has a file that breaks it
  const broken = new Set(problems.map((p) => p.split(/[/.]/)[0]));
  for (const layer of Object.keys(RULES)) if (layer !== 'main') assert.ok(broken.has(layer), `the fixture breaks the rule of ${layer}`);
});

test('import cycles are found, within a layer and across layers', () => {
  const cycles = checkImports(fixture('broken'))
    .filter((p) => p.message.startsWith('import cycle'))
    .map((p) => p.message);
  assert.equal(cycles.length, 2);
  assert.ok(
    cycles.some((c) => c.includes('domain/rule.ts') && c.includes('domain/other.ts')),
    cycles.join('\n'),
  );
  assert.ok(
    cycles.some((c) => ['store/payments/rows.ts', 'services/payments/use.ts', 'jobs/work.ts', 'http/route.ts'].every((f) => c.includes(f))),
    cycles.join('\n'),
  );
});

test('specifiers: import, import type, export from, side-effect and dynamic imports; not comments or packages', () => {
  const text = [
    "import { a } from './a.ts';",
    `import type { B } from '${up}b.ts';`,
    "import {\n  c,\n  type D,\n} from './c.ts';",
    "export { e } from './e.ts';",
    "export * from './f.ts';",
    "import './g.ts';",
    "const h = await import('./h.ts');",
    "// import { no } from './comment.ts';",
    "/* import { no } from './block.ts'; */",
    "import pino from 'pino';",
    "import { x } from 'node:fs';",
  ].join('\n');
  assert.deepEqual(specifiers(text).sort(), [`${up}b.ts`, './a.ts', './c.ts', './e.ts', './f.ts', './g.ts', './h.ts']);
});
