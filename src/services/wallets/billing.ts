import { DomainError } from '../../domain/errors.ts';
import { normaliseSpace, STATES } from '../../domain/customer.ts';
import type { Checkout } from '../payments/checkout.ts';
import { BILLING_INPUT, billingNeeded, checkBilling, type Billing, type BillingField } from './pay.ts';
import type { TransactionId } from '../../domain/ids.ts';
import { WALLET_A, WALLET_B, type WalletMethod } from '../../domain/payment-methods.ts';

/**
 * The billing address a device wallet hands over with its payment, for a live order that lacks
 * the one the project requires (docs/hosted-pages.md "Wallet buttons"). The device button asks
 * its wallet for it (the config routes add the request's billing fields), the device pay routes
 * read it here into the order's customer fields and check it with the rules of the sandbox sheet
 * (checkBilling: the API's customer rules, with the tolerant readings of docs/design.md), and
 * walletTransaction stores it before the transaction starts.
 *   wallet-a-pay  payment.billingContact: givenName, familyName, addressLines[], locality,
 *                 postalCode, countryCode, administrativeArea
 *   wallet-b-pay  paymentMethodData.info.billingAddress (format FULL): name, address1..3,
 *                 locality, postalCode, countryCode, administrativeArea
 */

/** The member of the device pay route's body that carries the wallet's billing address. */
const CONTACT_MEMBER: Record<WalletMethod, string> = { [WALLET_A]: 'billingContact', [WALLET_B]: 'billingAddress' };

/** Each billing field by the wallet's own name for it, as a refusal names it. */
export const WALLET_FIELD: Record<WalletMethod, Record<BillingField, string>> = {
  [WALLET_A]: {
    first_name: 'givenName',
    last_name: 'familyName',
    address: 'addressLines',
    postal_code: 'postalCode',
    city: 'locality',
    country: 'countryCode',
    state: 'administrativeArea',
  },
  [WALLET_B]: {
    first_name: 'name',
    last_name: 'name',
    address: 'address1',
    postal_code: 'postalCode',
    city: 'locality',
    country: 'countryCode',
    state: 'administrativeArea',
  },
};

/** A wallet's billing address refused: `code` as the sandbox sheet's (billing_required, billing_format, state_required, state_unknown). */
class BillingRefused extends DomainError {
  constructor(
    readonly code: string,
    message: string,
    field: string,
    type: 'ValidationError' | 'MissingInformationToCreateTransaction' = 'ValidationError',
  ) {
    super(type, message, field);
    this.extra = { code };
  }
}

const REASON: Record<string, string> = {
  billing_required: 'is missing',
  billing_format: 'is not valid here',
  state_required: 'is missing: the country has states',
  state_unknown: 'is not a state of the country',
};

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const WRONG = Symbol('wrong type');
/** A text member: '' when absent, WRONG when it is not text. */
const text = (v: unknown): string | typeof WRONG => (v === undefined || v === null ? '' : typeof v === 'string' ? v : WRONG);
/** Address lines as one line: lines kept in order, empty ones left out. */
const lines = (vs: unknown[]): string | typeof WRONG => {
  const out: string[] = [];
  for (const v of vs) {
    const s = text(v);
    if (s === WRONG) return WRONG;
    if (normaliseSpace(s)) out.push(normaliseSpace(s));
  }
  return out.join(', ');
};

/** The wallet's contact as the order's billing fields, and the fields whose members were not text. */
export function billingOf(
  method: WalletMethod,
  contact: Record<string, unknown>,
): { values: Record<BillingField, string>; wrong: BillingField[] } {
  const raw: Record<BillingField, string | typeof WRONG> =
    method === WALLET_A
      ? {
          first_name: text(contact.givenName),
          last_name: text(contact.familyName),
          address: Array.isArray(contact.addressLines) ? lines(contact.addressLines) : text(contact.addressLines),
          postal_code: text(contact.postalCode),
          city: text(contact.locality),
          country: text(contact.countryCode),
          state: text(contact.administrativeArea),
        }
      : {
          ...splitName(text(contact.name)),
          address: lines([contact.address1, contact.address2, contact.address3]),
          postal_code: text(contact.postalCode),
          city: text(contact.locality),
          country: text(contact.countryCode),
          state: text(contact.administrativeArea),
        };
  const wrong = BILLING_INPUT.filter((f) => raw[f] === WRONG);
  const values = Object.fromEntries(BILLING_INPUT.map((f) => [f, raw[f] === WRONG ? '' : raw[f]])) as Record<BillingField, string>;
  // A wallet gives the region of every country (`Noord-Holland`); the order has a state only
  // where the country has states (docs/decisions.md).
  if (!STATES[values.country.trim().toUpperCase()]) values.state = '';
  return { values, wrong };
}

/**
 * wallet-b-pay gives one name: the first word is the first name, the rest the last name
 * (`Anne van der Berg`: Anne, van der Berg). A name of one word has no last name.
 */
function splitName(name: string | typeof WRONG): Pick<Record<BillingField, string | typeof WRONG>, 'first_name' | 'last_name'> {
  if (name === WRONG) return { first_name: WRONG, last_name: WRONG };
  const [first = '', ...rest] = normaliseSpace(name).split(' ');
  return { first_name: first, last_name: rest.join(' ') };
}

/**
 * The billing address a device payment hands over, to be stored on the order before its
 * transaction starts; undefined when the order needs none (it has one, the project does not
 * require it, or the transaction already started with it): the wallet's is then not used.
 * Refused (nothing stored, nothing paid) when the order needs one and the wallet's is absent,
 * incomplete or not valid by the order's rules.
 */
export function deviceBilling(
  c: Checkout,
  method: WalletMethod,
  transactionId: TransactionId | undefined,
  contact: unknown,
): Billing | undefined {
  if (transactionId || !billingNeeded(c).length) return undefined;
  const member = CONTACT_MEMBER[method];
  if (!isObject(contact)) {
    throw new BillingRefused(
      'billing_required',
      `${member} is required: this order needs the billing address, and the wallet did not hand it over`,
      member,
      'MissingInformationToCreateTransaction',
    );
  }
  const { values, wrong } = billingOf(method, contact);
  const check = checkBilling(BILLING_INPUT, values);
  const errors: Partial<Record<BillingField, string>> = { ...check.errors, ...Object.fromEntries(wrong.map((f) => [f, 'billing_format'])) };
  const first = BILLING_INPUT.find((f) => errors[f]);
  if (first || !check.billing) {
    const field = first ?? 'address';
    const code = errors[field] ?? 'billing_format';
    const name = WALLET_FIELD[method][field];
    throw new BillingRefused(code, `${member} refused: ${name} ${REASON[code] ?? 'is not valid here'}`, `${member}.${name}`);
  }
  return check.billing;
}
