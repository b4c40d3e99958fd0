import type { LinkView } from '../../domain/schemas/link.ts';
import type { Ctx, OrderStatusHook } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import type { Config } from '../../config.ts';
import type { Queryable } from '../../store/db/db.ts';
import { findProject } from '../../store/platform/projects.ts';
import * as links from '../../store/links/payment-links.ts';
import type { LinkRow } from '../../store/links/payment-links.ts';
import type { OrderInput } from '../../domain/schemas/order.ts';
import { DomainError, notFound } from '../../domain/errors.ts';
import { addDuration } from '../../domain/duration.ts';
import { deriveLinkStatus, isFinalLink, type LinkState } from '../../domain/link-status.ts';
import { activeMethods, methodAccepts, settingsOf } from '../../domain/project.ts';
import { isPaymentMethod, type PaymentMethod } from '../../domain/payment-methods.ts';
import { checkOrderInput, createOrder, withMethodNames } from '../payments/orders.ts';
import { checkPublicUrls } from '../platform/public-urls.ts';
import { schedule } from '../../store/platform/jobs.ts';
import { newId } from '../../domain/ids.ts';
import type { ProjectRow } from '../../domain/entities.ts';

const DEFAULT_LINK_EXPIRATION = 'P30D';

/** What a merchant sends to create a link (the writable Payment link fields of the spec). */
export interface LinkInput {
  merchant_order_id: string;
  amount: number;
  currency: string;
  description?: string;
  payment_methods?: string[];
  expiration_period?: string;
  return_url?: string;
  webhook_url?: string;
}

/** The customer-facing address of a link. */
export const linkUrl = (config: Config, linkId: string) => `${config.publicBaseUrl}/pay/links/${linkId}/`;

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString().replace('Z', '+00:00') : undefined);
const later = (a: Date, b: Date) => (new Date(a).getTime() >= new Date(b).getTime() ? a : b);

/** The link's derived state at the project's clock. */
export async function linkState(q: Queryable, link: LinkRow, now: Date): Promise<LinkState> {
  return deriveLinkStatus(await links.ordersOfLink(q, link.project_id, link.id), link.expires_at, now);
}

/** The Payment link resource of the spec. */
function renderLink(config: Config, link: LinkRow, state: LinkState): LinkView {
  // An expired link reads as expired from its expiry moment on, whether or not its job has run yet.
  const expired = state.status === 'expired';
  const view: Record<string, unknown> = {
    id: link.id,
    project_id: link.project_id,
    merchant_id: link.merchant_id,
    merchant_order_id: link.merchant_order_id,
    description: link.description,
    currency: link.currency,
    amount: link.amount,
    payment_methods: link.payment_methods,
    expiration_period: link.expiration_period,
    return_url: link.return_url,
    webhook_url: link.webhook_url,
    payment_url: linkUrl(config, link.id),
    status: state.status,
    reason: state.reason,
    completed_order_id: state.completed_order_id,
    orders: state.orders,
    flags: link.flags,
    created: iso(link.created),
    modified: iso(expired ? later(link.modified, link.expires_at) : link.modified),
    completed: iso(link.completed ?? (expired ? link.expires_at : null)),
  };
  for (const k of Object.keys(view)) if (view[k] === undefined || view[k] === null) delete view[k];
  // with the nulls gone, what the schema leaves out
  return view as LinkView;
}

export async function createLink(ctx: Ctx, project: ProjectRow, sent: LinkInput) {
  const input = withMethodNames(ctx.config.paymentMethodAliases, sent);
  const expiration_period = input.expiration_period ?? DEFAULT_LINK_EXPIRATION;
  // The same rules as an order: ISO 4217 currency, positive duration, known and active methods.
  checkOrderInput(project, { currency: input.currency, amount: input.amount, expiration_period, payment_methods: input.payment_methods });
  // Live projects: no webhooks or customer redirects into private networks (SSRF).
  await checkPublicUrls(ctx, project, { webhook_url: input.webhook_url, return_url: input.return_url });
  const now = nowFor(project);
  const link: LinkRow = {
    id: newId(),
    project_id: project.id,
    merchant_id: project.merchant_id,
    merchant_order_id: input.merchant_order_id,
    description: input.description ?? null,
    currency: input.currency,
    amount: input.amount,
    payment_methods: input.payment_methods ?? null,
    expiration_period,
    expires_at: addDuration(now, expiration_period),
    return_url: input.return_url ?? null,
    webhook_url: input.webhook_url ?? null,
    flags: project.mode === 'test' ? ['is-test'] : [],
    created: now,
    modified: now,
    completed: null,
  };
  await ctx.db.tx(async (q) => {
    await links.insertLink(q, link);
    await schedule(q, { project_id: project.id, kind: 'expire_payment_link', ref_id: link.id, run_at: link.expires_at });
  });
  return renderLink(ctx.config, link, deriveLinkStatus([], link.expires_at, now));
}

export async function getLink(ctx: Ctx, project: ProjectRow, linkId: string) {
  const link = await links.findLink(ctx.db, project.id, linkId);
  if (!link) throw notFound('payment link');
  return renderLink(ctx.config, link, await linkState(ctx.db, link, nowFor(project)));
}

/** Methods the customer can choose on the link page: the link's own list, else every active one, in its currency. */
function linkMethods(project: ProjectRow, link: LinkRow): PaymentMethod[] {
  const settings = settingsOf(project.settings);
  const wanted = link.payment_methods?.filter(isPaymentMethod) ?? activeMethods(settings);
  return wanted.filter((m) => activeMethods(settings).includes(m) && methodAccepts(settings, m, link.currency));
}

export interface LinkPage {
  link: LinkRow;
  project: ProjectRow;
  state: LinkState;
  /** its orders, oldest first, with their last transaction's reason */
  orders: links.LinkOrderRow[];
  methods: PaymentMethod[];
}

/** Everything the public link page shows; undefined when no such link exists. */
export async function linkPage(ctx: Ctx, linkId: string): Promise<LinkPage | undefined> {
  const link = await links.linkById(ctx.db, linkId);
  if (!link) return undefined;
  const project = (await findProject(ctx.db, link.project_id))!;
  const orders = await links.ordersOfLink(ctx.db, link.project_id, link.id);
  const state = deriveLinkStatus(orders, link.expires_at, nowFor(project));
  return { link, project, state, orders, methods: linkMethods(project, link) };
}

export type PayResult = { redirect: string } | { refused: LinkState };

/**
 * The customer chose a method on the link page: a new order from the link, every time, so a failed
 * attempt can be followed by another. A paid or expired link takes no new order.
 */
export async function orderFromLink(ctx: Ctx, page: LinkPage, method: PaymentMethod): Promise<PayResult> {
  const { link, project, state } = page;
  if (isFinalLink(state.status)) return { refused: state };
  if (!page.methods.includes(method)) throw new DomainError('Forbidden', `payment method ${method} is not offered by this link`);
  const base: OrderInput = {
    merchant_order_id: link.merchant_order_id,
    currency: link.currency,
    amount: link.amount,
    ...(link.description !== null && { description: link.description }),
    ...(link.return_url !== null && { return_url: link.return_url }),
    ...(link.webhook_url !== null && { webhook_url: link.webhook_url }),
    // A failed, cancelled or expired attempt brings the customer back here to try again.
    failure_url: linkUrl(ctx.config, link.id),
  };
  try {
    const order = await createOrder(ctx, project, { ...base, transactions: [{ payment_method: method }] }, { paymentLinkId: link.id });
    return { redirect: order.transactions[0].payment_url! }; // a payment's transaction has its page
  } catch (err) {
    // A wallet whose acquirer needs a billing address the link does not have: the hosted order
    // page, limited to that method, asks for what is missing.
    if (!(err instanceof DomainError) || err.type !== 'MissingInformationToCreateTransaction') throw err;
    const order = await createOrder(ctx, project, { ...base, payment_methods: [method] }, { paymentLinkId: link.id });
    return { redirect: order.order_url! }; // an order without a transaction keeps its page
  }
}

/** Order status hook: keeps the link's modified and completed in step with its orders, in the order's own statement. */
export const followLinkOrders: OrderStatusHook = (w, order, _from, to, now) => {
  if (order.payment_link_id) w.add(links.followOrderPart(order.project_id, order.payment_link_id, order.id, now, to === 'completed'));
};

/** Job expire_payment_link, at the link's expiry in the project's clock. Safe to run twice. */
export async function expirePaymentLink(ctx: Ctx, linkId: string) {
  await ctx.db.tx(async (q) => {
    const link = await links.linkById(q, linkId);
    if (!link) return;
    const project = (await findProject(q, link.project_id))!;
    const locked = (await links.findLink(q, project.id, linkId, true))!;
    const state = await linkState(q, locked, nowFor(project));
    if (state.status !== 'expired' || locked.completed) return;
    await links.touchLink(q, linkId, { modified: later(locked.modified, locked.expires_at), completed: locked.expires_at });
  });
}
