import {
  CORE_METHODS,
  METHOD_TABLE,
  PAYMENT_METHODS,
  SANDBOX_METHODS,
  isPaymentMethod,
  type PaymentMethod,
  type SandboxMethod,
} from './payment-methods.ts';

/** The currencies a method is activated with: the table's (a test project starts with each on; a live one turns them on). */
export const methodCurrencies = (m: SandboxMethod): string[] => [...METHOD_TABLE[m].currencies];

/** Project settings and their defaults. Stored as jsonb on the project; missing keys fall back here. */

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
  /** the rolling reserve: `bps` of each settled credit's net amount held back for `days` days (docs/payouts.md); none when absent */
  reserve?: { bps: number; days: number };
  /** ISO 3166-1 alpha-2 country of the merchant, as a wallet's payment request names it (default NL) */
  merchant_country?: string;
  /** IANA time zone the portal shows the project's times in (default DEFAULT_TIME_ZONE) */
  time_zone?: string;
  [k: string]: unknown;
}

/** The portal's times are the merchant's: most Tender merchants are Dutch (merchant_country NL). */
const DEFAULT_TIME_ZONE = 'Europe/Amsterdam';

const ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
/** An IANA zone name this runtime knows (`Europe/Amsterdam`, `UTC`); offsets and abbreviations are not zones. */
export const isTimeZone = (name: unknown): name is string => typeof name === 'string' && ZONES.has(name);
export const timeZones = (): string[] => [...ZONES].sort();

/** The project's time zone; a stored name this runtime no longer knows falls back to the default. */
export const timeZoneOf = (settings: Partial<ProjectSettings> | null | undefined): string =>
  isTimeZone(settings?.time_zone) ? settings.time_zone : DEFAULT_TIME_ZONE;

const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF', 'DKK', 'NOK', 'SEK', 'PLN', 'CZK', 'AUD', 'CAD', 'JPY', 'KWD'];

/**
 * A new project's settings. A test project (a sandbox) starts with every method on, each with
 * its currencies, so what a plugin offers first works at once; a live project starts with the
 * card and the wallets and turns the others on explicitly (`tender project methods` narrows or
 * widens either).
 */
export function defaultSettings(
  overrides: { defaultExpiration?: string; captureWindow?: string; mode?: 'test' | 'live' } = {},
): ProjectSettings {
  const sandbox = overrides.mode === 'test' ? SANDBOX_METHODS.map((m) => [m, { currencies: methodCurrencies(m) }] as const) : [];
  return {
    payment_methods: {
      ...Object.fromEntries(CORE_METHODS.map((m) => [m, { currencies: [...CURRENCIES] }])),
      ...Object.fromEntries(sandbox),
    },
    fees: Object.fromEntries(CORE_METHODS.map((m) => [m, { bps: 180, fixed: 25 }])),
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
