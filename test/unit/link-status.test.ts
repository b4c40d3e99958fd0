import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveLinkStatus, groupOrders, isFinalLink, type LinkOrder } from '../../src/domain/link-status.ts';

const t0 = new Date('2030-01-01T00:00:00Z');
const at = (min: number) => new Date(t0.getTime() + min * 60_000);
const expires = at(60 * 24 * 30);
const order = (id: string, status: LinkOrder['status'], min: number, extra: Partial<LinkOrder> = {}): LinkOrder => ({
  id,
  status,
  created: at(min),
  ...extra,
});

test('a link nobody tried is new', () => {
  const s = deriveLinkStatus([], expires, at(1));
  assert.equal(s.status, 'new');
  assert.match(s.reason, /not tried/);
  assert.deepEqual(s.orders, {});
  assert.equal(s.completed_order_id, undefined);
});

test('an order not final makes the link processing', () => {
  for (const status of ['new', 'processing', 'see-transactions'] as const) {
    const s = deriveLinkStatus([order('a', 'error', 1), order('b', status, 2)], expires, at(3));
    assert.equal(s.status, 'processing', status);
    assert.match(s.reason, /order b/);
  }
});

test('every order final and unsuccessful is all_unsuccessful, naming the last reason', () => {
  const s = deriveLinkStatus(
    [order('a', 'error', 1, { reason: 'declined' }), order('b', 'expired', 2, { reason: 'expired' }), order('c', 'cancelled', 3)],
    expires,
    at(4),
  );
  assert.equal(s.status, 'all_unsuccessful');
  assert.match(s.reason, /all 3 attempts failed \(last cancelled\)/);
  const one = deriveLinkStatus([order('a', 'error', 1, { reason: 'declined' })], expires, at(4));
  assert.equal(one.status, 'all_unsuccessful');
  assert.match(one.reason, /only attempt failed \(last error: declined\)/);
  assert.equal(isFinalLink(one.status), false);
});

test('one completed order completes the link, whatever the others and the clock say', () => {
  const orders = [order('a', 'error', 1), order('b', 'completed', 2, { completed: at(3) }), order('c', 'processing', 4)];
  const s = deriveLinkStatus(orders, expires, at(5));
  assert.equal(s.status, 'completed');
  assert.equal(s.completed_order_id, 'b');
  assert.match(s.reason, /paid by order b$/);
  // paid, then the link's expiry passes: still completed
  assert.equal(deriveLinkStatus(orders, expires, at(60 * 24 * 40)).status, 'completed');
  assert.equal(isFinalLink('completed'), true);
});

test('with two paid orders the first one paid is the completed order', () => {
  const s = deriveLinkStatus(
    [order('a', 'completed', 1, { completed: at(9) }), order('b', 'completed', 2, { completed: at(3) })],
    expires,
    at(10),
  );
  assert.equal(s.completed_order_id, 'b');
  assert.match(s.reason, /2 orders were paid/);
});

test('past its expiry without a paid order the link is expired, from the exact moment', () => {
  assert.equal(deriveLinkStatus([], expires, new Date(expires.getTime() - 1)).status, 'new');
  const s = deriveLinkStatus([], expires, expires);
  assert.equal(s.status, 'expired');
  assert.match(s.reason, /2030-01-31T00:00:00Z without any payment attempt/);
  const tried = deriveLinkStatus([order('a', 'error', 1), order('b', 'new', 2)], expires, at(60 * 24 * 31));
  assert.equal(tried.status, 'expired');
  assert.match(tried.reason, /after 2 attempts/);
  assert.equal(isFinalLink('expired'), true);
});

test('orders are grouped by status, oldest first', () => {
  const g = groupOrders([order('z', 'error', 5), order('y', 'completed', 4), order('x', 'error', 1)]);
  assert.deepEqual(g, { error: ['x', 'z'], completed: ['y'] });
});
