import { debitLegs, figures } from '../../../domain/ledger.ts';
import { debitRule } from '../operations.ts';
import type { FollowUpKind } from './follow-up-kind.ts';

/* A refund: captured money paid back, in part or in full, as an order of its own (`completed`, flagged is-refund). */
export const REFUND: FollowUpKind = {
  op: 'refund',
  errorType: 'RefundError',
  flag: 'has-refunds',
  spec: (rows, a, base) => ({
    ...base,
    status: base.status === 'final' ? 'completed' : base.status,
    kind: 'refund',
    direction: 'debit',
    description: a.request.description as string | undefined,
    flags: ['is-refund'],
    figures: figures('debit', a.amount, debitRule(rows.project, 'refund')),
    body: a.request.order_lines ? { order_lines: a.request.order_lines } : undefined,
  }),
  original: (txn, a, now) => ({ patch: { refunded_amount: txn.refunded_amount + a.amount, modified: now } }),
  legs: (a, spec) => debitLegs(a.amount, spec.figures.fee, 'refund'),
  settles: true,
};
