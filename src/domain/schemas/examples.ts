/**
 * Realistic examples of the API's bodies, shown in the OpenAPI document (/openapi.json, /docs).
 * Each request example is valid for a new test project: test/e2e/api-reference.test.ts posts every
 * one. Ids and times are of one made-up story: an order of two mugs, paid by card.
 */
import { CARD, WALLET_A, WALLET_B } from '../payment-methods.ts';

const MERCHANT = '6f1c2a1e-3b7d-4c55-9a3e-2b1f0c9d8e71';
const PROJECT = '0dacfae3-d432-4561-bd42-2aeb2d14c388';
const ORDER = '01a210f4-1cdf-7033-b931-b00aae79b723';
const TRANSACTION = '01a210f4-1cdf-740c-915f-f6e0416ae9e8';
const BASE = 'https://pay.example.com';
const AT = '2026-11-25T10:15:00+00:00';

export const customerExample = {
  merchant_customer_id: 'c-42',
  email_address: 'ada@example.com',
  first_name: 'Ada',
  last_name: 'Lovelace',
  address_type: 'billing',
  address: 'Damrak 1',
  postal_code: '1012 LG',
  city: 'Amsterdam',
  country: 'NL',
  locale: 'nl-NL',
};

export const orderInputExample = {
  merchant_order_id: 'shop-1001',
  description: 'Two mugs',
  currency: 'EUR',
  amount: 1995,
  return_url: 'https://shop.example/return',
  webhook_url: 'https://shop.example/webhooks',
  customer: customerExample,
  transactions: [{ payment_method: CARD }],
};

export const transactionInputExample = { payment_method: CARD, expiration_period: 'PT30M' };

export const orderUpdateExample = { description: 'Two mugs, gift wrapped', merchant_order_id: 'shop-1001-b' };

const event = (name: string) => ({
  event: name,
  id: '01a210f4-1ce0-7c8a-8ed4-a26955cbb1d3',
  occurred: AT,
  noticed: AT,
  source: 'set_status',
});

export const transactionExample = {
  id: TRANSACTION,
  order_id: ORDER,
  project_id: PROJECT,
  merchant_id: MERCHANT,
  created: AT,
  modified: AT,
  status: 'new',
  currency: 'EUR',
  amount: 1995,
  credit_debit: 'credit',
  expiration_period: 'PT30M',
  payment_method: CARD,
  payment_method_details: { setup_token: '417cb48b-4f07-4617-aca6-087c0edd9792' },
  payment_url: `${BASE}/pay/${ORDER}/transactions/${TRANSACTION}/`,
  is_capturable: false,
  events: [event('new')],
  flags: ['is-test'],
};

export const orderExample = {
  id: ORDER,
  project_id: PROJECT,
  merchant_id: MERCHANT,
  merchant_order_id: 'shop-1001',
  description: 'Two mugs',
  currency: 'EUR',
  amount: 1995,
  status: 'new',
  flags: ['is-test'],
  created: AT,
  modified: AT,
  return_url: 'https://shop.example/return',
  webhook_url: 'https://shop.example/webhooks',
  customer: customerExample,
  transactions: [transactionExample],
  refunded_amount: 0,
};

/** The same order once paid and captured: what the money operations answer. */
export const paidOrderExample = {
  ...orderExample,
  status: 'completed',
  completed: AT,
  transactions: [
    {
      ...transactionExample,
      status: 'completed',
      payment_method_brand: 'visa',
      payment_method_details: {
        truncated_pan: '411111******1111',
        card_expiry: '122034',
        cardholder_name: 'Ada Lovelace',
        liability_shift: true,
      },
      events: [event('new'), event('pending'), event('accepted'), event('completed')],
    },
  ],
};

export const linkInputExample = {
  merchant_order_id: 'invoice-2024-117',
  amount: 4950,
  currency: 'EUR',
  description: 'Invoice 2024-117',
  payment_methods: [CARD, WALLET_B],
  expiration_period: 'P14D',
  return_url: 'https://shop.example/thanks',
};

export const linkExample = {
  id: '01a210f4-2193-781c-8131-94fc45654f86',
  project_id: PROJECT,
  merchant_id: MERCHANT,
  ...linkInputExample,
  payment_url: `${BASE}/pay/links/01a210f4-2193-781c-8131-94fc45654f86/`,
  status: 'new',
  reason: 'the customer has not tried to pay yet',
  orders: {},
  flags: ['is-test'],
  created: AT,
  modified: AT,
};

export const webhookLogExample = {
  order_id: ORDER,
  deliveries: [
    {
      id: '01a210f5-0a11-7c3e-9d2f-5b6c7d8e9f00',
      event: 'status_changed',
      order_status: 'completed',
      url: 'https://shop.example/webhooks',
      target: 'order',
      resend: false,
      status: 'succeeded',
      created: AT,
      completed: AT,
      attempts: [{ attempt: 1, time: AT, url: 'https://shop.example/webhooks', response_status: 200, duration_ms: 84 }],
    },
  ],
};

export const projectExample = {
  id: PROJECT,
  merchant_id: MERCHANT,
  name: 'Mug shop',
  mode: 'test',
  status: 'active-testing',
  created: AT,
  payment_methods: [CARD, WALLET_A, WALLET_B],
};

export const currenciesExample = {
  payment_methods: { [CARD]: { currencies: ['EUR', 'USD', 'GBP'] }, [WALLET_B]: { currencies: ['EUR', 'USD'] } },
};

export const searchInputExample = { query: 'status:completed AND amount:[1000 TO *]', size: 10, sort: 'created desc' };
export const searchResultExample = {
  total: 1,
  total_relation: 'eq',
  orders: [paidOrderExample],
  search_after: '1764065700000|01a210f4-1cdf-7033-b931-b00aae79b723',
};

export const cardInputExample = {
  name: 'Ada Lovelace',
  pan: '4111111111111111',
  expiry: '122034',
  setup_token: '417cb48b-4f07-4617-aca6-087c0edd9792',
};
export const vaultCardExample = {
  vault_token: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  truncated_pan: '411111******1111',
  brand: 'visa',
  brands: ['visa'],
};
export const authenticateExample = { vault_token: '7c9e6679-7425-40de-944b-e07fc1f90ae7', cvc: '123' };
export const redirectExample = { redirect_url: `${BASE}/pay/3ds/${TRANSACTION}/` };

export const partialVoidExample = { amount: 500, description: 'One mug out of stock' };
export const refundExample = { amount: 995, description: 'One mug returned' };
export const clockExample = { advance: 'PT31M' };
export const clockAnswerExample = { clock: '2026-11-25T10:46:00+00:00', offset_ms: 1_860_000, ahead: 'PT31M', jobs_run: 1 };

export const walletPayAnswerExample = {
  is_successful: true,
  redirect_url: 'https://shop.example/return?order_id=' + ORDER + '&project_id=' + PROJECT,
  reason: '',
};

// Example keys, made for this documentation only: never configure them on a live project.
export const processingKeyExample = {
  private_key:
    '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgKiMjKPIGfW8s3SXU\nyvAPP8iVZvLFejgFeG1ns6ITFYmhRANCAATgwew8ScH6OsYSvAVusnJ2Tk9XxXyS\ny4oZHyQeFEvf0K9oyL4uOaYbV0Vr6+MsX6sIGmzMU0nCe0dRdavJHDAv\n-----END PRIVATE KEY-----\n',
};
export const identityExample = {
  certificate:
    '-----BEGIN CERTIFICATE-----\nMIIB5DCCAYmgAwIBAgIUDSk0zFt8k4cWdi1N/WcqJUqTYPAwCgYIKoZIzj0EAwIw\nRzEyMDAGA1UEAwwpbWVyY2hhbnQuMGRhY2ZhZTNkNDMyNDU2MWJkNDIyYWViMmQx\nNGMzODgxETAPBgNVBAoMCE11ZyBzaG9wMB4XDTI2MTEyNTA0MzMwNloXDTM2MTEy\nMjA0MzMwNlowRzEyMDAGA1UEAwwpbWVyY2hhbnQuMGRhY2ZhZTNkNDMyNDU2MWJk\nNDIyYWViMmQxNGMzODgxETAPBgNVBAoMCE11ZyBzaG9wMFkwEwYHKoZIzj0CAQYI\nKoZIzj0DAQcDQgAEA4JUzmSmvyPTyB0459aUSVSpckUDhmeX+Jx+E9ZCKjlvIfF4\nOFl8M60lrQS5s5Qqunj7Im29TeatZGrboxn+X6NTMFEwHQYDVR0OBBYEFBsag+T7\n8hylt2D13PGSsWnFet+TMB8GA1UdIwQYMBaAFBsag+T78hylt2D13PGSsWnFet+T\nMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAK11R+fPo/5WNffy\n70G+EdkHabCdc0pg3SAH09M5oiG9AiEA/pXSLrkh89KBrEiA/EZORa1AoFjeDEgm\n7pZOpKhqppU=\n-----END CERTIFICATE-----\n',
  private_key:
    '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgucPmYYKVzgAkhUuC\nNHRkYfs76DarIkEUN4EcM273J+GhRANCAAQDglTOZKa/I9PIHTjn1pRJVKlyRQOG\nZ5f4nH4T1kIqOW8h8Xg4WXwzrSWtBLmzlCq6ePsibb1N5q1katujGf5f\n-----END PRIVATE KEY-----\n',
};
export const recipientExample = { recipient_id: 'merchant:0dacfae3d4324561bd422aeb2d14c388' };
export const processingAnswerExample = {
  merchant_identifier: '0dacfae3d4324561bd422aeb2d14c388',
  public_key:
    '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAExOYO/q5NyVEqee/3Sj3tStcBqQBq\nqHcSJ1F6/QpwycZlxjW8rn+8H20KXflpH3hKKQcw6DAo2vePjOX95Hpkkw==\n-----END PUBLIC KEY-----\n',
  public_key_hash: 'isRIOtqdU/FCAZyTsI7+8ES+BZ5P18Ecjrwez5UZPH4=',
};
export const identityAnswerExample = {
  subject: 'CN=merchant.0dacfae3d4324561bd422aeb2d14c388\nO=Mug shop',
  issuer: 'CN=merchant.0dacfae3d4324561bd422aeb2d14c388\nO=Mug shop',
  valid_to: 'Nov 23 10:15:00 2036 GMT',
  fingerprint256: '3A:1F:0C:9B:77:E2:5D:41:8C:6A:90:12:FE:4B:33:D8:0E:7C:21:A5:96:BB:48:1D:C3:57:E0:2F:6A:94:B1:0D',
};
export const tokenizationExample = {
  recipient_id: 'merchant:0dacfae3d4324561bd422aeb2d14c388',
  tokenization_specification: {
    type: 'DIRECT',
    parameters: {
      protocolVersion: 'ECv2',
      publicKey: 'BFIUxlH7En1P6jNVeAzj46HlmIrCn/oISPs21rGPxcTxxyam7qnIjNQyCycaEouMxG/8LifcerJoNuA2JEDOoh0=',
    },
  },
  token_service_url: 'https://pay.example.com/wallet-b-token/test/tokens/',
};
export const walletASessionExample = {
  validationUrl: 'https://apple-pay-gateway.apple.com/paymentservices/startSession',
  merchantIdentifier: '0dacfae3d4324561bd422aeb2d14c388',
  displayName: 'Mug shop',
  initiativeContext: 'pay.example.com',
};
export const tokenClockExample = { now: '2026-11-25T10:15:00Z' };
export const tokenizeExample = {
  walletBPayMessage:
    '{"signature":"MEUCIQ...","intermediateSigningKey":{"signedKey":"...","signatures":["..."]},"protocolVersion":"ECv2","signedMessage":"{\\"encryptedMessage\\":\\"...\\",\\"ephemeralPublicKey\\":\\"...\\",\\"tag\\":\\"...\\"}"}',
  setupToken: '417cb48b-4f07-4617-aca6-087c0edd9792',
  transactionId: '01a210f4-1cdf-740c-915f-f6e0416ae9e8',
};
export const tokenizeAnswerExample = {
  vaultToken: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  cryptogram: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=',
  eciIndicator: '05',
};
export const walletBPayExample = {
  vaultToken: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  cryptogram: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=',
  eciIndicator: '05',
  browser_info_language: 'nl-NL',
};
export const walletAPayExample = {
  paymentToken: {
    paymentData: {
      version: 'EC_v1',
      data: '...',
      signature: '...',
      header: {
        ephemeralPublicKey: '...',
        publicKeyHash: 'isRIOtqdU/FCAZyTsI7+8ES+BZ5P18Ecjrwez5UZPH4=',
        transactionId: 'c1caf5ae72f0039a82bad92b828363734f85bf2f9cadf193d1bad9ddcb60a795',
      },
    },
  },
  setupToken: '417cb48b-4f07-4617-aca6-087c0edd9792',
};
export const testCardsExample = {
  cards: [
    {
      pan: '4111111111111111',
      brand: 'visa',
      brands: ['visa'],
      three_ds: 'Y',
      result: 'accepted',
      liability_shift: true,
      description: 'Visa, approved',
    },
  ],
  default_behaviour: 'any other Luhn-valid card number of a known brand: frictionless 3-D Secure, approved',
};
