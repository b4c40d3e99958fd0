import type { Queryable } from '../../store/db/db.ts';
import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import { findProject } from '../../store/platform/projects.ts';
import * as orders from '../../store/payments/orders.ts';
import * as ledger from '../../store/payments/ledger.ts';
import { DomainError, invalid, notFound } from '../../domain/errors.ts';
import { debitLegs, figures, refundable, reserveFor, reserveLegs, reversalLegs, settlementLegs, type Leg } from '../../domain/ledger.ts';
import { settingsOf } from '../../domain/project.ts';
import { loadOrderView } from './order-view.ts';
import { moveTransaction } from './transitions.ts';
import { lockOrderPaymentRows, type PaymentRows } from '../../store/payments/payment-rows.ts';
import { changeTransaction } from '../../store/payments/changes.ts';
import { WriteSet } from '../../store/db/writes.ts';
import {
  book,
  debitRule,
  guarded,
  lockOrderPayment,
  nextSettlementRun,
  planBook,
  planChildOrder,
  planSettlement,
  planTouchOrder,
  renderPlanned,
  type ChildSpec,
} from './operations.ts';
import { schedule } from '../../store/platform/jobs.ts';
import type { ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { OrderId, ProjectId } from '../../domain/ids.ts';

/**
 * A chargeback (test projects simulate the issuer with it): the cardholder's bank takes back
 * captured money the merchant still holds. amount defaults to all of it. Answers the
 * chargeback order (flag is-chargeback, a debit transaction).
 */
export async function chargeback(ctx: Ctx, project: ProjectRow, orderId: OrderId, amount?: number, hook?: IssuerHook) {
  if (amount !== undefined && amount <= 0) throw invalid('amount', 'amount must be greater than 0');
  return issuerMove(ctx, project, orderId, hook, (txn, reserved) => {
    // refunds in flight at the acquirer hold their money (read under the payment's lock: every one recorded is seen)
    const left = refundable(txn) - (reserved.refund ?? 0);
    if (left <= 0) throw new DomainError('RefundError', 'no captured money is left to charge back');
    const take = amount ?? left;
    if (take > left) throw new DomainError('RefundError', `amount ${take} is above the ${left} that can still be charged back`, 'amount');
    const f = figures('debit', take, debitRule(project, 'chargeback'));
    return {
      spec: { kind: 'chargeback', amount: take, direction: 'debit', flags: ['is-chargeback'], figures: f, description: 'chargeback' },
      chargedBack: txn.charged_back_amount + take,
      flag: 'has-chargebacks',
      legs: debitLegs(take, f.fee, 'chargeback'),
    };
  });
}

/**
 * A chargeback reversal: the merchant won the dispute, the issuer returns the money and the
 * merchant is credited again. At most what is charged back and not yet reversed; amount
 * defaults to all of it. charged_back_amount counts what remains charged back, so the
 * reversed money can be refunded again. Answers the reversal order (flag is-reversal, a credit).
 */
export async function reverseChargeback(ctx: Ctx, project: ProjectRow, orderId: OrderId, amount?: number, hook?: IssuerHook) {
  if (amount !== undefined && amount <= 0) throw invalid('amount', 'amount must be greater than 0');
  return issuerMove(ctx, project, orderId, hook, (txn) => {
    const left = txn.charged_back_amount;
    if (left <= 0) throw new DomainError('RefundError', 'nothing is charged back on this order');
    const give = amount ?? left;
    if (give > left) throw new DomainError('RefundError', `amount ${give} is above the ${left} that is charged back`, 'amount');
    const f = figures('credit', give, debitRule(project, 'reversal'));
    return {
      spec: { kind: 'reversal', amount: give, direction: 'credit', flags: ['is-reversal'], figures: f, description: 'chargeback reversal' },
      chargedBack: txn.charged_back_amount - give,
      flag: 'has-reversals',
      legs: reversalLegs(give, f.fee),
    };
  });
}

/** What an issuer's move (a chargeback, its reversal) changes, decided from the locked payment. */
interface IssuerMove {
  spec: Omit<ChildSpec, 'status' | 'source'>;
  chargedBack: number;
  flag: string;
  legs: Leg[];
}

/**
 * What a caller adds to an issuer's move, in its transaction and under the payment's lock (a
 * dispute's stage, services/disputes): `skip` answers true when the move was made before (it is
 * then not made again), `also` writes what goes with it.
 */
export interface IssuerHook {
  skip?: (q: Queryable, txn: TransactionRow) => Promise<boolean>;
  also: (q: Queryable, made: { order: { id: string }; txn: TransactionRow }, payment: TransactionRow, now: Date) => Promise<void>;
}

/**
 * An issuer's move on a paid order, with no acquirer call: one locking read (its BEGIN with it),
 * then one statement of every write with the COMMIT: the completed child order, the payment's
 * charged back amount, the order's flag, the journal and the settlement job. Answers the child
 * order, rendered from what was written; undefined when the hook skipped it.
 */
async function issuerMove(
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  hook: IssuerHook | undefined,
  decide: (txn: PaymentRows['txn'], reserved: PaymentRows['reserved']) => IssuerMove,
) {
  return guarded('RefundError', async () => {
    const child = await ctx.db.tx(async (q) => {
      const rows =
        (await lockOrderPaymentRows(q, project.id, orderId)) ??
        // an order without an authorized payment: lockOrderPayment says why
        (await lockOrderPayment(q, project.id, orderId, 'RefundError'), undefined)!;
      const { txn, order } = rows;
      if (await hook?.skip?.(q, txn)) return undefined;
      const m = decide(txn, rows.reserved);
      const now = nowFor(project);
      const w = new WriteSet();
      const made = planChildOrder(ctx, w, rows.project, order, txn, { ...m.spec, status: 'completed', source: 'issuer' }, now);
      changeTransaction(w, txn.id, { charged_back_amount: m.chargedBack, modified: now });
      planTouchOrder(w, order, now, { flag: m.flag });
      planBook(w, made.txn, txn, now, m.legs);
      planSettlement(w, rows.project, now);
      await hook?.also(q, made, txn, now);
      await w.run(q, { commit: true });
      return made;
    });
    return child && renderPlanned(ctx, ctx.db, child);
  });
}

/**
 * Settles each transaction: marks it settled, moves its net amount from the merchant's pending
 * balance to available (holding back the project's reserve of a credit), and a settled sale or
 * capture becomes completed.
 */
async function settleRows(ctx: Ctx, q: Queryable, project: ProjectRow, rows: TransactionRow[], now: Date) {
  const reserve = settingsOf(project.settings).reserve;
  for (const t of rows) {
    const payment = t.of_transaction_id ? (await orders.transactionById(q, t.of_transaction_id))! : t;
    const fee = t.fee_amount ?? 0;
    await orders.markSettled(q, t.id, now);
    await book(q, t, payment, now, settlementLegs(t.credit_debit, t.amount, fee));
    const held = reserveFor(t.credit_debit, t.amount - fee, reserve?.bps ?? 0);
    if (held) await book(q, t, payment, now, reserveLegs(held, 'reserve'));
    if (t.status === 'accepted') await moveTransaction(ctx, q, t, 'completed', now, { source: 'settlement' });
  }
  return rows.length;
}

/** Gives back to the available balance every reserve held for the project's reserve days or longer (settings.reserve). */
async function releaseReserves(q: Queryable, project: ProjectRow, now: Date) {
  const days = settingsOf(project.settings).reserve?.days ?? 0;
  const due = await ledger.reservesDue(q, project.id, new Date(now.getTime() - days * 86_400_000));
  for (const r of due)
    await ledger.insertJournal(q, { ...r, project_id: project.id, created: now }, reserveLegs(r.amount, 'reserve_release'));
  return due.length;
}

/** POST /v1/test/orders/{id}/settle/: settles the order's money and that of the orders created from it. Answers the order. */
export async function settleOrder(ctx: Ctx, project: ProjectRow, orderId: OrderId) {
  return ctx.db.tx(async (q) => {
    const order = await orders.findOrder(q, project.id, orderId);
    if (!order) throw notFound('order');
    const rows = await ledger.lockUnsettledOfOrder(q, project.id, order.id);
    const now = nowFor(project);
    await settleRows(ctx, q, project, rows, now);
    await releaseReserves(q, project, now);
    return (await loadOrderView(q, ctx, project.id, order.id))!;
  });
}

/**
 * Job `settlement` (live projects, daily): settles every money transaction created before the
 * run, in batches; schedules the next day's run while later ones wait (every day, when the host's
 * settlement files are read for disputes: main.ts imports them before this runs).
 */
export async function runSettlement(ctx: Ctx, projectId: ProjectId, cutoff: Date, batch = 500) {
  let settled = 0;
  for (;;) {
    const n = await ctx.db.tx(async (q) => {
      const project = await findProject(q, projectId);
      if (!project) return 0;
      const rows = await ledger.lockUnsettledBefore(q, projectId, cutoff, batch);
      return settleRows(ctx, q, project, rows, nowFor(project));
    });
    settled += n;
    if (n < batch) break;
  }
  const dir = ctx.config.settlementFileDir;
  await ctx.db.tx(async (q) => {
    const later = await ledger.hasUnsettled(q, projectId);
    const project = await findProject(q, projectId);
    if (project) await releaseReserves(q, project, nowFor(project));
    // with settlement files to read, a live project's run comes back daily: a chargeback may come weeks after its sale
    if ((later || dir) && project?.mode === 'live')
      await schedule(q, { project_id: projectId, kind: 'settlement', ref_id: projectId, run_at: nextSettlementRun(cutoff) });
  });
  return settled;
}
