// Blocklists and allowlists (docs/risk.md "Lists"): what an entry may be, its stored range, the
// keys a payment is looked up by, and what the hits do to the velocity limits' decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyLists, parseEntry, parseNetwork, paymentKeys, LIST_RULES, type ListKind } from '../../src/domain/risk/lists.ts';
import { countryOf, parseBinTable, TEST_BINS } from '../../src/domain/risk/bins.ts';
import { DomainError } from '../../src/domain/errors.ts';

const fp = (pan: string) => `fp(${pan})`;
const parse = (kind: ListKind, v: string) => parseEntry(kind, v, fp);
const inRange = (e: { lo: string; hi: string }, v: string) => e.lo <= v && v <= e.hi;

test('every kind: what is entered becomes its stored range; a card is kept as its fingerprint and last 4 digits only', () => {
  assert.deepEqual(parse('card', '4111 1111 1111 1111'), {
    kind: 'card',
    value: '•••• 1111',
    lo: 'fp(4111111111111111)',
    hi: 'fp(4111111111111111)',
  });
  assert.deepEqual(parse('bin', '411111'), { kind: 'bin', value: '411111', lo: '41111100', hi: '41111199' });
  assert.deepEqual(parse('bin', '41110000-41119999'), { kind: 'bin', value: '41110000-41119999', lo: '41110000', hi: '41119999' });
  assert.deepEqual(parse('country', 'nl'), { kind: 'country', value: 'NL', lo: 'NL', hi: 'NL' });
  assert.deepEqual(parse('email', ' Eve@Example.ORG '), {
    kind: 'email',
    value: 'eve@example.org',
    lo: 'eve@example.org',
    hi: 'eve@example.org',
  });
  assert.deepEqual(parse('email_domain', '@Example.org'), {
    kind: 'email_domain',
    value: 'example.org',
    lo: 'example.org',
    hi: 'example.org',
  });
  const net = parse('network', '203.0.113.0/24');
  assert.equal(net.value, '203.0.113.0/24');
  const key = (a: string) => paymentKeys('f', '4111111111111111', undefined, a, undefined).network!;
  assert.ok(inRange(net, key('203.0.113.7')) && inRange(net, key('::ffff:203.0.113.255')));
  assert.ok(!inRange(net, key('203.0.114.0')) && !inRange(net, key('2001:db8::1')));
  const v6 = parse('network', '2001:DB8:0:0::/64');
  assert.equal(v6.value, '2001:db8::/64');
  assert.ok(inRange(v6, key('2001:db8::abcd')) && !inRange(v6, key('2001:db8:0:1::1')) && !inRange(v6, key('203.0.113.7')));
  assert.equal(parse('network', '198.51.100.7').value, '198.51.100.7');
});

test('every rule of an entry is broken once: a clear ValidationError on value', () => {
  const bad: Array<[ListKind, string]> = [
    ['card', '4111111111111112'], // Luhn
    ['card', '4111'],
    ['bin', '4111'],
    ['bin', '411111-4111'],
    ['bin', '411199-411100'],
    ['bin', '4111x1'],
    ['country', 'XX'],
    ['country', 'NLD'],
    ['network', '203.0.113.7/24'], // host bits
    ['network', '203.0.113.0/33'],
    ['network', '0.0.0.0/0'],
    ['network', '300.1.1.1'],
    ['network', '2001:db8::/129'],
    ['network', 'example.com'],
    ['network', '10.0.0.0/8/1'],
    ['email', 'no-at.example.org'],
    ['email', 'a@b'],
    ['email_domain', 'localhost'],
    ['email_domain', 'exa mple.com'],
  ];
  for (const [kind, v] of bad)
    assert.throws(
      () => parse(kind, v),
      (e: unknown) => e instanceof DomainError && e.type === 'ValidationError' && e.field === 'value',
      `${kind} ${v}`,
    );
  assert.equal(parseNetwork('fe80::1%eth0'), undefined);
});

test("a payment's keys: its first 8 digits, its address in stored form, its email and every parent domain", () => {
  const k = paymentKeys('f', '4000002500001001', 'FR', '203.0.113.7', 'Eve@Mail.Example.org');
  assert.equal(k.bin, '40000025');
  assert.equal(k.country, 'FR');
  assert.equal(k.email, 'eve@mail.example.org');
  assert.deepEqual(k.domains, ['mail.example.org', 'example.org']);
  assert.equal(paymentKeys('f', '4111111111111111', undefined, 'test', 'nobody').network, undefined);
});

test('the BIN table: the test cards by their longest prefix; a loaded table adds to it; a bad line fails naming it', () => {
  const t = parseBinTable(TEST_BINS);
  assert.equal(countryOf(t, '4000002500001001'), 'FR');
  assert.equal(countryOf(t, '4000005280000002'), 'NL');
  assert.equal(countryOf(t, '4111111111111111'), 'US');
  assert.equal(countryOf(t, '5105105105105100'), undefined);
  parseBinTable('# a comment\n\n510510,BE\n', t);
  assert.equal(countryOf(t, '5105105105105100'), 'BE');
  assert.throws(() => parseBinTable('510510,BE\n51,NL\n'), /line 2/);
  assert.throws(() => parseBinTable('510510,QQ\n'), /line 1/);
});

test('a platform block refuses; a project allow passes the limits and the project blocks; a platform allow passes the limits only', () => {
  const limits = { action: 'refuse' as const, rules: [{ rule: 'address_attempts', action: 'refuse' as const, reason: 'many' }] };
  const hit = (scope: 'project' | 'platform', list: 'block' | 'allow', kind: ListKind = 'email') => ({ scope, list, kind });
  const rules = (s: { rules: Array<{ rule: string }> }) => s.rules.map((r) => r.rule);

  assert.deepEqual(applyLists([], limits), limits);
  assert.deepEqual(rules(applyLists([hit('project', 'allow')], limits)), ['allowlist_email']);
  assert.equal(applyLists([hit('project', 'allow')], limits).action, 'pass');
  assert.equal(applyLists([hit('platform', 'allow', 'network')], limits).action, 'pass');
  const blocked = applyLists([hit('project', 'allow'), hit('platform', 'block', 'card')], { action: 'pass', rules: [] });
  assert.equal(blocked.action, 'refuse');
  assert.deepEqual(rules(blocked), ['platform_blocklist_card']);
  assert.equal(applyLists([hit('project', 'allow'), hit('project', 'block', 'country')], limits).action, 'pass');
  const own = applyLists([hit('platform', 'allow'), hit('project', 'block', 'bin')], limits);
  assert.equal(own.action, 'refuse');
  assert.deepEqual(rules(own), ['blocklist_bin', 'address_attempts']);
  assert.equal(LIST_RULES.length, 24);
});
