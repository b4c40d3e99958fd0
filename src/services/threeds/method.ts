import type { Authenticator, Browser } from '../../acquirer/authenticator.ts';
import { decodeBrowser, encodeBrowser } from '../../acquirer/threeds/messages.ts';
import { newId } from '../../domain/ids.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { isFinalOrder } from '../../domain/status.ts';
import { CARD } from '../../domain/payment-methods.ts';
import {
  beginMethod,
  findMethod,
  finishMethod,
  methodCvcOfOrderPart,
  methodTarget,
  noteNotified,
  takeFinishedMethod,
} from '../../store/threeds/method.ts';
import { nowFor, type Ctx, type OrderStatusHook } from '../platform/context.ts';
import { dataKeyFor, openField, type DataKey } from '../platform/crypto-envelope.ts';
import { cvcSealed, openCard } from '../vault/cards.ts';
import { cardRangeFor } from './ranges.ts';

/**
 * The EMV 3DS Method (docs/three-d-secure.md "The 3DS Method"): when the card's range has a
 * threeDSMethodURL, the lookup waits. Tender's 3-D Secure page posts the method data
 * (threeDSServerTransID, threeDSMethodNotificationURL) to the ACS in a hidden iframe; the ACS
 * notifies Tender's route; the page's go-ahead comes on the notification or after
 * METHOD_WAIT_MS, and the AReq then carries threeDSCompInd Y (notified) or N (not); a card
 * whose range has no method URL is asked at once with U. The AReq's threeDSServerTransID is the
 * one the method data named: it becomes the lookup attempt's id.
 */

/** how long the page waits for the ACS's notification before it goes ahead */
export const METHOD_WAIT_MS = 10_000;

/** The customer as the lookup sees them (services/risk/screen.ts Shopper). */
interface Shopper {
  address?: string;
  browser?: Browser;
}

/** What a card payment's start does about the method: run it first (the page's URL), or the lookup's id and threeDSCompInd. */
export type MethodStep = { redirect: string } | { lookup: { id: string; comp_ind: 'Y' | 'N' } } | undefined;

const pageUrl = (ctx: Ctx, transactionId: string) => `${ctx.config.publicBaseUrl}/pay/3ds/${transactionId}/`;
const notificationUrl = (ctx: Ctx, transactionId: string) => `${pageUrl(ctx, transactionId)}method-notification`;

/**
 * Before a live card payment's lookup: a method finished for this transaction is taken (its id
 * and threeDSCompInd for the AReq); else, when the card's range has a method URL, the method is
 * begun (the CVC sealed with it) and the customer's browser is sent to the 3-D Secure page to run
 * it. Undefined: the lookup goes ahead with U (no method URL, or not a card this start may use:
 * the start refuses it as before).
 */
export async function methodBeforeLookup(
  ctx: Ctx,
  project: ProjectRow,
  authenticator: Authenticator,
  transactionId: string,
  input: { vault_token: string; cvc: string },
  shopper: Shopper,
  dk: DataKey,
): Promise<MethodStep> {
  if (!authenticator.directoryFor) return undefined;
  const taken = await takeFinishedMethod(ctx.db, project.id, transactionId);
  if (taken) return { lookup: { id: taken.server_trans_id, comp_ind: taken.comp_ind === 'Y' ? 'Y' : 'N' } };
  const target = await methodTarget(ctx.db, project.id, transactionId, input.vault_token);
  if (!target || target.status !== 'new' || target.payment_method !== CARD) return undefined;
  if (target.expires_at && nowFor(project) >= target.expires_at) return undefined;
  const card = openCard(dk, target.card);
  const answer = await cardRangeFor(ctx, authenticator, card);
  const url = answer.known ? answer.range?.method_url : undefined;
  if (!url) return undefined;
  await beginMethod(ctx.db, {
    project_id: project.id,
    transaction_id: transactionId,
    server_trans_id: newId(),
    method_url: url,
    vault_token: target.card.id,
    cvc_ct: cvcSealed(dk, target.card, input.cvc),
    shopper: { ...shopper },
  });
  return { redirect: pageUrl(ctx, transactionId) };
}

/** What the 3-D Secure page needs to run a transaction's method still unfinished, or undefined. */
export async function pendingMethod(
  ctx: Ctx,
  transactionId: string,
): Promise<{ method_url: string; method_data: string; continue_url: string } | undefined> {
  const m = await findMethod(ctx.db, transactionId);
  if (!m || m.finished_at) return undefined;
  return {
    method_url: m.method_url,
    method_data: encodeBrowser({
      threeDSServerTransID: m.server_trans_id,
      threeDSMethodNotificationURL: notificationUrl(ctx, transactionId),
    }),
    continue_url: `${pageUrl(ctx, transactionId)}method`,
  };
}

/** The ACS's notification (its threeDSMethodData names the transaction): noted once; whether it named this transaction's method. */
export async function methodNotified(ctx: Ctx, transactionId: string, field: string | undefined): Promise<boolean> {
  const data = decodeBrowser(field);
  const id = data?.threeDSServerTransID;
  if (typeof id !== 'string') return false;
  const m = await findMethod(ctx.db, transactionId);
  if (!m || m.server_trans_id !== id) return false;
  await noteNotified(ctx.db, transactionId, id);
  return true;
}

/**
 * The page's go-ahead: the method finished (Y when the ACS notified, else N) and what the card
 * payment's start needs again: the card, its CVC and the customer's browser. Undefined when no
 * method is unfinished (a second go-ahead).
 */
export async function methodFinished(
  ctx: Ctx,
  transactionId: string,
): Promise<{ order_id: string; vault_token: string; cvc: string; shopper: Shopper; comp_ind: 'Y' | 'N' } | undefined> {
  const m = await finishMethod(ctx.db, transactionId);
  if (!m) return undefined;
  const dk = await dataKeyFor(ctx, m.project_id);
  const cvc = m.cvc_ct ? openField(dk, m.vault_token, 'cvc', m.cvc_ct) : '';
  ctx.log.info(
    { transaction: transactionId, three_ds_server_trans_id: m.server_trans_id, comp_ind: m.comp_ind },
    '3-D Secure: 3DS Method finished',
  );
  return { order_id: m.order_id, vault_token: m.vault_token, cvc, shopper: m.shopper as Shopper, comp_ind: m.comp_ind ?? 'N' };
}

/** Order status hook: an order that ends loses the CVC a method still holds. */
export const dropMethodCvc: OrderStatusHook = (w, order, _from, to) => {
  if (isFinalOrder(to)) w.add(methodCvcOfOrderPart(order.project_id, order.id));
};
