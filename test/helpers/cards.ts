import { basic, cardOrder, request, type ApiResponse, type TestService } from './service.ts';

/** Black-box helpers for the three-step card flow: order -> vault -> authenticate -> browser. */

export const futureExpiry = () => `12${new Date().getUTCFullYear() + 3}`;

/** A Luhn-valid PAN with the given prefix and random digits (for "not stored in clear" checks). */
export function randomPan(prefix = '4', length = 16): string {
  let body = prefix;
  while (body.length < length - 1) body += String(Math.floor(Math.random() * 10));
  for (let check = 0; check < 10; check++) {
    const pan = body + check;
    let sum = 0;
    for (let i = 0; i < pan.length; i++) {
      let d = Number(pan[pan.length - 1 - i]);
      if (i % 2) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
    if (sum % 10 === 0) return pan;
  }
  throw new Error('unreachable');
}

export function vault(t: TestService, body: Record<string, unknown>, key = t.project.api_key): Promise<ApiResponse> {
  return request(`${t.config.vaultUrl}/v1/cards/`, 'POST', body, { authorization: basic(key) });
}

export async function createCardOrder(
  t: TestService,
  orderOver: Record<string, unknown> = {},
  txnOver: Record<string, unknown> = {},
  key = t.project.api_key,
) {
  const res = await t.api('POST', '/v1/orders/', cardOrder(orderOver, txnOver), { key });
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  const order = res.body;
  const txn = order.transactions[0];
  return { order, txn, setup_token: txn.payment_method_details.setup_token as string };
}

/** Steps 1-3: order, vault, authenticate. Returns the redirect_url and ids. */
export async function startPayment(
  t: TestService,
  pan: string,
  opts: {
    orderOver?: Record<string, unknown>;
    txnOver?: Record<string, unknown>;
    key?: string;
    expiry?: string;
    name?: string;
    cvc?: string;
  } = {},
) {
  const key = opts.key ?? t.project.api_key;
  const { order, txn, setup_token } = await createCardOrder(t, opts.orderOver, opts.txnOver, key);
  const stored = await vault(t, { pan, expiry: opts.expiry ?? futureExpiry(), name: opts.name ?? 'Ada Lovelace', setup_token }, key);
  if (stored.status !== 201) throw new Error(`vault: ${stored.status} ${stored.text}`);
  const auth = await t.api(
    'POST',
    `/v1/orders/${order.id}/transactions/${txn.id}/authenticate/`,
    { vault_token: stored.body.vault_token, cvc: opts.cvc ?? '123' },
    { key },
  );
  if (auth.status !== 200) throw new Error(`authenticate: ${auth.status} ${auth.text}`);
  return {
    order,
    txn,
    vault_token: stored.body.vault_token as string,
    card: stored.body,
    redirect_url: auth.body.redirect_url as string,
    key,
  };
}

const decode = (s: string) =>
  s
    .replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z-]+)(?:="([^"]*)")?/g)) out[m[1].toLowerCase()] = decode(m[2] ?? '');
  return out;
}

export interface ParsedForm {
  action: string;
  method: string;
  fields: Record<string, string>;
  buttons: Record<string, string>[];
  labels: string[];
}

/** The first form of a page, read as a browser would: action, hidden/visible inputs, buttons. */
export function parseForm(html: string, base: string): ParsedForm {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error('no form on the page');
  const fa = attrs(form[1]);
  const fields: Record<string, string> = {};
  for (const m of form[2].matchAll(/<input\b([^>]*)>/gi)) {
    const a = attrs(m[1]);
    if (a.name) fields[a.name] = a.value ?? '';
  }
  const buttons = [...form[2].matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/gi)].map((m) => ({ ...attrs(m[1]), text: m[2].trim() }));
  const labels = [...form[2].matchAll(/<label\b[^>]*>([\s\S]*?)<\/label>/gi)].map((m) => m[1].trim());
  return { action: new URL(fa.action ?? '', base).toString(), method: (fa.method ?? 'get').toLowerCase(), fields, buttons, labels };
}

/** Submits a form as a browser does: urlencoded fields plus the clicked button's name/value. */
export async function submitForm(form: ParsedForm, values: Record<string, string>, button?: Record<string, string>) {
  const body = new URLSearchParams({ ...form.fields, ...values });
  if (button?.name) body.set(button.name, button.value ?? '');
  return fetch(form.action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(form.action).origin },
    body: body.toString(),
  });
}

export interface BrowserResult {
  /** where the customer finally lands (outside the 3DS pages) */
  location: string;
  /** the challenge page, when there was one */
  challenge?: { html: string; headers: Headers; form: ParsedForm };
}

/**
 * Step 4: the customer's browser at redirect_url. Frictionless pages redirect at once; a
 * challenge page is answered with `code` (or cancelled), like a person filling in the form.
 */
export async function followBrowser(redirectUrl: string, opts: { code?: string; cancel?: boolean } = {}): Promise<BrowserResult> {
  const first = await fetch(redirectUrl, { redirect: 'manual' });
  if (first.status === 302) return { location: first.headers.get('location')! };
  if (first.status !== 200) throw new Error(`3DS page answered ${first.status}: ${await first.text()}`);
  const html = await first.text();
  const form = parseForm(html, redirectUrl);
  const button = form.buttons.find((b) => (opts.cancel ? /cancel/i.test(b.text) : /verify/i.test(b.text)));
  const res = await submitForm(form, opts.cancel ? {} : { code: opts.code ?? '' }, button);
  if (res.status !== 303) throw new Error(`challenge answered ${res.status}: ${await res.text()}`);
  return { location: res.headers.get('location')!, challenge: { html, headers: first.headers, form } };
}
