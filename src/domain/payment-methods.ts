/**
 * Every payment method, by the name the webshop plugins send: the one home of those names
 * (docs/payment-methods.md). The card and the two wallets are paid with card data (a vault token,
 * a device's payment token) through the acquirer; the others are the table below, pure data and
 * the rules read from it (their sandbox flows are in services/payments/methods/). Code elsewhere
 * names a method through these constants, never by its string: a test keeps it so.
 */

export const CARD = 'credit-card';
export const WALLET_A = 'wallet-a-pay';
export const WALLET_B = 'wallet-b-pay';
export const WALLETS = [WALLET_A, WALLET_B] as const;
export type WalletMethod = (typeof WALLETS)[number];
/** The card and the wallets: what every project can take, in this order. */
export const CORE_METHODS = [CARD, ...WALLETS] as const;
type CoreMethod = (typeof CORE_METHODS)[number];

export const isWallet = (m: string | null | undefined): m is WalletMethod => (WALLETS as readonly unknown[]).includes(m);
/** Paid with a card's data (the card itself or a wallet's token): a setup token, 3-D Secure, the acquirer. */
export const paysWithCard = (m: string | null | undefined) => m === CARD || isWallet(m);

/** The core methods' names on the hosted pages and in the portal. */
export const CORE_NAMES: Record<CoreMethod, { en: string; nl: string }> = {
  [CARD]: { en: 'Card', nl: 'Kaart' },
  [WALLET_A]: { en: 'Wallet A Pay', nl: 'Wallet A Pay' },
  [WALLET_B]: { en: 'Wallet B Pay', nl: 'Wallet B Pay' },
};

/** How the customer pays: what the sandbox page of the method shows. */
export type MethodKind = 'redirect' | 'transfer' | 'voucher' | 'bnpl' | 'card' | 'hosted';

export interface MethodInfo {
  kind: MethodKind;
  /** ISO 4217 codes the method really takes */
  currencies: readonly string[];
  /** ISO 3166-1 countries of the customer it serves; undefined: any */
  countries?: readonly string[];
  /** smallest and largest amount, minor units (undefined: no limit of its own) */
  min?: number;
  max?: number;
  /** money can be given back (refunds) */
  refundable: boolean;
  /** payment_method_details.issuer_id: 'optional' (iDEAL), otherwise not taken */
  issuer?: 'optional';
  name: { en: string; nl: string };
  /** the mark on the hosted page: short text on the brand's colour */
  mark: { text: string; bg: string; fg: string };
}

const EEA_CARD = ['EUR', 'USD', 'GBP', 'CHF', 'DKK', 'NOK', 'SEK', 'PLN', 'CZK', 'AUD', 'CAD', 'JPY'] as const;
const KLARNA = ['EUR', 'SEK', 'NOK', 'DKK', 'GBP', 'CHF'] as const;
const KLARNA_COUNTRIES = ['AT', 'BE', 'CH', 'DE', 'DK', 'FI', 'GB', 'NL', 'NO', 'SE'] as const;

export const METHOD_TABLE = {
  ideal: {
    kind: 'redirect',
    currencies: ['EUR'],
    countries: ['NL'],
    max: 5_000_000,
    refundable: true,
    issuer: 'optional',
    name: { en: 'iDEAL', nl: 'iDEAL' },
    mark: { text: 'iD', bg: '#cc0066', fg: '#ffffff' },
  },
  bancontact: {
    kind: 'redirect',
    currencies: ['EUR'],
    countries: ['BE'],
    refundable: true,
    name: { en: 'Bancontact', nl: 'Bancontact' },
    mark: { text: 'BC', bg: '#005498', fg: '#ffffff' },
  },
  paypal: {
    kind: 'redirect',
    currencies: EEA_CARD,
    refundable: true,
    name: { en: 'PayPal', nl: 'PayPal' },
    mark: { text: 'PP', bg: '#003087', fg: '#ffffff' },
  },
  sofort: {
    kind: 'redirect',
    currencies: ['EUR', 'CHF'],
    countries: ['AT', 'BE', 'CH', 'DE', 'ES', 'IT', 'NL'],
    refundable: true,
    name: { en: 'Sofort', nl: 'Sofort' },
    mark: { text: 'SO', bg: '#393a41', fg: '#ffffff' },
  },
  giropay: {
    kind: 'redirect',
    currencies: ['EUR'],
    countries: ['DE'],
    refundable: true,
    name: { en: 'giropay', nl: 'giropay' },
    mark: { text: 'GP', bg: '#000268', fg: '#ffffff' },
  },
  payconiq: {
    kind: 'redirect',
    currencies: ['EUR'],
    countries: ['BE', 'LU', 'NL'],
    refundable: true,
    name: { en: 'Payconiq', nl: 'Payconiq' },
    mark: { text: 'PQ', bg: '#a8004e', fg: '#ffffff' },
  },
  swish: {
    kind: 'redirect',
    currencies: ['SEK'],
    countries: ['SE'],
    refundable: true,
    name: { en: 'Swish', nl: 'Swish' },
    mark: { text: 'SW', bg: '#1f5c8b', fg: '#ffffff' },
  },
  mobilepay: {
    kind: 'redirect',
    currencies: ['DKK', 'EUR', 'NOK'],
    countries: ['DK', 'FI', 'NO'],
    refundable: true,
    name: { en: 'MobilePay', nl: 'MobilePay' },
    mark: { text: 'MP', bg: '#3e5abf', fg: '#ffffff' },
  },
  'klarna-pay-now': {
    kind: 'redirect',
    currencies: KLARNA,
    countries: KLARNA_COUNTRIES,
    refundable: true,
    name: { en: 'Klarna Pay Now', nl: 'Klarna Direct betalen' },
    mark: { text: 'K.', bg: '#ffb3c7', fg: '#17120f' },
  },
  'klarna-direct-debit': {
    kind: 'redirect',
    currencies: ['EUR'],
    countries: ['AT', 'DE', 'NL'],
    refundable: true,
    name: { en: 'Klarna Direct Debit', nl: 'Klarna Automatische incasso' },
    mark: { text: 'K.', bg: '#ffb3c7', fg: '#17120f' },
  },
  'bank-transfer': {
    kind: 'transfer',
    currencies: ['EUR'],
    refundable: true,
    name: { en: 'Bank transfer', nl: 'Overboeking' },
    mark: { text: 'SEPA', bg: '#2d4a8a', fg: '#ffffff' },
  },
  viacash: {
    kind: 'voucher',
    currencies: ['EUR'],
    countries: ['AT', 'DE'],
    max: 99_999,
    refundable: false,
    name: { en: 'viacash (pay at a shop)', nl: 'viacash (betalen in een winkel)' },
    mark: { text: 'vc', bg: '#00843d', fg: '#ffffff' },
  },
  'klarna-pay-later': {
    kind: 'bnpl',
    currencies: KLARNA,
    countries: KLARNA_COUNTRIES,
    min: 100,
    max: 1_000_000,
    refundable: true,
    name: { en: 'Klarna Pay Later', nl: 'Klarna Achteraf betalen' },
    mark: { text: 'K.', bg: '#ffb3c7', fg: '#17120f' },
  },
  afterpay: {
    kind: 'bnpl',
    currencies: ['EUR'],
    countries: ['BE', 'NL'],
    min: 500,
    max: 500_000,
    refundable: true,
    name: { en: 'Riverty (AfterPay)', nl: 'Riverty (AfterPay)' },
    mark: { text: 'AP', bg: '#1d8a5a', fg: '#ffffff' },
  },
  amex: {
    kind: 'card',
    currencies: EEA_CARD,
    refundable: true,
    name: { en: 'American Express', nl: 'American Express' },
    mark: { text: 'AMEX', bg: '#006fcf', fg: '#ffffff' },
  },
  'pay-now': {
    kind: 'hosted',
    currencies: [...EEA_CARD, 'KWD'],
    refundable: true,
    name: { en: 'Pay now (choose on the next page)', nl: 'Nu betalen (kies op de volgende pagina)' },
    mark: { text: '…', bg: '#1849a9', fg: '#ffffff' },
  },
} as const satisfies Record<string, MethodInfo>;

export type SandboxMethod = keyof typeof METHOD_TABLE;
/** The method whose page lets the customer choose the method (the table's one `hosted` kind). */
export const PAY_NOW = 'pay-now' satisfies SandboxMethod;
export const SANDBOX_METHODS = Object.keys(METHOD_TABLE) as SandboxMethod[];
export const isSandboxMethod = (m: string | null | undefined): m is SandboxMethod => !!m && Object.hasOwn(METHOD_TABLE, m);
export const methodInfo = (m: SandboxMethod): MethodInfo => METHOD_TABLE[m];

/** The card, the wallets, and the table's methods. */
export const PAYMENT_METHODS = [...CORE_METHODS, ...SANDBOX_METHODS] as const;
export type PaymentMethod = CoreMethod | SandboxMethod;
export const isPaymentMethod = (m: string): m is PaymentMethod => (PAYMENT_METHODS as readonly string[]).includes(m);
/** A metric's method label: a method of the fixed list, `none` (no transaction yet) or `other`; never what a client typed. */
export const paymentMethodLabel = (m: string | null | undefined): string => (!m ? 'none' : isPaymentMethod(m) ? m : 'other');
/** The sandbox banks of iDEAL (GET /v1/ideal/issuers/), as the older SDKs' getIdealIssuers() reads them. */
export const IDEAL_ISSUERS = [
  { id: 'ABNANL2A', name: 'ABN AMRO', list_type: 'Nederland' },
  { id: 'ASNBNL21', name: 'ASN Bank', list_type: 'Nederland' },
  { id: 'BUNQNL2A', name: 'bunq', list_type: 'Nederland' },
  { id: 'INGBNL2A', name: 'ING', list_type: 'Nederland' },
  { id: 'KNABNL2H', name: 'Knab', list_type: 'Nederland' },
  { id: 'RABONL2U', name: 'Rabobank', list_type: 'Nederland' },
  { id: 'RBRBNL21', name: 'RegioBank', list_type: 'Nederland' },
  { id: 'REVOLT21', name: 'Revolut', list_type: 'Nederland' },
  { id: 'SNSBNL2A', name: 'SNS', list_type: 'Nederland' },
  { id: 'TRIONL2U', name: 'Triodos Bank', list_type: 'Nederland' },
  { id: 'FVLBNL22', name: 'Van Lanschot Kempen', list_type: 'Nederland' },
] as const;

const ISSUER_ID = /^[A-Za-z0-9]{1,11}$/;

/** A rule of a method broken by an order: the field to name and the message (undefined: none broken). */
export interface MethodProblem {
  field: string;
  message: string;
}

/** What an order says of itself that a method's rules read. */
export interface MethodOrder {
  currency: string;
  amount: number;
  customer?: Record<string, unknown>;
  order_lines?: unknown[];
  details?: Record<string, unknown>;
}

/** BNPL needs these of the customer: the billing address the provider checks. */
// no city: the WooCommerce plugin writes it into `address` and sends none of its own
const BNPL_CUSTOMER = ['first_name', 'last_name', 'email_address', 'address', 'postal_code', 'country'] as const;

/**
 * The rules of a method the project's settings do not express: its real currencies, countries
 * and amounts, its details (issuer), and what BNPL needs. `field` is where the method was named.
 */
export function methodProblem(method: SandboxMethod, o: MethodOrder, field: string): MethodProblem | undefined {
  const info = methodInfo(method);
  if (!info.currencies.includes(o.currency)) return { field, message: `payment method ${method} does not take ${o.currency}` };
  if (info.min !== undefined && o.amount < info.min)
    return { field: 'amount', message: `payment method ${method} takes amounts from ${info.min} (minor units)` };
  if (info.max !== undefined && o.amount > info.max)
    return { field: 'amount', message: `payment method ${method} takes amounts up to ${info.max} (minor units)` };
  const country = typeof o.customer?.country === 'string' ? o.customer.country : undefined;
  // Only BNPL providers refuse a billing country they do not serve; a redirect method is the
  // bank's (a German shopper may well pay with a Dutch bank's iDEAL), so there it is information.
  if (info.kind === 'bnpl' && country && info.countries && !info.countries.includes(country))
    return { field: 'customer.country', message: `payment method ${method} is not available in ${country}` };
  const detailsField = field.replace(/payment_method$/, 'payment_method_details');
  const issuer = o.details?.issuer_id;
  if (issuer !== undefined && issuer !== '' && issuer !== null) {
    if (info.issuer !== 'optional') return { field: `${detailsField}.issuer_id`, message: `payment method ${method} takes no issuer_id` };
    // a bank's BIC (GET /v1/ideal/issuers/) or an older numeric issuer id (the plugin SDK's tests send "15")
    if (typeof issuer !== 'string' || !ISSUER_ID.test(issuer))
      return {
        field: `${detailsField}.issuer_id`,
        message: `issuer_id ${String(issuer)} is not an iDEAL bank identifier: letters and digits, at most 11 (GET /v1/ideal/issuers/)`,
      };
  }
  if (info.kind === 'bnpl') {
    const missing: string[] = [];
    if (!Array.isArray(o.order_lines) || !o.order_lines.length) missing.push('order_lines');
    for (const f of BNPL_CUSTOMER) if (!o.customer?.[f]) missing.push(`customer.${f}`);
    if (missing.length) return { field: missing[0]!, message: `payment method ${method} needs ${missing.join(', ')}` };
    const sum = (o.order_lines as { amount?: unknown; quantity?: unknown }[]).reduce(
      (n, l) => n + (Number(l.amount) || 0) * (Number(l.quantity) || 0),
      0,
    );
    if (sum !== o.amount)
      return {
        field: 'order_lines',
        message: `payment method ${method} needs order_lines adding up to the amount ${o.amount} (they add up to ${sum})`,
      };
  }
  return undefined;
}

/** The mark of a method as an image the page's CSP allows (img-src data:): its text on its colour. */
export function markDataUri(method: SandboxMethod): string {
  const { text, bg, fg } = methodInfo(method).mark;
  const size = text.length > 2 ? 11 : 15;
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="48" height="32" viewBox="0 0 48 32">` +
    `<rect width="48" height="32" rx="6" fill="${bg}"/>` +
    `<text x="24" y="21" text-anchor="middle" font-family="Arial,sans-serif" font-weight="700" font-size="${size}" fill="${fg}">${text.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</text></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
