import { randomUUID } from 'node:crypto';
import { blockTransactionCard } from '../risk/lists.ts';
import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as store from '../../store/portal/merchants.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { advanceClock } from '../../store/platform/projects.ts';
import { insertApiKey } from '../../store/platform/projects.ts';
import { DomainError, notFound } from '../../domain/errors.ts';
import { durationMs, isPositiveDuration } from '../../domain/duration.ts';
import { newKey } from '../platform/tenancy.ts';
import { captureTransaction, voidTransaction } from '../payments/captures.ts';
import { refundOrder } from '../payments/refunds.ts';
import { cancelOrder, getOrder } from '../payments/orders.ts';
import { resendWebhooks, rotateWebhookSecret, setProjectWebhookUrl } from '../webhooks/endpoints.ts';
import { chargeback, settleOrder } from '../payments/chargebacks.ts';
import { getLink, linkState, linkUrl } from '../links/payment-links.ts';
import type { PortalUser } from './users.ts';
import { isUuid, type OrderId, type ProjectId } from '../../domain/ids.ts';
import { withOperationKey } from '../payments/operation-key.ts';
import type { Queryable } from '../../store/db/db.ts';

/**
 * The operation key of a portal confirmation: its user and token. A space never appears in an
 * Idempotency-Key (visible ASCII only), so no API request of the project can name the same attempts.
 */
const portalOperationKey = (actor: Actor, token: string) => `portal ${actor.user.id} ${token}`;

/**
 * The merchant portal's use cases, on the services the API uses. Everything here is scoped to
 * the signed-in user's merchant: a project or order of another merchant is NotFound.
 */

/** The merchant's projects, test ones after live ones. */
export const projectsOf = (ctx: Ctx, user: PortalUser) => store.projectsOfMerchant(ctx.db, user.merchant_id);

export async function projectOf(ctx: Ctx, user: PortalUser, projectId: ProjectId): Promise<ProjectRow> {
  const p = (await projectsOf(ctx, user)).find((x) => x.id === projectId.toLowerCase());
  if (!p) throw notFound('project');
  return p;
}

export const merchantName = async (ctx: Ctx, user: PortalUser) => (await store.merchantName(ctx.db, user.merchant_id)) ?? '';

// ---- audit log -----------------------------------------------------------------------------

export interface Actor {
  user: PortalUser;
  /** the client's address */
  address: string;
}

export async function audit(ctx: Ctx, actor: Actor, action: string, projectId: ProjectId | null, detail: Record<string, unknown> = {}) {
  await store.insertAudit(ctx.db, {
    id: randomUUID(),
    merchant_id: actor.user.merchant_id,
    user_id: actor.user.id,
    email: actor.user.email,
    project_id: projectId,
    action,
    detail,
    address: actor.address,
  });
}

export const auditLog = (ctx: Ctx, user: PortalUser, limit = 100) => store.auditOf(ctx.db, user.merchant_id, limit);

// ---- API keys ------------------------------------------------------------------------------

export const keysOf = (ctx: Ctx, project: ProjectRow) => store.keysOf(ctx.db, project.id);

/** A new key beside the existing ones (revoke the old one when the new one is in place). Shown once. */
export async function createKey(ctx: Ctx, actor: Actor, project: ProjectRow): Promise<{ id: string; api_key: string; hint: string }> {
  const k = newKey(project.mode);
  const id = randomUUID();
  await insertApiKey(ctx.db, { id, project_id: project.id, key_hash: k.hash, hint: k.hint });
  await audit(ctx, actor, 'key_created', project.id, { key_id: id, hint: k.hint });
  return { id, api_key: k.key, hint: k.hint };
}

export async function revokeKey(ctx: Ctx, actor: Actor, project: ProjectRow, keyId: string) {
  if (!isUuid(keyId) || !(await store.revokeKey(ctx.db, project.id, keyId.toLowerCase()))) throw notFound('API key');
  ctx.keyCache?.clear(); // the key stops working now, not at the cache's TTL
  await audit(ctx, actor, 'key_revoked', project.id, { key_id: keyId });
}

// ---- order actions -------------------------------------------------------------------------

export const ORDER_ACTIONS = ['capture', 'void', 'refund', 'cancel', 'resend', 'chargeback', 'settle', 'block_card'] as const;
export type OrderAction = (typeof ORDER_ACTIONS)[number];
export const isOrderAction = (a: string): a is OrderAction => (ORDER_ACTIONS as readonly string[]).includes(a);
/** Actions of the test tools: test projects only. */
const TEST_ONLY: OrderAction[] = ['chargeback', 'settle'];

export interface ActionInput {
  transactionId?: string;
  /** minor units; absent: all that is left */
  amount?: number;
  description?: string;
}

/** The actions that call the acquirer: never inside a transaction (docs/money.md "Acquirer attempts"). */
const MONEY_ACTIONS: OrderAction[] = ['capture', 'void', 'refund'];

/**
 * Runs an action on an order through the API's services (same rules, same errors), once per
 * `token`: the confirmation form's token, so a resent form answers the first result.
 * Answers the id of the order to show (the payment order itself).
 */
export async function orderAction(
  ctx: Ctx,
  actor: Actor,
  project: ProjectRow,
  orderId: OrderId,
  action: OrderAction,
  input: ActionInput,
  token: string,
): Promise<string> {
  if (TEST_ONLY.includes(action) && project.mode !== 'test')
    throw new DomainError('Forbidden', 'test tools are available to test projects only');
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token))
    throw new DomainError('ValidationError', 'the confirmation is missing or not valid; start again from the order', 'token');
  const audited = (q: Queryable) =>
    store.insertAudit(q, {
      id: randomUUID(),
      merchant_id: actor.user.merchant_id,
      user_id: actor.user.id,
      email: actor.user.email,
      project_id: project.id,
      action,
      detail: {
        order_id: orderId,
        ...(input.amount !== undefined ? { amount: input.amount } : {}),
        ...(input.transactionId ? { transaction_id: input.transactionId } : {}),
      },
      address: actor.address,
    });
  if (MONEY_ACTIONS.includes(action)) return moneyAction();
  // The claim, the work and its result commit together (as an Idempotency-Key request does):
  // a process that dies mid-action leaves neither the work nor the token behind, so the
  // confirmation can be sent again and acts once. A second send of the same token waits for
  // the first to commit, then answers its result. None of these actions calls the acquirer
  // (callAcquirer refuses to run inside this transaction).
  const open = await ctx.db.begin();
  try {
    const claim = await store.claimAction(open.q, token, actor.user.id);
    if (claim !== true) {
      await open.rollback();
      if (claim.result === null) throw new DomainError('IdempotencyError', 'this action is still being processed', 'token', 'conflict');
      return claim.result;
    }
    const result = await ctx.db.within(open, async () => {
      const shown = await run();
      await store.finishAction(ctx.db, token, shown);
      await audited(ctx.db);
      return shown;
    });
    await open.commit();
    return result;
  } catch (err) {
    await open.rollback(); // an action refused with an error may be tried again with the same token
    throw err;
  }

  /**
   * A capture, void or refund takes the API's path (record and commit, call with nothing open,
   * apply) with no transaction around it. The token is claimed in a statement of its own; the
   * attempt the action records takes its id from the token (withOperationKey, as an
   * Idempotency-Key does), so the same form sent again (a double click, or after the process was
   * killed mid-call) finds that attempt and answers its result: the acquirer is asked once. A
   * refusal before any attempt leaves nothing: the corrected form, same token, acts.
   */
  async function moneyAction(): Promise<string> {
    const claim = await store.claimAction(ctx.db, token, actor.user.id);
    if (claim !== true && claim.result !== null) return claim.result;
    const shown = await withOperationKey(project.id, portalOperationKey(actor, token), run);
    await ctx.db.tx(async (q) => {
      await store.finishAction(q, token, shown);
      await audited(q);
    });
    return shown;
  }

  async function run(): Promise<string> {
    const txn = () => {
      if (!input.transactionId || !isUuid(input.transactionId))
        throw new DomainError('ValidationError', 'choose a transaction', 'transaction_id');
      return input.transactionId;
    };
    switch (action) {
      case 'capture':
        await captureTransaction(ctx, project, orderId, txn());
        break;
      case 'void':
        await voidTransaction(
          ctx,
          project,
          orderId,
          txn(),
          input.amount !== undefined ? { amount: input.amount, description: input.description || 'Partial void' } : undefined,
        );
        break;
      case 'refund':
        if (input.amount === undefined) throw new DomainError('ValidationError', 'amount is required', 'amount');
        await refundOrder(ctx, project, orderId, {
          amount: input.amount,
          ...(input.description ? { description: input.description } : {}),
        });
        break;
      case 'cancel':
        await cancelOrder(ctx, project, orderId);
        break;
      case 'resend':
        await resendWebhooks(ctx, project, orderId);
        break;
      case 'chargeback':
        await chargeback(ctx, project, orderId, input.amount);
        break;
      case 'settle':
        await settleOrder(ctx, project, orderId);
        break;
      case 'block_card':
        // the card of one of the order's transactions onto the project's blocklist (docs/risk.md "Lists"), audited there too
        await blockTransactionCard(ctx, project, orderId, txn(), actor);
        break;
    }
    return orderId;
  }
}

/** The order and the orders made from it (captures, voids, refunds, chargebacks), as the API shows them. */
export async function orderWithRelated(ctx: Ctx, project: ProjectRow, orderId: OrderId) {
  if (!isUuid(orderId)) throw notFound('order');
  const order = await getOrder(ctx, project, orderId.toLowerCase());
  const related = await Promise.all((order.related_orders ?? []).map((id) => getOrder(ctx, project, id)));
  const parent = order.related_order_id ? await getOrder(ctx, project, order.related_order_id).catch(() => undefined) : undefined;
  return { order, related, parent };
}

// ---- payment links -------------------------------------------------------------------------

/** The list reads ctx.replica (it may lag a moment); a link's own page reads the primary. */
export async function linksOf(ctx: Ctx, project: ProjectRow, limit = 100) {
  const rows = await store.linksOf(ctx.replica, project.id, limit);
  const now = nowFor(project);
  return Promise.all(
    rows.map(async (r) => ({
      ...r,
      url: linkUrl(ctx.config, r.id),
      state: await linkState(ctx.replica, { ...r, project_id: project.id } as never, now),
    })),
  );
}

export async function linkOf(ctx: Ctx, project: ProjectRow, linkId: string) {
  if (!isUuid(linkId)) throw notFound('payment link');
  return getLink(ctx, project, linkId.toLowerCase());
}

// ---- test tools ----------------------------------------------------------------------------

/** Advances a test project's clock (optional) and runs the jobs that became due. */
export async function runTestClock(ctx: Ctx, actor: Actor, project: ProjectRow, advance: string | undefined) {
  if (project.mode !== 'test') throw new DomainError('Forbidden', 'the test clock is available to test projects only');
  if (advance !== undefined) {
    if (!isPositiveDuration(advance))
      throw new DomainError('ValidationError', 'advance must be a positive ISO 8601 duration such as PT1H or P1D', 'advance');
    project.clock_offset_ms = await advanceClock(ctx.db, project.id, durationMs(advance));
    ctx.keyCache?.clear();
  }
  const jobs = await ctx.dueWork.settle(project.id);
  await audit(ctx, actor, 'test_clock', project.id, { ...(advance ? { advance } : {}), jobs_run: jobs });
  return { clock: nowFor(project), jobs };
}

// ---- settings ------------------------------------------------------------------------------

/** The project's webhook URL (with the live SSRF rules of the API); empty clears it. */
export async function saveWebhookUrl(ctx: Ctx, actor: Actor, project: ProjectRow, url: string) {
  const saved = await setProjectWebhookUrl(ctx, project.id, url.trim() ? url.trim() : null);
  await audit(ctx, actor, 'webhook_url_changed', project.id, { webhook_url: saved.webhook_url });
  return saved;
}

export async function rotateSecret(ctx: Ctx, actor: Actor, project: ProjectRow) {
  const rotated = await rotateWebhookSecret(ctx, project.id);
  await audit(ctx, actor, 'webhook_secret_rotated', project.id);
  return rotated;
}
