import assert from 'node:assert/strict';
import { validOrder, type TestService } from './service.ts';

/** An order with one wallet transaction, and what the pay steps need of it. */
export async function walletOrder(
  t: TestService,
  method: 'wallet-a-pay' | 'wallet-b-pay',
  key = t.project.api_key,
  over: Record<string, unknown> = {},
) {
  const res = await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: method }], ...over }), { key });
  assert.equal(res.status, 201, res.text);
  const [txn] = res.body.transactions;
  return { order: res.body, txn, setupToken: txn.payment_method_details.setup_token as string };
}

/** A hosted page as the browser gets it, without following redirects. */
export async function hostedPage(t: TestService, path: string) {
  const res = await fetch(`${t.url}${path}`, { redirect: 'manual' });
  return {
    status: res.status,
    location: res.headers.get('location'),
    csp: res.headers.get('content-security-policy') ?? '',
    html: await res.text(),
  };
}

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The data-config of a wallet's device button on a page. */
export const deviceConfig = (html: string, method: 'wallet-a-pay' | 'wallet-b-pay') =>
  JSON.parse(unescape(new RegExp(`data-wallet="${method}" data-config="([^"]+)"`).exec(html)?.[1] ?? 'null'));

/** The billing address the stand-in device wallets hand over, as the order then stores it. */
const DEVICE_BILLING = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  address: 'Damrak 1',
  postal_code: '1012 LG',
  city: 'Amsterdam',
  country: 'NL',
  address_type: 'billing',
};

/** A wallet-a-pay device's decrypted payment data for a card payment of `amount` (EUR) with its cryptogram. */
export const walletAPayload = (amount: number) => ({
  applicationPrimaryAccountNumber: '4111111111111111',
  applicationExpirationDate: '311231',
  currencyCode: '978',
  transactionAmount: amount,
  deviceManufacturerIdentifier: '040010030273',
  paymentDataType: '3DSecure',
  paymentData: { onlinePaymentCryptogram: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=', eciIndicator: '5' },
});

/** Waits until a stand-in device wallet has reported what the page did (its reports reach the test asynchronously). */
export async function reported(done: () => boolean) {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** An order paid on its page by a device wallet that handed over DEVICE_BILLING. */
export function assertPaidByDevice(
  paid: { status: string; transactions: Array<{ payment_method: string }>; customer?: object },
  method: 'wallet-a-pay' | 'wallet-b-pay',
) {
  assert.equal(paid.status, 'completed');
  assert.equal(paid.transactions[0].payment_method, method);
  assert.deepEqual({ ...paid.customer }, DEVICE_BILLING);
}
