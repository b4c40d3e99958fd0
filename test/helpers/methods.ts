import assert from 'node:assert/strict';
import { request, type TestService } from './service.ts';

/** Orders as the sandbox pages see them: the last transaction's id and payment_url. */
export interface MethodOrder {
  id: string;
  transactions: { id: string; payment_url: string }[];
}

/** The customer's side of a sandbox method's page over plain HTTP, as a browser posts it (docs/payment-methods.md). */
export function sandboxCustomer(t: Pick<TestService, 'url'>) {
  /** A page of ours, fetched as a browser would; answers its HTML. */
  async function page(path: string) {
    const res = await request(new URL(path, t.url).toString(), 'GET');
    assert.equal(res.status, 200, path);
    return res.text as string;
  }
  /** Submits a form of ours (urlencoded, as a browser does); answers where it sends the customer. */
  async function submit(action: string, fields: Record<string, string>) {
    const res = await fetch(new URL(action, t.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    await res.arrayBuffer();
    assert.equal(res.status, 303);
    return res.headers.get('location')!;
  }
  /** The customer picks an outcome on the sandbox page of the order's last transaction. */
  async function choose(o: MethodOrder, outcome: string, extra = {}) {
    const txn = o.transactions.at(-1)!;
    const html = await page(txn.payment_url);
    const action = `/pay/${o.id}/transactions/${txn.id}/outcome/`;
    return submit(action, { csrf: csrfIn(html, action), outcome, ...extra });
  }
  return { page, submit, choose };
}

export const csrfIn = (html: string, action: string) => {
  const form = html.split('<form').find((f) => f.includes(`action="${action}"`));
  assert.ok(form, `a form posting to ${action}`);
  return /name="csrf" value="([^"]+)"/.exec(form)![1];
};

/** Two order lines of a BNPL order: 2 mugs at 1000 and a tea at 995 (3 × … adds up to 2995). */
export const bnplLines = [
  { name: 'Mug', type: 'physical', amount: 1000, currency: 'EUR', quantity: 2, vat_percentage: 2100, merchant_order_line_id: 'mug' },
  { name: 'Tea', type: 'physical', amount: 995, currency: 'EUR', quantity: 1, vat_percentage: 900, merchant_order_line_id: 'tea' },
];
