import countries from 'i18n-iso-countries';

/**
 * The spec's patterns, read for real customers (docs/design.md "Readings of the spec for real
 * clients"): `\w` is any Unicode letter, mark or digit (the spec's server matches `Wałęsa`, `Nguyễn`),
 * names also take hyphens, addresses also take `/`. ` -,` stays the range it is (space to comma:
 * apostrophes, `&`, `#`, parentheses). Ajv compiles patterns with the `u` flag, which `\p{…}` needs.
 */
const WORD = '\\p{L}\\p{M}\\p{N}_';
export const NAME_PATTERN = `^[${WORD} -,.\\-]+$`;
export const ADDRESS_PATTERN = `^[${WORD} -,.\\-/]+$`;
export const POSTAL_CODE_PATTERN = '^[A-Z0-9]+( [A-Z0-9]*)?$';

/** `customer` is what the webshop plugins send; the plugin SDK's Address entity allows all three. */
export const ADDRESS_TYPES = ['customer', 'billing', 'delivery'] as const;

const TEXT_FIELDS = ['first_name', 'last_name', 'address', 'street', 'city'];

/** Line breaks and runs of white space become one space; the ends are trimmed. */
export const normaliseSpace = (s: string) => s.replace(/\s+/gu, ' ').trim();

/** One address-like object as the patterns expect it: white space normalised, the postcode upper-cased (its spaces stay the pattern's business). */
function normaliseAddress(a: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const f of TEXT_FIELDS) if (typeof out[f] === 'string') out[f] = normaliseSpace(out[f] as string);
  if (typeof out.postal_code === 'string') out.postal_code = out.postal_code.toUpperCase();
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

/**
 * A customer as sent by real clients, made ready for validation: text normalised (above) on the
 * customer and its additional addresses, and `""` phone numbers (a guest without a phone: WooCommerce
 * sends `[""]`) dropped; no phone number left means no `phone_numbers`. Anything not an object is
 * returned as it is, for the schema to refuse.
 */
export function normaliseCustomer(c: unknown): unknown {
  if (!isObject(c)) return c;
  const out = normaliseAddress(c);
  if (Array.isArray(out.phone_numbers)) {
    const phones = out.phone_numbers.filter((p) => !(typeof p === 'string' && p.trim() === ''));
    if (phones.length) out.phone_numbers = phones;
    else delete out.phone_numbers;
  }
  if (Array.isArray(out.additional_addresses))
    out.additional_addresses = out.additional_addresses.map((a) => (isObject(a) ? normaliseAddress(a) : a));
  return out;
}

export const STATES: Record<string, readonly string[]> = {
  CA: 'AB BC MB NB NL NS NT NU ON PE QC SK YT'.split(' '),
  US: 'AA AE AK AL AP AR AZ CA CO CT DC DE FL GA HI IA ID IL IN KS KY LA MA MD ME MI MN MO MS MT NC ND NE NH NJ NM NV NY OH OK OR PA RI SC SD TN TX UT VA VT WA WI WV WY'.split(
    ' ',
  ),
};

export const isCountry = (code: string) => /^[A-Z]{2}$/.test(code) && countries.isValid(code);

export interface Customer {
  first_name?: string;
  last_name?: string;
  address_type?: string;
  address?: string;
  postal_code?: string;
  city?: string;
  state?: string;
  country?: string;
  [k: string]: unknown;
}

/** Rules the schema cannot express. Returns the offending field and why, or undefined. */
export function customerProblem(c: Customer): { field: string; message: string } | undefined {
  if (c.country !== undefined && c.country !== null && !isCountry(c.country)) {
    return { field: 'customer.country', message: `country ${c.country} is not an ISO 3166-1 alpha-2 code` };
  }
  const states = c.country ? STATES[c.country] : undefined;
  if (states) {
    if (!c.state) return { field: 'customer.state', message: `state is required when country is ${c.country}` };
    if (!states.includes(c.state)) return { field: 'customer.state', message: `state ${c.state} is not a state of ${c.country}` };
  }
  return undefined;
}

const BILLING_FIELDS = ['first_name', 'last_name', 'address_type', 'address', 'postal_code', 'city', 'country'] as const;

/** The fields of a complete billing address that are missing (AFT and wallet orders). */
export function missingBilling(c: Customer | undefined | null): string[] {
  const missing: string[] = BILLING_FIELDS.filter((f) => !c || c[f] === undefined || c[f] === null || c[f] === '');
  if (c && c.country && STATES[c.country] && !c.state) missing.push('state');
  return missing;
}
