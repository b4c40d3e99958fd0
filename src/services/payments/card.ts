import { isUuid, newId, type OrderId, type TransactionId } from '../../domain/ids.ts';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { nowFor, type Ctx, type OrderStatusHook } from '../platform/context.ts';
import { dataKeyFor } from '../platform/crypto-envelope.ts';
import { cvcSealed, openCard } from '../vault/cards.ts';
import { addCardAuth, changeSealedCvc, cvcOfOrderPart, findCardAuth, type VaultCardRow } from '../../store/vault/cards.ts';
import { planMove } from './transitions.ts';
import type { StartView } from '../../store/payments/card-flow.ts';
import { recordStart, startRows, type StartRows } from '../../store/payments/payment-rows.ts';
import { dropAttempt, dropAttemptPart, gateAsRecorded, inFlight } from '../../store/payments/attempts.ts';
import { awaitAttempt, callAcquirer, newAttempt, planAnswered, type Answer } from './attempts.ts';
import { keyedAttemptId } from './operation-key.ts';
import { liabilityShift, type TransStatus } from '../../domain/card.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { authorizeStep, type Step, type ThreeDsView } from './authorization.ts';
export type { Step, ThreeDsView, ThreeDsVisit } from './authorization.ts';
import { ApiError, inFlightError, invalid, notFound } from '../../domain/errors.ts';
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

/** How a payment method starts card authentication (the hosted form and API with a card; wallets with a device token). */
export interface AuthenticationStart {
  /** the stored card, and the input field that named it (for errors) */
  vaultToken: string;
  field: string;
  /** the payment method the transaction must have, when the caller has not checked it */
  method?: string;
  /** the event source of the move to pending (default set_status) */
  source?: string;
  /** what the request must satisfy of the card, checked before anything is recorded */
  check?(card: VaultCardRow): void;
  /** 3-D Secure decided without the acquirer: the device authenticated the customer (a wallet's cryptogram) */
  device?(card: VaultCardRow): ThreeDsResult | undefined;
  /** asks the acquirer's 3-D Secure server, as the attempt `operationId`, with no database transaction open */
  ask(card: VaultCardRow, txn: TransactionRow, now: Date, operationId: string, order: OrderRow): Promise<ThreeDsResult>;
  /** the lookup attempt's id, when chosen before (the 3DS Method's threeDSServerTransID) */
  attemptId?: string;
  /** what else the started transaction keeps: the card's sealed CVC (the hosted form), details to show, the risk decision */
  keep?(card: VaultCardRow): { cvc?: string; details?: Record<string, unknown>; risk?: RiskView };
}

/**
 * Starts card authentication, once for cards and wallets alike: the transaction must be new and
 * unexpired and the card stored for it; 3-D Secure is decided and the transaction moves
 * new -> pending. Asking the acquirer's 3-D Secure server is an attempt (docs/money.md "Acquirer
 * attempts"). A lookup moves no money, so it is recorded in the statement that reads the
 * transaction (locked for that statement), before the request is checked, and committed with it;
 * a refused request drops it again. It is asked with no database transaction open, and its
 * answer applied in one statement gated on the rows being as read (else under the lock).
 * 3-D Secure the device decided (a wallet's cryptogram) is an answer with no call: the lookup is
 * dropped in the same apply, and no attempt stays.
 */
export async function startAuthentication(
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  transactionId: TransactionId,
  start: AuthenticationStart,
): Promise<ThreeDsResult> {
  // record, with the read
  const keyed = keyedAttemptId('three_ds');
  const now = nowFor(project);
  const lookup = (id?: string) => {
    return newAttempt(ctx, project, { id: transactionId, order_id: orderId, currency: '' }, 'three_ds', 0, now, {
      request: { vault_token: start.vaultToken },
      id,
    });
  };
  let a = lookup(start.attemptId);
  let rows = await recordStart(ctx.db, project.id, orderId, transactionId, start.vaultToken, a, keyed ?? null);
  // the retry of an Idempotency-Key whose request recorded its lookup: that lookup's result; when
  // it got no answer, this retry asks again as a lookup of its own (a lookup moves no money)
  if (keyed && rows?.attempt) {
    const earlier = await keyedLookup(ctx, keyed);
    if (earlier !== 'unanswered') return earlier;
    a = lookup(newId());
    rows = await recordStart(ctx.db, project.id, orderId, transactionId, start.vaultToken, a, null);
  }
  let card: VaultCardRow;
  try {
    checkStart(rows?.txn, start, now);
    card = rows!.card!;
    checkCard(rows!.txn, card, start);
    start.check?.(card);
    if ('three_ds' in rows!.reserved || !rows!.recorded)
      throw new ApiError('TransactionAlreadyStarted', 'the transaction is being authenticated');
  } catch (err) {
    if (rows?.recorded) await dropAttempt(ctx.db, a.id);
    throw err;
  }
  const txn = rows!.txn;
  Object.assign(a, { amount: txn.amount, currency: txn.currency });
  // call, with no transaction open (none for 3-D Secure the device decided)
  const device = start.device?.(card);
  const answer: Answer<ThreeDsResult> = device
    ? { outcome: device }
    : await callAcquirer(ctx, a, () => start.ask(card, txn, now, a.id, rows!.order));
  const asked = !device;
  // apply: planned from the rows the record read, in one statement gated on their being as the
  // record left them (an order of several transactions reads its siblings again); else, or when
  // the gate held it back, planned the same from the rows read again under the lock
  let applied: Applied | undefined;
  if (rows!.statuses.length === 1) {
    const w = new WriteSet();
    gateAsRecorded(w, rows!.seen, txn, a.id);
    const planned = planApplied(ctx, w, { ...rows!, attempt: a, txn: { ...txn }, order: { ...rows!.order } }, answer, start, asked);
    if (await w.run(ctx.db)) applied = planned;
  }
  applied ??= await ctx.db.tx(async (q) => {
    const again = await startRows(q, project.id, orderId, transactionId, start.vaultToken, a.id);
    const w = new WriteSet();
    const planned = planApplied(ctx, w, again, answer, start, asked);
    if (!w.empty) await w.run(q, { commit: true });
    return planned;
  });
  if ('three' in applied) return applied.three;
  if ('refused' in applied) throw new ApiError('TransactionAlreadyStarted', applied.refused);
  throw lookupUnanswered();
}

/**
 * What a retried request answers from its 3-D Secure lookup (found by its Idempotency-Key): as the
 * first request did, or `unanswered` when that lookup failed: no answer came (a lookup is only
 * `failed` without one; an answer, whatever its 3-D Secure status, settles it `succeeded`).
 */
async function keyedLookup(ctx: Ctx, id: string): Promise<ThreeDsResult | 'unanswered'> {
  const a = (await awaitAttempt(ctx, id))!;
  if (a.status === 'succeeded') {
    const trans_status = a.response_code as TransStatus;
    return { trans_status, liability_shift: liabilityShift(trans_status) };
  }
  if (inFlight(a)) throw inFlightError('TransactionAlreadyStarted', 'the transaction is being authenticated');
  return 'unanswered';
}

const lookupUnanswered = () =>
  new ApiError('FailedToFetchTransactionInformation', 'the 3-D Secure server did not answer; the transaction can be authenticated again');

type Applied = { three: ThreeDsResult } | { refused: string } | { unanswered: true };

/**
 * The 3-D Secure answer's writes gathered in `w`: the attempt settled (dropped when it was not
 * `asked`: the device decided) and, when the transaction may still start, the start
 * (planStarted). 3-D Secure moves no money: without an answer the lookup failed, and the
 * transaction stays new.
 */
function planApplied(
  ctx: Ctx,
  w: WriteSet,
  rows: StartRows | undefined,
  answer: Answer<ThreeDsResult>,
  start: AuthenticationStart,
  asked: boolean,
): Applied {
  const attempt = rows?.attempt;
  if (!rows || !attempt || !inFlight(attempt)) return { refused: 'the transaction is being authenticated' };
  const at = nowFor(rows.project);
  if ('error' in answer) {
    planAnswered(ctx, w, attempt, { status: 'failed', error: answer.error.slice(0, 500), settled: at, modified: at }, at);
    return { unanswered: true };
  }
  const three = answer.outcome;
  if (asked) planAnswered(ctx, w, attempt, { status: 'succeeded', response_code: three.trans_status, settled: at, modified: at }, at);
  else w.add(dropAttemptPart(attempt.id));
  const problem = startProblem(rows.txn, at);
  if (!problem) planStarted(ctx, w, rows, rows.card!, three, start, at);
  return problem ? { refused: problem } : { three };
}

/** The start gathered in `w`: the 3-D Secure row, what the card keeps, and the move new -> pending with the card's details. */
function planStarted(
  ctx: Ctx,
  w: WriteSet,
  rows: StartView,
  card: VaultCardRow,
  three: ThreeDsResult,
  start: AuthenticationStart,
  now: Date,
) {
  const { txn } = rows;
  const kept = start.keep?.(card) ?? {};
  if (kept.cvc !== undefined) changeSealedCvc(w, card.id, kept.cvc);
  addCardAuth(w, {
    transaction_id: txn.id,
    project_id: txn.project_id,
    vault_token: card.id,
    trans_status: three.trans_status,
    eci: three.eci ?? null,
    emv: three.emv ?? null,
    acquirer_reference: null,
    created: now,
    modified: now,
  });
  const details: Record<string, unknown> = {
    ...txn.details,
    truncated_pan: card.truncated_pan,
    card_expiry: card.expiry,
    ...kept.details,
    vault_token: card.id,
  };
  if (three.trans_status !== 'C') details.liability_shift = three.liability_shift;
  planMove(ctx, w, txn, rows, 'pending', now, {
    ...(start.source ? { source: start.source } : {}),
    patch: { payment_method_brand: card.brand, details, ...(kept.risk ? { risk: kept.risk } : {}) },
  });
}

/** Why a transaction cannot start (any more): not new, or expired. */
function startProblem(txn: TransactionRow, now: Date): string | undefined {
  if (txn.status !== 'new') return `transaction already started: it is ${txn.status}`;
  if (txn.expires_at && now >= new Date(txn.expires_at)) return 'transaction has expired';
  return undefined;
}

/** The rules of starting: the transaction exists, has the method, is new and unexpired. */
function checkStart(txn: TransactionRow | undefined, start: Pick<AuthenticationStart, 'method'>, now: Date): asserts txn is TransactionRow {
  if (!txn) throw notFound('transaction');
  if (start.method && txn.payment_method !== start.method)
    throw invalid('transaction_id', `a ${txn.payment_method} transaction is not authenticated with a card`);
  const problem = startProblem(txn, now);
  if (problem) throw new ApiError('TransactionAlreadyStarted', problem);
}

/** ... and the card was stored for it. */
function checkCard(
  txn: TransactionRow,
  row: VaultCardRow | undefined,
  start: Pick<AuthenticationStart, 'field'>,
): asserts row is VaultCardRow {
  if (!row || row.transaction_id !== txn.id) throw invalid(start.field, `${start.field} is not a card stored for this transaction`);
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
