import { METHOD_TABLE, SANDBOX_METHODS, type SandboxMethod } from './payment-methods.ts';

/** The currencies a method is activated with: the table's (the methods of payment-methods.ts are off until a project turns them on). */
export const methodCurrencies = (m: SandboxMethod): string[] => [...METHOD_TABLE[m].currencies];

/** Project settings and their defaults. Stored as jsonb on the project; missing keys fall back here. */
export const CORE_METHODS = ['credit-card', 'wallet-a-pay', 'wallet-b-pay'] as const;
/** The card, the wallets, and the methods of payment-methods.ts (by the names the plugins send). */
export const PAYMENT_METHODS = [...CORE_METHODS, ...SANDBOX_METHODS] as const;
export type PaymentMethod = (typeof CORE_METHODS)[number] | SandboxMethod;
export const isPaymentMethod = (m: string): m is PaymentMethod => (PAYMENT_METHODS as readonly string[]).includes(m);

export interface FeeRule {
  /** basis points of the amount: 180 = 1.8 % */
  bps: number;
  /** fixed part in minor units of the transaction currency */
  fixed: number;
}

export interface ProjectSettings {
  payment_methods: Partial<Record<PaymentMethod, { currencies: string[] }>>;
  fees: Partial<Record<PaymentMethod, FeeRule>>;
  default_expiration_period: string;
  capture_window: string;
  /** wallet orders need a complete billing address (acquirer requirement) */
  wallet_billing_required: boolean;
  /** ISO 3166-1 alpha-2 country of the merchant, as a wallet's payment request names it (default NL) */
  merchant_country?: string;
  [k: string]: unknown;
}

const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF', 'DKK', 'NOK', 'SEK', 'PLN', 'CZK', 'AUD', 'CAD', 'JPY', 'KWD'];

export function defaultSettings(overrides: { defaultExpiration?: string; captureWindow?: string } = {}): ProjectSettings {
  return {
    payment_methods: {
      'credit-card': { currencies: [...CURRENCIES] },
      'wallet-a-pay': { currencies: [...CURRENCIES] },
      'wallet-b-pay': { currencies: [...CURRENCIES] },
    },
    fees: {
      'credit-card': { bps: 180, fixed: 25 },
      'wallet-a-pay': { bps: 180, fixed: 25 },
      'wallet-b-pay': { bps: 180, fixed: 25 },
    },
    default_expiration_period: overrides.defaultExpiration ?? 'PT30M',
    capture_window: overrides.captureWindow ?? 'P5D',
    wallet_billing_required: true,
  };
}

export function settingsOf(stored: Partial<ProjectSettings> | null | undefined): ProjectSettings {
  return { ...defaultSettings(), ...(stored ?? {}) } as ProjectSettings;
}

export function activeMethods(s: ProjectSettings): PaymentMethod[] {
  return PAYMENT_METHODS.filter((m) => s.payment_methods[m]);
}

export function methodAccepts(s: ProjectSettings, method: PaymentMethod, currency: string): boolean {
  return Boolean(s.payment_methods[method]?.currencies.includes(currency));
}

/** The wallet-a merchant identifier of a project: its id without hyphens. */
export const merchantIdentifierOf = (projectId: string) => projectId.replace(/-/g, '');

/** Other identifiers for Tender's methods, such as the wallets' own names: alias -> method. */
export type MethodAliases = Readonly<Record<string, PaymentMethod>>;

const ALIAS = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The operator's PAYMENT_METHOD_ALIASES, `alias=method` pairs separated by commas
 * (`apple-pay=wallet-a-pay,google-pay=wallet-b-pay`). Throws on anything else, naming the entry:
 * a mistyped setting must stop the start, not silently refuse orders.
 */
export function parseMethodAliases(setting: string | undefined): MethodAliases {
  const aliases: Record<string, PaymentMethod> = {};
  for (const entry of (setting ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [alias, method, ...rest] = entry.split('=').map((s) => s.trim());
    if (rest.length || !alias || !method) throw new Error(`PAYMENT_METHOD_ALIASES: "${entry}" is not alias=method`);
    if (!ALIAS.test(alias))
      throw new Error(`PAYMENT_METHOD_ALIASES: alias "${alias}" must be lower-case letters, digits, - or _ (at most 64)`);
    if (isPaymentMethod(alias)) throw new Error(`PAYMENT_METHOD_ALIASES: "${alias}" is already a payment method`);
    if (!isPaymentMethod(method))
      throw new Error(`PAYMENT_METHOD_ALIASES: "${method}" is not a payment method (${PAYMENT_METHODS.join(', ')})`);
    if (alias in aliases) throw new Error(`PAYMENT_METHOD_ALIASES: alias "${alias}" is given twice`);
    aliases[alias] = method;
  }
  return aliases;
}

/** The method an identifier stands for: itself, or the method it is an alias of. */
export const resolveMethod = (aliases: MethodAliases, m: string): string => (Object.hasOwn(aliases, m) ? aliases[m]! : m);
