import countries from 'i18n-iso-countries';

export const NAME_PATTERN = "^[\\w -,\\.À-ÖØ-öø-ÿ]+$";
export const ADDRESS_PATTERN = "^[\\w -,\\.\\-À-ÖØ-öø-ÿ]+$";
export const POSTAL_CODE_PATTERN = '^[A-Z0-9]+( [A-Z0-9]*)?$';

export const STATES: Record<string, readonly string[]> = {
  CA: 'AB BC MB NB NL NS NT NU ON PE QC SK YT'.split(' '),
  US: 'AA AE AK AL AP AR AZ CA CO CT DC DE FL GA HI IA ID IL IN KS KY LA MA MD ME MI MN MO MS MT NC ND NE NH NJ NM NV NY OH OK OR PA RI SC SD TN TX UT VA VT WA WI WV WY'.split(' '),
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

export const BILLING_FIELDS = ['first_name', 'last_name', 'address_type', 'address', 'postal_code', 'city', 'country'] as const;

/** The fields of a complete billing address that are missing (AFT and wallet orders). */
export function missingBilling(c: Customer | undefined | null): string[] {
  const missing: string[] = BILLING_FIELDS.filter((f) => !c || c[f] === undefined || c[f] === null || c[f] === '');
  if (c && c.country && STATES[c.country] && !c.state) missing.push('state');
  return missing;
}
