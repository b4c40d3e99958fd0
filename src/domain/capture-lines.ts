/**
 * Capturing a pre-authorization per order line (docs/money.md "Capturing per order line"): a
 * BNPL provider captures what the shop shipped. The request names the order's lines by their
 * `merchant_order_line_id`, each with a quantity (default: all of it not yet captured); the
 * amount is what those lines cost (`amount` is the unit price, as in the order's own sum).
 * Pure: what was captured before is given.
 */

/** One line of a capture request as the merchant sends it. */
export interface CaptureLineRequest {
  merchant_order_line_id?: unknown;
  quantity?: unknown;
  [member: string]: unknown;
}

/** A line as the capture records it: the order's line with the quantity captured. */
export type CapturedLine = Record<string, unknown> & { merchant_order_line_id: string; quantity: number; amount: number };

export type CaptureLinesResult = { amount: number; lines: CapturedLine[] } | { field: string; message: string };

const idOf = (line: Record<string, unknown>) => (typeof line.merchant_order_line_id === 'string' ? line.merchant_order_line_id : undefined);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;

/** Quantity per line id already captured (or being captured) by earlier captures' recorded lines. */
export function capturedQuantities(earlier: readonly (readonly Record<string, unknown>[] | undefined)[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const lines of earlier)
    for (const l of lines ?? []) {
      const id = idOf(l);
      if (id !== undefined) out.set(id, (out.get(id) ?? 0) + (Number(l.quantity) || 0));
    }
  return out;
}

/**
 * The lines a capture takes and their amount, or the first problem (field and message of a 400).
 * `orderLines`: the order's lines as stored; `captured`: what earlier captures took per line id.
 */
export function captureLines(
  orderLines: readonly Record<string, unknown>[] | undefined,
  requested: readonly CaptureLineRequest[],
  captured: ReadonlyMap<string, number>,
): CaptureLinesResult {
  if (!orderLines?.length) return { field: 'order_lines', message: 'the order has no order_lines to capture by' };
  const byId = new Map<string, Record<string, unknown>>();
  for (const [i, l] of orderLines.entries()) {
    const id = idOf(l);
    // a line the request can not name unambiguously: the order can only be captured whole
    if (id === undefined || byId.has(id))
      return {
        field: 'order_lines',
        message: `order line ${i} of the order has ${id === undefined ? 'no' : 'a repeated'} merchant_order_line_id: capture the whole remainder without order_lines`,
      };
    byId.set(id, l);
  }
  if (!requested.length) return { field: 'order_lines', message: 'order_lines must name at least one order line' };
  const seen = new Set<string>();
  const lines: CapturedLine[] = [];
  let amount = 0;
  for (const [i, r] of requested.entries()) {
    const at = `order_lines[${i}]`;
    const id = r.merchant_order_line_id;
    if (typeof id !== 'string' || id === '')
      return { field: `${at}.merchant_order_line_id`, message: 'merchant_order_line_id is required' };
    const line = byId.get(id);
    if (!line) return { field: `${at}.merchant_order_line_id`, message: `the order has no order line ${id}` };
    if (seen.has(id)) return { field: `${at}.merchant_order_line_id`, message: `order line ${id} is named twice` };
    seen.add(id);
    // a shop may send the whole line back (as refunds do): what it says of it must be what the order says
    for (const [k, v] of Object.entries(r))
      if (k !== 'merchant_order_line_id' && k !== 'quantity' && JSON.stringify(v) !== JSON.stringify(line[k]))
        return { field: `${at}.${k}`, message: `${k} differs from order line ${id} of the order` };
    const ordered = Number(line.quantity);
    const unit = Number(line.amount);
    if (!Number.isSafeInteger(ordered) || !Number.isSafeInteger(unit))
      return { field: `${at}.merchant_order_line_id`, message: `order line ${id} has no whole quantity and amount to capture by` };
    const left = ordered - (captured.get(id) ?? 0);
    if (left <= 0) return { field: `${at}.merchant_order_line_id`, message: `order line ${id} has been captured in full` };
    if (r.quantity !== undefined && !isCount(r.quantity))
      return { field: `${at}.quantity`, message: 'quantity must be a whole number from 1' };
    const quantity = (r.quantity as number | undefined) ?? left;
    if (quantity > left) return { field: `${at}.quantity`, message: `only ${left} of order line ${id} is left to capture` };
    amount += unit * quantity;
    lines.push({ ...line, merchant_order_line_id: id, quantity, amount: unit });
  }
  if (amount < 1) return { field: 'order_lines', message: `the order lines named add up to ${amount}: a capture takes at least 1` };
  return { amount, lines };
}
