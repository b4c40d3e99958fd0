import { isUuid, type OrderId, type TransactionId } from '../../domain/ids.ts';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { type Ctx, type OrderStatusHook } from '../platform/context.ts';
import { dataKeyFor } from '../platform/crypto-envelope.ts';
import { cvcSealed, openCard } from '../vault/cards.ts';
import { cvcOfOrderPart, findCardAuth } from '../../store/vault/cards.ts';
import { startAuthentication } from './attempts/three-ds.ts';
import { authorizeStep, type Step, type ThreeDsView } from './attempts/authorization.ts';
export type { Step, ThreeDsView, ThreeDsVisit } from './attempts/authorization.ts';
import { invalid, notFound } from '../../domain/errors.ts';
import { isFinalOrder } from '../../domain/status.ts';
import type { ThreeDsResult } from '../../acquirer/connector.ts';
import type { Purchase } from '../../acquirer/authenticator.ts';
import { authenticatorFor, connectorFor, operationRef } from './connectors.ts';
import type { Config } from '../../config.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { SEALED, sealHolderName } from '../vault/holder-names.ts';
import { holdRefusal, screenCard, type RiskView, type Shopper } from '../risk/screen.ts';
import { CARD } from '../../domain/payment-methods.ts';
import { outsideCardRanges, prepareCardRanges } from '../threeds/ranges.ts';
import { methodBeforeLookup } from '../threeds/method.ts';

/**
 * Card payments after the vault (the authorization itself: authorization.ts): authenticate (3-D Secure), authorize through the project's
 * connector, and where the customer goes afterwards.
 *
 *   authenticate   new -> pending      3-D Secure decided, CVC sealed, redirect_url answered
 *   3DS page       pending -> accepted | declined | error | processing   (authorization)
 *   late_decline   processing -> declined                               (job, inquire)
 */

export interface StartInput {
  vault_token: string;
  cvc: string;
}

/** The simulated 3-D Secure page of a transaction, on the API host. */
export const threeDsUrl = (config: Config, transactionId: TransactionId) => `${config.publicBaseUrl}/pay/3ds/${transactionId}/`;
const resultUrl = (config: Config, orderId: OrderId) => `${config.publicBaseUrl}/pay/${orderId}/result/`;

const FAILED = new Set(['cancelled', 'expired', 'error']);

/**
 * Where the customer goes when the payment is over: failure_url (else return_url) for
 * cancelled, expired and error orders, return_url otherwise, with order_id and project_id
 * appended to the URL's own query. Without a URL, the service's own result page.
 */
export function returnUrlFor(
  config: Config,
  order: Pick<OrderRow, 'id' | 'project_id' | 'status' | 'body'> & Partial<Pick<OrderRow, 'payment_link_id'>>,
): string {
  const b = order.body ?? {};
  // an attempt failed and the order's page takes another: the customer stays with us, on that page
  if (order.status === 'new' && b.order_url === true && !order.payment_link_id) return `${config.publicBaseUrl}/pay/${order.id}/`;
  const target: string | undefined = FAILED.has(order.status) ? (b.failure_url ?? b.return_url) : b.return_url;
  if (!target) return resultUrl(config, order.id);
  const url = new URL(target);
  const extra = `order_id=${encodeURIComponent(order.id)}&project_id=${encodeURIComponent(order.project_id)}`;
  url.search = url.search.length > 1 ? `${url.search}&${extra}` : `?${extra}`;
  return url.toString();
}

/** 3-D Secure of an attempt the velocity limits refused: R, so the card is never authorized. */
const REFUSED: ThreeDsResult = { trans_status: 'R', liability_shift: false };

/** 3 digits; 4 only for American Express (the hosted form; the API's cvc field takes 3, docs/design.md). */
const CVC = /^[0-9]{3,4}$/;

/** POST /v1/orders/{order_id}/transactions/{transaction_id}/authenticate/ */
export function authenticate(ctx: Ctx, project: ProjectRow, orderId: OrderId, transactionId: TransactionId, input: StartInput) {
  return start(ctx, project, orderId, transactionId, input);
}

/** For the hosted card form: the same start, bound to the transaction instead of an API key. */
export async function startCardPayment(ctx: Ctx, transactionId: TransactionId, input: StartInput, shopper: Shopper = {}) {
  const txn = isUuid(transactionId) ? await orders.transactionById(ctx.db, transactionId) : undefined;
  const project = txn && (await findProject(ctx.db, txn.project_id));
  if (!txn || !project) throw notFound('transaction');
  return start(ctx, project, txn.order_id, txn.id, input, shopper);
}

async function start(
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  transactionId: TransactionId,
  input: StartInput,
  shopper: Shopper = {},
): Promise<{ redirect_url: string }> {
  if (typeof input.vault_token !== 'string' || !isUuid(input.vault_token)) throw invalid('vault_token', 'vault_token must be a uuid');
  if (typeof input.cvc !== 'string' || !CVC.test(input.cvc)) throw invalid('cvc', 'cvc must be 3 digits');
  // a live project with no acquirer is refused before anything is recorded
  connectorFor(ctx, project);
  const authenticator = authenticatorFor(ctx, project);
  await prepareCardRanges(ctx, project, authenticator);
  const dk = await dataKeyFor(ctx, project.id);
  const method = await methodBeforeLookup(ctx, project, authenticator, transactionId, input, shopper, dk);
  if (method && 'redirect' in method) return { redirect_url: method.redirect };
  let risk: RiskView | undefined;
  await startAuthentication(ctx, project, orderId, transactionId, {
    ...(method ? { attemptId: method.lookup.id } : {}),
    vaultToken: input.vault_token,
    field: 'vault_token',
    method: CARD,
    check: (card) => {
      if (input.cvc.length === 4 && card.brand !== 'amex') throw invalid('cvc', 'cvc must be 3 digits');
    },
    // the velocity limits (docs/risk.md): a refused attempt asks no 3-D Secure server and is
    // declined authentication_failed at the 3-D Secure page, with no authorization
    ask: async (card, txn, now, operationId, order) => {
      const began = Date.now();
      const data = openCard(dk, card);
      risk = await screenCard(ctx, project, order, txn, data.pan, shopper);
      if (risk.action === 'refuse') return holdRefusal(ctx, began).then(() => REFUSED);
      const outside = await outsideCardRanges(ctx, authenticator, data, operationId);
      if (outside) return outside;
      return authenticator.authenticate3ds({
        ...operationRef(txn, now, operationId),
        card: data,
        ...(risk.action === 'challenge' ? { challenge: true } : {}),
        purchase: { ...purchaseOf(ctx.config, project, order, txn, shopper), method_done: method?.lookup.comp_ind ?? 'U' },
      });
    },
    keep(card) {
      const name = openCard(dk, card).name;
      return { cvc: cvcSealed(dk, card, input.cvc), details: name !== undefined ? { [SEALED]: sealHolderName(dk, name) } : {}, risk };
    },
  });
  return { redirect_url: threeDsUrl(ctx.config, transactionId) };
}

/** What an EMV AReq carries of the order, its customer and browser, and Tender's URLs (acquirer/authenticator.ts Purchase). */
function purchaseOf(config: Config, project: ProjectRow, order: OrderRow, txn: TransactionRow, shopper: Shopper = {}): Purchase {
  const b = order.body ?? {};
  const c = b.customer ?? {};
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  return {
    merchant_name: str(b.merchant_name) ?? project.name,
    notification_url: `${threeDsUrl(config, txn.id)}cres`,
    server_url: `${config.publicBaseUrl}/pay/3ds/rreq`,
    requestor_url: config.publicBaseUrl,
    customer: {
      email: str(c.email_address),
      phone: Array.isArray(c.phone_numbers) ? str(c.phone_numbers[0]) : undefined,
      address: str(c.address),
      city: str(c.city),
      postal_code: str(c.postal_code),
      country: str(c.country),
    },
    ...(shopper.browser ? { browser: shopper.browser } : shopper.address ? { browser: { ip: shopper.address } } : {}),
  };
}

/** What the 3-D Secure page needs to know about a transaction (no lock). */
export async function loadThreeDs(ctx: Ctx, transactionId: TransactionId): Promise<ThreeDsView | undefined> {
  if (!isUuid(transactionId)) return undefined;
  const txn = await orders.transactionById(ctx.db, transactionId);
  if (!txn) return undefined;
  const [order, project, auth] = await Promise.all([
    orders.findOrder(ctx.db, txn.project_id, txn.order_id),
    findProject(ctx.db, txn.project_id),
    findCardAuth(ctx.db, txn.project_id, txn.id),
  ]);
  if (!order || !project) return undefined;
  return { txn, order, project, auth };
}

/** GET of the 3-D Secure page: what it shows, and for a frictionless transaction still pending, the authorization (authorization.ts). */
export const visitThreeDs = (ctx: Ctx, transactionId: TransactionId) => authorizeStep(ctx, transactionId, { kind: 'frictionless' });

/** Finishes 3-D Secure (a challenge's answer, a cancel) and authorizes, once. Returns the order as it is afterwards. */
export async function completeAuthentication(ctx: Ctx, target: string | ThreeDsView, step: Step): Promise<OrderRow | undefined> {
  return (await authorizeStep(ctx, typeof target === 'string' ? target : target.txn.id, step))?.order;
}

/**
 * Order status hook: an order that ends while a CVC is still sealed (expired during the challenge,
 * cancelled by the merchant) loses it in the same database transaction.
 */
export const dropSealedCvc: OrderStatusHook = (w, order, _from, to) => {
  if (isFinalOrder(to)) w.add(cvcOfOrderPart(order.project_id, order.id));
};
