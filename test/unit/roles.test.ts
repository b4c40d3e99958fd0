import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allows, capabilityOf, ROLES, type Role } from '../../src/domain/roles.ts';

const may = (role: Role, method: string, route: string, action?: string) => allows(role, capabilityOf(method, route, action));

test('viewers read and manage only their own sign-in; every change is refused', () => {
  assert.ok(may('viewer', 'GET', '/projects/:project_id/orders/'));
  assert.ok(may('viewer', 'POST', '/projects/:project_id/settings/totp/setup'));
  assert.ok(!may('viewer', 'POST', '/projects/:project_id/orders/:order_id/actions', 'refund'));
  assert.ok(!may('viewer', 'GET', '/projects/:project_id/orders/:order_id/confirm', 'refund'));
  assert.ok(!may('viewer', 'POST', '/projects/:project_id/settings/keys'));
  assert.ok(!may('viewer', 'POST', '/projects/:project_id/links/'));
  assert.ok(!may('viewer', 'GET', '/projects/:project_id/team/'));
});

test('support moves money; developers hold keys and webhooks; neither manages the team', () => {
  for (const a of ['capture', 'void', 'refund', 'cancel']) {
    assert.ok(may('support', 'POST', '/projects/:project_id/orders/:order_id/actions', a), a);
    assert.ok(!may('developer', 'POST', '/projects/:project_id/orders/:order_id/actions', a), a);
  }
  assert.ok(may('developer', 'POST', '/projects/:project_id/orders/:order_id/actions', 'resend'));
  assert.ok(!may('support', 'POST', '/projects/:project_id/orders/:order_id/actions', 'resend'));
  for (const r of [
    '/projects/:project_id/settings/keys',
    '/projects/:project_id/settings/webhook-url',
    '/projects/:project_id/webhooks/test',
  ]) {
    assert.ok(may('developer', 'POST', r), r);
    assert.ok(!may('support', 'POST', r), r);
  }
  for (const role of ['developer', 'support'] as const) assert.ok(!may(role, 'POST', '/projects/:project_id/team/invite'));
});

test('owners may do everything; an unknown POST route or action is owners only (fails closed)', () => {
  for (const role of ROLES) {
    assert.equal(may(role, 'POST', '/projects/:project_id/something-new'), role === 'owner', role);
    assert.equal(may(role, 'POST', '/projects/:project_id/orders/:order_id/actions', 'teleport'), role === 'owner', role);
  }
  assert.ok(may('owner', 'POST', '/projects/:project_id/team/require-totp'));
  assert.ok(may('owner', 'GET', '/projects/:project_id/audit/'));
});

test("the Risk page's lists: everyone reads them, only owners change them", () => {
  for (const role of ROLES) {
    assert.ok(may(role, 'GET', '/projects/:project_id/risk/'), role);
    assert.equal(may(role, 'POST', '/projects/:project_id/risk/'), role === 'owner', role);
    assert.equal(may(role, 'POST', '/projects/:project_id/risk/:entry_id/remove'), role === 'owner', role);
  }
});
