/**
 * Roles of the merchant portal's users and what each may do (docs/portal.md "Team and roles").
 * Every signed-in route asks `capabilityOf` what it needs, and `allows` answers for the user's
 * role: one table, checked before any handler runs, so a hidden button is never the only guard.
 */

export const ROLES = ['owner', 'developer', 'support', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (r: unknown): r is Role => typeof r === 'string' && (ROLES as readonly string[]).includes(r);

/**
 * read: see pages; self: the user's own sign-out and second factor; developer: API keys,
 * webhooks and the test clock; money: captures, voids, refunds, cancels, payment links and the
 * test money tools; team: users, roles, the second-factor rule and the audit log; risk: the
 * project's blocklists and allowlists (docs/risk.md "Lists"); payouts: the payout schedule and
 * account (docs/payouts.md), owners only; disputes: accepting or defending a chargeback (the
 * merchant's word to the acquirer, as binding as the team).
 */
export type Capability = 'read' | 'self' | 'developer' | 'money' | 'team' | 'risk' | 'payouts' | 'disputes';

const GRANTS: Record<Role, readonly Capability[]> = {
  owner: ['read', 'self', 'developer', 'money', 'team', 'risk', 'payouts', 'disputes'],
  developer: ['read', 'self', 'developer'],
  support: ['read', 'self', 'money'],
  viewer: ['read', 'self'],
};

export const allows = (role: Role, cap: Capability) => GRANTS[role].includes(cap);

const ORDER_ACTION_CAPS: Record<string, Capability> = {
  capture: 'money',
  void: 'money',
  refund: 'money',
  cancel: 'money',
  chargeback: 'money',
  settle: 'money',
  resend: 'developer',
  block_card: 'risk',
};

/** POST routes (Fastify's route pattern, under the portal's prefix) and what they need. */
const POSTS: Record<string, Capability> = {
  '/sign-out': 'self',
  '/projects/:project_id/settings/totp/setup': 'self',
  '/projects/:project_id/settings/totp/confirm': 'self',
  '/projects/:project_id/settings/totp/disable': 'self',
  '/projects/:project_id/settings/keys': 'developer',
  '/projects/:project_id/settings/keys/:key_id/revoke': 'developer',
  '/projects/:project_id/settings/webhook-url': 'developer',
  '/projects/:project_id/settings/webhook-secret': 'developer',
  '/projects/:project_id/test/clock': 'developer',
  '/projects/:project_id/webhooks/test': 'developer',
  '/projects/:project_id/webhooks/:delivery_id/resend': 'developer',
  '/projects/:project_id/risk/rules': 'developer',
  '/projects/:project_id/risk/rules/:rule_id/change': 'developer',
  '/projects/:project_id/links/': 'money',
  '/projects/:project_id/team/invite': 'team',
  '/projects/:project_id/team/:user_id/role': 'team',
  '/projects/:project_id/team/:user_id/remove': 'team',
  '/projects/:project_id/team/require-totp': 'team',
  '/projects/:project_id/risk/': 'risk',
  '/projects/:project_id/risk/:entry_id/remove': 'risk',
  '/projects/:project_id/settings/payouts': 'payouts',
  '/projects/:project_id/disputes/:dispute_id/accept': 'disputes',
  '/projects/:project_id/disputes/:dispute_id/defend': 'disputes',
};

const TEAM_PAGES = new Set(['/projects/:project_id/team/', '/projects/:project_id/audit/']);

/**
 * What a request needs. `action` is the order action of an order's confirmation page or action
 * form. A POST route missing from the table needs `team` (owners only): new routes fail closed.
 */
export function capabilityOf(method: string, route: string, action?: string): Capability {
  const order = route.endsWith('/orders/:order_id/actions') || route.endsWith('/orders/:order_id/confirm');
  if (order && action !== undefined) return ORDER_ACTION_CAPS[action] ?? 'team';
  if (method === 'GET' || method === 'HEAD') return TEAM_PAGES.has(route) ? 'team' : 'read';
  return POSTS[route] ?? 'team';
}
