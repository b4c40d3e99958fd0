// The rules of a capture per order line (src/domain/capture-lines.ts) and what a capture in part
// leaves capturable and voidable (src/domain/ledger.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureLines, capturedQuantities } from '../../src/domain/capture-lines.ts';
import { captureProblem, voidProblem } from '../../src/domain/ledger.ts';

const lines = [
  { merchant_order_line_id: 'mug', name: 'Mug', amount: 1000, quantity: 2 },
  { merchant_order_line_id: 'tea', name: 'Tea', amount: 995, quantity: 1 },
];

test('the lines named, their quantities defaulting to what is left, and their amount', () => {
  assert.deepEqual(captureLines(lines, [{ merchant_order_line_id: 'mug', quantity: 1 }], new Map()), {
    amount: 1000,
    lines: [{ ...lines[0], quantity: 1 }],
  });
  const rest = captureLines(lines, [{ merchant_order_line_id: 'mug' }, { ...lines[1] }], new Map([['mug', 1]]));
  assert.deepEqual(rest, { amount: 1995, lines: [{ ...lines[0], quantity: 1 }, lines[1]] });
});

test('what earlier captures took, per line', () => {
  const earlier = capturedQuantities([
    [{ merchant_order_line_id: 'mug', quantity: 1 }],
    undefined,
    [
      { merchant_order_line_id: 'mug', quantity: 1 },
      { merchant_order_line_id: 'tea', quantity: 1 },
    ],
  ]);
  assert.deepEqual(
    [...earlier],
    [
      ['mug', 2],
      ['tea', 1],
    ],
  );
});

test('each problem names its field', () => {
  const none = new Map<string, number>();
  const problem = (r: ReturnType<typeof captureLines>) => ('field' in r ? [r.field, r.message] : ['ok', String(r.amount)]);
  assert.deepEqual(problem(captureLines(undefined, [{ merchant_order_line_id: 'mug' }], none)), [
    'order_lines',
    'the order has no order_lines to capture by',
  ]);
  assert.match(
    problem(captureLines([{ name: 'x', amount: 1, quantity: 1 }], [{ merchant_order_line_id: 'x' }], none))[1],
    /order line 0 of the order has no merchant_order_line_id/,
  );
  assert.match(
    problem(captureLines([lines[0], lines[0]], [{ merchant_order_line_id: 'mug' }], none))[1],
    /order line 1 of the order has a repeated merchant_order_line_id/,
  );
  assert.deepEqual(problem(captureLines(lines, [], none))[0], 'order_lines');
  assert.deepEqual(problem(captureLines(lines, [{ merchant_order_line_id: 'cup' }], none))[0], 'order_lines[0].merchant_order_line_id');
  assert.deepEqual(problem(captureLines(lines, [{ merchant_order_line_id: 'mug', quantity: 3 }], none)), [
    'order_lines[0].quantity',
    'only 2 of order line mug is left to capture',
  ]);
  assert.deepEqual(problem(captureLines(lines, [{ merchant_order_line_id: 'tea' }], new Map([['tea', 1]]))), [
    'order_lines[0].merchant_order_line_id',
    'order line tea has been captured in full',
  ]);
  assert.deepEqual(problem(captureLines(lines, [{ merchant_order_line_id: 'tea', name: 'Coffee' }], none)), [
    'order_lines[0].name',
    'name differs from order line tea of the order',
  ]);
  assert.deepEqual(
    problem(captureLines([{ merchant_order_line_id: 'd', amount: -100, quantity: 1 }], [{ merchant_order_line_id: 'd' }], none))[0],
    'order_lines',
  );
});

test('a pre-authorization captured in part stays capturable and voidable for the rest', () => {
  const auth = {
    status: 'accepted',
    capture_mode: 'manual' as const,
    is_capturable: true,
    capture_before: null,
    authorized_amount: 2995,
    captured_amount: 1000,
    voided_amount: 0,
    refunded_amount: 0,
    charged_back_amount: 0,
  };
  const now = new Date('2030-01-01T00:00:00Z');
  assert.equal(captureProblem(auth, now), undefined);
  assert.equal(voidProblem(auth, now), undefined);
  assert.match(voidProblem(auth, now, 1996)!, /above the remaining authorized amount 1995/);
  const done = { ...auth, status: 'completed', is_capturable: false, captured_amount: 2995 };
  assert.match(captureProblem(done, now)!, /already been captured/);
  assert.match(voidProblem(done, now)!, /use a refund/);
});
