import { basic, cardOrder, request, type TestService } from './service.ts';
import type { Json } from './json.ts';

export interface PayOptions {
  /** default 4111111111111111 (visa, frictionless, approved) */
  pan?: string;
  /** manual or delayed for a pre-authorization; unset for a sale */
  capture_mode?: 'manual' | 'delayed';
  /** the transaction's expiration_period (delayed captures happen at its end) */
  expiration_period?: string;
  key?: string;
}

const expiry = () => `12${new Date().getUTCFullYear() + 3}`;

/**
 * Pays a card order through the real HTTP flow, as a merchant and a customer would:
 * create the order (unless `order` is one already created), store the card in the vault,
 * authenticate, and follow the customer's browser through the frictionless 3-D Secure
 * redirects. Answers the order as GET returns it afterwards.
 *
 * `order`: an order body override (merged into a valid card order), or a created order.
 */
export async function payOrder(t: TestService, order: Record<string, Json> = {}, opts: PayOptions = {}): Promise<Json> {
  const key = opts.key ?? t.project.api_key;
  let created = order;
  if (!order.id) {
    const txn: Record<string, unknown> = {};
    if (opts.capture_mode) txn.capture_mode = opts.capture_mode;
    if (opts.expiration_period) txn.expiration_period = opts.expiration_period;
    const res = await t.api('POST', '/v1/orders/', cardOrder(order, txn), { key });
    if (res.status !== 201) throw new Error(`create order: ${res.status} ${res.text}`);
    created = res.body;
  }
  const txn = created.transactions[0];
  const card = await request(
    `${t.config.vaultUrl}/v1/cards/`,
    'POST',
    { pan: opts.pan ?? '4111111111111111', expiry: expiry(), name: 'Ada Lovelace', setup_token: txn.payment_method_details.setup_token },
    { authorization: basic(key) },
  );
  if (card.status !== 201) throw new Error(`vault: ${card.status} ${card.text}`);
  const auth = await t.api(
    'POST',
    `/v1/orders/${created.id}/transactions/${txn.id}/authenticate/`,
    { vault_token: card.body.vault_token, cvc: '123' },
    { key },
  );
  if (auth.status !== 200) throw new Error(`authenticate: ${auth.status} ${auth.text}`);
  // The customer's browser: follow our own 3-D Secure pages until it is sent back to the shop.
  let url: string | null = new URL(auth.body.redirect_url, t.url).toString();
  for (let hop = 0; url && url.startsWith(t.url) && hop < 10; hop++) {
    const res: Response = await fetch(url, { redirect: 'manual' });
    await res.arrayBuffer();
    if (res.status < 300 || res.status >= 400)
      throw new Error(`3-D Secure page ${url} answered ${res.status} (a challenge card needs the cards helpers)`);
    url = res.headers.get('location') && new URL(res.headers.get('location')!, url).toString();
  }
  const got = await t.api('GET', `/v1/orders/${created.id}/`, undefined, { key });
  if (got.status !== 200) throw new Error(`get order: ${got.status} ${got.text}`);
  return got.body;
}
