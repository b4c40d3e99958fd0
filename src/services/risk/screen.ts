import type { Browser } from '../../acquirer/authenticator.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AttemptFailedHook, Ctx, OrderStatusHook } from '../platform/context.ts';
import { isFinalOrder } from '../../domain/status.ts';
import { decide, HISTORY, LIMITS, riskDecisionLabels, type Count, type Screening, type Subject } from '../../domain/risk/limits.ts';
import { addressSubjects, emailSubject } from '../../domain/risk/subjects.ts';
import { attemptDeclineParts, countAttempt, declineParts, forgetOld, settledPart } from '../../store/risk/counters.ts';
import { bucketOf, cardFingerprint, keys } from './key.ts';
import { binTable, screenLists } from './lists.ts';
import { countryOf } from '../../domain/risk/bins.ts';
import { ALLOW_LABELS, allowLabels, applyLists, BLOCK_RULES } from '../../domain/risk/lists.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { risk } from '../../telemetry/metrics.ts';
import { velocityFacts, type PendingRule } from '../../domain/risk/rules.ts';
import { judge, paymentFacts } from './rules.ts';
import { watchHold } from './hold.ts';

/**
 * Screening of a card attempt against the velocity limits (docs/risk.md), at the one point every
 * card payment passes before anything reaches the acquirer: the start of 3-D Secure
 * (services/payments/card.ts). One statement counts the attempt in each of its counters and
 * reads them; the decision is made here from the counts.
 */

/** Where the shopper is, as the caller knows it: the browser's address on the hosted pages. */
export interface Shopper {
  address?: string;
  /** the customer's browser, for an EMV AReq (the hosted form's request headers) */
  browser?: Browser;
}

/** The decision on a transaction, as its `risk` object shows it. */
export type RiskView = Screening & { screened: string; card_country?: string; pending?: PendingRule[] };

// every series a limit can produce exists from the start at 0: a burst's first refusals then show
// in rate() and increase() (a series born at its first increment loses that increment to them)
for (const mode of ['test', 'live'] as const)
  for (const labels of [
    { decision: 'pass', rule: 'none' },
    ...LIMITS.map((l) => ({ decision: l.action, rule: l.rule })),
    ...BLOCK_RULES.map((rule) => ({ decision: 'refuse', rule })),
  ])
    risk.decisions.inc({ mode, ...labels }, 0);
for (const mode of ['test', 'live'] as const) for (const labels of ALLOW_LABELS) risk.allows.inc({ mode, ...labels }, 0);

/**
 * Counts the attempt and decides: refuse, challenge, flag or pass. Without the shopper's address
 * (none sent, or not an address), the per-card, per-order and per-project limits still hold.
 */
export async function screenCard(
  ctx: Ctx,
  project: Pick<ProjectRow, 'id' | 'mode'>,
  order: Pick<OrderRow, 'id' | 'body'>,
  txn: Pick<TransactionRow, 'id' | 'amount' | 'currency' | 'payment_method'>,
  pan: string,
  shopper: Shopper = {},
): Promise<RiskView> {
  const k = keys(ctx);
  const fingerprint = cardFingerprint(k, pan);
  // the issuing country, from the BIN table: the lists' country entries and the rules' card_country read it
  const cardCountry = countryOf(binTable(ctx), pan);
  const customer = (order.body?.customer ?? {}) as Record<string, unknown>;
  const where = addressSubjects(shopper.address ?? (typeof customer.ip_address === 'string' ? customer.ip_address : undefined));
  const customerId = typeof customer.merchant_customer_id === 'string' ? customer.merchant_customer_id : undefined;
  const email = customerId ? undefined : emailSubject(customer.email_address);
  const values: Array<[Subject, string, string | undefined]> = [
    ['card', project.id, fingerprint],
    ['card_platform', 'platform', fingerprint],
    ['address', project.id, where?.address],
    ['network', project.id, where?.network],
    ['order', project.id, order.id],
    ['customer', project.id, customerId],
    ['guest', project.id, email],
    ['project', project.id, ''],
  ];
  const subjectOf = new Map<string, Subject>();
  for (const [subject, scope, value] of values) if (value !== undefined) subjectOf.set(bucketOf(k, subject, scope, value), subject);

  const limits = ctx.config.risk;
  const windowMs = limits.windowSeconds * 1000;
  const now = Date.now();
  const start = now - (now % windowMs);
  // the lists (services/risk/lists.ts): a statement of their own, sent beside the count, awaited
  // below (the catch only keeps a failure from being unhandled meanwhile)
  const listed = screenLists(
    ctx,
    project.id,
    { fingerprint, pan, country: cardCountry },
    shopper.address ?? customer.ip_address,
    customer.email_address,
  );
  listed.catch(() => undefined);
  const rows = await countAttempt(ctx.db, {
    transaction_id: txn.id,
    project_id: project.id,
    order_id: order.id,
    buckets: [...subjectOf.keys()].sort(),
    window_start: new Date(start),
    window_ms: windowMs,
    history: HISTORY,
    created: new Date(now),
  });
  const counts: Partial<Record<Subject, Count>> = {};
  for (const r of rows)
    counts[subjectOf.get(r.bucket)!] = {
      attempts: r.attempts,
      previous: r.previous,
      hourAttempts: r.hour_attempts,
      hourDeclines: r.hour_declines,
    };
  sweep(ctx, now, windowMs);
  const elapsed = (now - start) / windowMs;
  // the lists first (an allow passes the limits, a block refuses), then the merchant's rules and
  // the platform hold, read by the same statement as the counts (docs/risk.md)
  const facts = paymentFacts(txn, order, pan, velocityFacts(counts, elapsed), cardCountry);
  const decision = judge(applyLists(await listed, decide(limits, counts, elapsed)), rows[0], facts);
  watchHold(ctx, project, now);
  risk.decisions.inc({ mode: project.mode, ...riskDecisionLabels(decision) });
  const allowed = allowLabels(decision);
  if (allowed) risk.allows.inc({ mode: project.mode, ...allowed });
  // the card's issuing country is kept with the decision: the `risk` object shows it, the dry run replays it
  return { ...decision, ...(cardCountry ? { card_country: cardCountry } : {}), screened: new Date(now).toISOString() };
}

/**
 * A refused attempt answers no sooner than RISK_REFUSAL_FLOOR_MS after it began: an allowed one
 * asks the 3-D Secure server and then the acquirer, a refused one asks neither, and without the
 * hold the quicker answer would tell a card tester which attempts were refused.
 */
export async function holdRefusal(ctx: Ctx, began: number) {
  const left = began + ctx.config.risk.refusalFloorMs - Date.now();
  if (left > 0) await sleep(left);
}

const lastSweep = new WeakMap<object, number>();
/** At most once a minute per node: forget counters out of every window, and old screenings. */
function sweep(ctx: Ctx, now: number, windowMs: number) {
  // the first screening of a node only starts the clock: no sweep on the path of a payment that finds none due
  if (now - (lastSweep.get(ctx.db) ?? lastSweep.set(ctx.db, now).get(ctx.db)!) < 60_000) return;
  lastSweep.set(ctx.db, now);
  forgetOld(ctx.db, new Date(now - (HISTORY + 2) * windowMs), new Date(now - 7 * 86_400_000)).catch((err) =>
    ctx.log.warn({ err: (err as Error).message }, 'risk counters not swept'),
  );
}

/**
 * Order status hook: an order that fails (a declined or failed transaction) adds the decline of
 * its screened attempt to each counter the attempt counted in, in the same statement; an order
 * that ends otherwise only marks them counted.
 */
export const countDeclines: OrderStatusHook = (w, order, _from, to) => {
  if (to === 'error') for (const part of declineParts(order.project_id, order.id)) w.add(part);
  else if (isFinalOrder(to)) w.add(settledPart(order.project_id, order.id));
};

/** Attempt failed hook: a declined attempt on an order that stays open counts as a decline now, not when the order ends. */
export const countFailedAttempt: AttemptFailedHook = (w, txn) => {
  for (const part of attemptDeclineParts(txn.project_id, txn.id)) w.add(part);
};
