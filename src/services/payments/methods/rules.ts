import { invalid } from '../../../domain/errors.ts';
import { isSandboxMethod, methodInfo, methodProblem, type SandboxMethod, CARD, PAYMENT_METHODS } from '../../../domain/payment-methods.ts';
import { methodCurrencies, settingsOf, type ProjectSettings } from '../../../domain/project.ts';
import type { TransactionInput } from '../../../domain/schemas/order.ts';
import type { TransactionRow } from '../../../domain/entities.ts';
import type { OrderId } from '../../../domain/ids.ts';

/**
 * The rules of the methods of domain/payment-methods.ts on an order being created or a
 * transaction being started, beyond the project's settings (which services/payments/orders.ts
 * checks first): real currencies, countries, amounts, the iDEAL issuer, what BNPL needs.
 */
export function checkMethodRules(
  t: Pick<TransactionInput, 'payment_method' | 'payment_method_details' | 'capture_mode'>,
  order: { currency: string; amount: number; customer?: Record<string, unknown>; order_lines?: unknown[] },
  field: string,
) {
  if (!isSandboxMethod(t.payment_method)) {
    // the card and the wallets take no issuer (iDEAL's detail), as before it was known (OXID sends "" for none)
    const issuer = t.payment_method_details?.issuer_id;
    const f = `${field.replace(/payment_method$/, 'payment_method_details')}.issuer_id`;
    if (issuer !== undefined && issuer !== '') throw invalid(f, `${f} is not a known field`);
    return;
  }
  const p = methodProblem(t.payment_method, { ...order, details: t.payment_method_details }, field);
  if (p) throw invalid(p.field, p.message);
  const kind = methodInfo(t.payment_method).kind;
  // BNPL is always authorized first and captured later; the others are paid in one step
  if (t.capture_mode && kind !== 'bnpl')
    throw invalid(field.replace(/payment_method$/, 'capture_mode'), `capture_mode is not supported for ${t.payment_method}`);
}

/** The columns a new transaction of such a method starts with (services/payments/orders.ts newTransactionRow). */
export function methodStart(method: string, orderId: OrderId, txnId: string, details: Record<string, unknown> | undefined) {
  if (!isSandboxMethod(method)) return undefined;
  const info = methodInfo(method);
  const out: {
    status?: TransactionRow['status'];
    capture_mode?: 'manual';
    details: Record<string, unknown>;
    expiration?: string;
    /** the method the transaction is stored as: amex is a card payment (the card flow) limited to that brand */
    storeAs?: string;
  } = {
    details: {},
  };
  if (info.kind === 'card') {
    out.storeAs = CARD;
    out.details.card_brand_limit = 'amex';
    return out;
  }
  const issuer = details?.issuer_id;
  if (typeof issuer === 'string' && issuer) out.details.issuer_id = issuer;
  if (details?.verified_terms_of_service === true) out.details.verified_terms_of_service = true;
  const reference = paymentReference(txnId);
  if (info.kind === 'bnpl') out.capture_mode = 'manual';
  if (info.kind === 'transfer') {
    // what the customer needs to transfer the money; it stays pending until the money arrives
    out.status = 'pending';
    out.expiration = 'P12D';
    Object.assign(out.details, {
      reference,
      creditor_iban: 'NL13TEST0123456789',
      creditor_bic: 'TESTNL2A',
      creditor_account_holder_name: 'Tender Sandbox Payments',
      creditor_account_holder_city: 'Amsterdam',
      creditor_account_holder_country: 'NL',
    });
  }
  if (info.kind === 'voucher') {
    out.status = 'pending';
    out.expiration = 'P7D';
    // the payment slip: a barcode number the shop's till scans
    out.details.slip_reference = slipReference(orderId, txnId);
    out.details.reference = reference;
  }
  return out;
}

/** A transfer reference a customer can type: 16 characters from the transaction id, grouped by 4. */
const paymentReference = (txnId: string) =>
  txnId
    .replace(/-/g, '')
    .slice(0, 16)
    .toUpperCase()
    .replace(/(.{4})(?!$)/g, '$1 ');

/** A 20-digit slip number (EAN-like, digits only) made from the transaction. */
function slipReference(orderId: OrderId, txnId: string) {
  const hex = (orderId + txnId).replace(/-/g, '');
  let digits = '';
  for (let i = 0; digits.length < 20; i += 2) digits += String(parseInt(hex.slice(i, i + 2), 16) % 10);
  return digits;
}

/**
 * The project's active methods set to `names` (each with the currencies it really takes, the
 * card and wallets with the ones they had or the default). An unknown name is refused by name.
 */
export function withActiveMethods(stored: Partial<ProjectSettings>, names: string[]): Partial<ProjectSettings> {
  const unknown = names.find((n) => !(PAYMENT_METHODS as readonly string[]).includes(n));
  if (unknown) throw invalid('payment_methods', `payment method ${unknown} is not known (${PAYMENT_METHODS.join(', ')})`);
  if (!names.length) throw invalid('payment_methods', 'at least one payment method must stay active');
  const current = settingsOf(stored);
  const all = settingsOf({}).payment_methods;
  const payment_methods: ProjectSettings['payment_methods'] = {};
  for (const m of PAYMENT_METHODS) {
    if (!names.includes(m)) continue;
    payment_methods[m] = current.payment_methods[m] ?? all[m] ?? { currencies: methodCurrencies(m as SandboxMethod) };
  }
  return { ...stored, payment_methods };
}

/** The hosted card form's check of a transaction limited to one brand (amex): the error code, or undefined. */
export function brandRefused(txn: Pick<TransactionRow, 'details'> | undefined, brand: string | undefined): string | undefined {
  const limit = txn?.details?.card_brand_limit;
  return typeof limit === 'string' && brand !== limit ? 'pan_amex_only' : undefined;
}

/** Whether money of a transaction of this method can be given back. */
export function refusesRefund(method: string | null): string | undefined {
  if (isSandboxMethod(method) && !methodInfo(method).refundable) return `payment method ${method} can not be refunded`;
  return undefined;
}
