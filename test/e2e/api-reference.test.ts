// The API reference: /openapi.json documents every operation with realistic examples (each
// POST's example body is accepted by a test project), and /docs renders it as a page that
// works on a phone with the hosted pages' security headers, compressed.
import { setProjectWebhookUrl } from '../../src/services/webhooks/endpoints.ts';
import { METHOD_TABLE } from '../../src/domain/payment-methods.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
let doc: Json;
before(async () => {
  t = await startTestService();
  doc = (await t.api('GET', '/openapi.json', undefined, { key: null })).body;
});
after(async () => t?.close());

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );
const exampleOf = (media: Json) => media?.example ?? (media?.examples ? (Object.values(media.examples)[0] as Json).value : undefined);

test('every operation has a summary, every response a description and an example, every body an example', () => {
  const problems: string[] = [];
  for (const { path, method, op } of operations()) {
    const name = `${method.toUpperCase()} ${path}`;
    if (!op.summary) problems.push(`${name}: no summary`);
    const body = op.requestBody?.content?.['application/json'];
    if (op.requestBody && exampleOf(body) === undefined) problems.push(`${name}: no request example`);
    for (const [code, r] of Object.entries<Json>(op.responses ?? {})) {
      if (!r.description || r.description === 'Default Response') problems.push(`${name} ${code}: no description`);
      for (const [type, media] of Object.entries<Json>(r.content ?? {}))
        if (exampleOf(media) === undefined) problems.push(`${name} ${code} ${type}: no example`);
    }
  }
  assert.deepEqual(problems, []);
});

test('payment_method, capture_mode and the statuses list their allowed values', () => {
  const post = doc.paths['/v1/orders/'].post;
  const input = post.requestBody.content['application/json'].schema;
  const txn = input.properties.transactions.items;
  // an operator's aliases are accepted too (PAYMENT_METHOD_ALIASES), so the input names the methods in words
  assert.match(txn.properties.payment_method.description, /credit-card, wallet-a-pay, wallet-b-pay/);
  assert.deepEqual(txn.properties.capture_mode.enum, ['manual', 'delayed']);
  assert.match(input.properties.payment_methods.items.description, /credit-card, wallet-a-pay, wallet-b-pay/);
  const order = doc.components.schemas.Order ?? post.responses['201'].content['application/json'].schema;
  assert.ok(order.properties.status.enum.includes('completed'));
  assert.ok(order.properties.transactions.items.properties.status.enum.includes('accepted'));
  assert.deepEqual(order.properties.transactions.items.properties.payment_method.enum, [
    'credit-card',
    'wallet-a-pay',
    'wallet-b-pay',
    ...Object.keys(METHOD_TABLE),
  ]);
  const example = exampleOf(post.requestBody.content['application/json']);
  assert.equal(example.currency, 'EUR');
  assert.ok(Number.isSafeInteger(example.amount) && example.amount > 0 && example.amount < 1_000_000);
});

/**
 * Operations whose example cannot succeed on a fresh project because it carries something only
 * a real device or wallet provider makes (a signed wallet token, the provider's validation
 * host): their answer must still be one they document, never a refusal of the example's shape.
 */
/** Operations whose example carries a wallet's token or session, which no static example can make valid: refused by a documented 4xx. */
const NEEDS_A_WALLET = new Set([
  'POST /wallet-b-token/tokens/',
  'POST /wallet-b-token/test/tokens/',
  'POST /pay/{order_id}/select-payment-method/wallet-b-pay/{transaction_id}/',
  'POST /pay/{order_id}/select-payment-method/wallet-a-pay/{transaction_id}/',
  'POST /v1/wallet-a-pay/sessions/',
  // needs an order paid by bank transfer, in a project with that method on (test/e2e/payment-methods.test.ts)
  'POST /v1/test/orders/{order_id}/bank-transfer/',
]);

/** Operations on money that need a paid order first: which order the example runs on. */
const PAID: Record<string, 'sale' | 'manual'> = {
  'POST /v1/orders/{order_id}/transactions/{transaction_id}/captures/': 'manual',
  'POST /v1/orders/{order_id}/transactions/{transaction_id}/voids/': 'manual',
  'POST /v1/orders/{order_id}/transactions/{transaction_id}/voids/amount/': 'manual',
  'POST /v1/orders/{order_id}/refunds/': 'sale',
  'POST /v1/test/orders/{order_id}/chargeback/': 'sale',
  'POST /v1/test/orders/{order_id}/reversal/': 'sale',
};

test("each POST operation's documented example is accepted by a test project", async () => {
  // a webhook URL (nothing listens on port 9): the test event and the resend of a delivery have a receiver to try
  await setProjectWebhookUrl(t.svc.ctx, t.project.project_id, 'http://127.0.0.1:9/hook');
  const created = await t.api('POST', '/v1/orders/', exampleOf(doc.paths['/v1/orders/'].post.requestBody.content['application/json']));
  assert.equal(created.status, 201, created.text);
  const order = created.body;
  const bare = (
    await t.api('POST', '/v1/orders/', {
      ...exampleOf(doc.paths['/v1/orders/'].post.requestBody.content['application/json']),
      transactions: undefined,
    })
  ).body;
  const results: string[] = [];
  // As a merchant would: the card into the vault first (its vault_token then starts 3-D Secure),
  // the clock last (its example moves the project's time past the order's setup_token).
  const rank = (path: string) => (path.startsWith('/vault/') ? 0 : path.includes('/clock/') ? 2 : 1);
  const posts = operations()
    .filter((o) => o.method === 'post')
    .sort((a, b) => rank(a.path) - rank(b.path));
  let vaultToken: string | undefined;
  // one paid sale serves the refund, the chargeback and its reversal (in that order); each pre-authorization serves one operation
  const exampleOrder = exampleOf(doc.paths['/v1/orders/'].post.requestBody.content['application/json']);
  const sale = await payOrder(t, exampleOrder);
  const preAuthorization = () =>
    payOrder(t, { ...exampleOrder, transactions: [{ ...exampleOrder.transactions[0], capture_mode: 'manual' }] });
  for (const { path, op } of posts) {
    const name = `POST ${path}`;
    // an order without a transaction for the operation that starts one; a paid one for money; the example order for the rest
    const paid = PAID[name] === 'manual' ? await preAuthorization() : PAID[name] ? sale : undefined;
    const target = paid ?? (path === '/v1/orders/{order_id}/transactions/' ? bare : order);
    const delivery = path.includes('{delivery_id}') ? (await t.api('GET', '/v1/webhooks/deliveries/')).body.deliveries[0].id : '';
    const url = path
      .replace('{order_id}', target.id)
      .replace('{transaction_id}', (paid ?? order).transactions[0].id)
      .replace('{delivery_id}', delivery);
    const example = exampleOf(op.requestBody?.content?.['application/json']);
    // the vault stores a card against the setup_token of a transaction that exists: the example order's
    let body = example?.setup_token ? { ...example, setup_token: order.transactions[0].payment_method_details.setup_token } : example;
    if (body?.vault_token && vaultToken) body = { ...body, vault_token: vaultToken };
    const res = await t.api('POST', url, body, op.security?.length ? {} : { key: null });
    if (path.startsWith('/vault/') && res.status === 201) vaultToken = res.body.vault_token;
    const ok = res.status >= 200 && res.status < 300;
    // only the wallet operations may refuse their example, with a status they document
    const walletRefusal = NEEDS_A_WALLET.has(name) && Object.keys(op.responses).includes(String(res.status)) && res.status < 500;
    if (!(ok || walletRefusal)) results.push(`${name}: ${res.status} ${res.text.slice(0, 200)}`);
  }
  assert.deepEqual(results, []);
});

test('/docs: every operation on one page, phone-ready, with the security headers, compressed', async () => {
  const res = await fetch(`${t.url}/docs`, { headers: { 'accept-encoding': 'br, gzip' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-encoding'), 'br');
  assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'; style-src 'sha256-[^']+'/);
  // the one script (Copy buttons) is allowed by its hash, never as inline code in general
  assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'sha256-[^']+';/);
  assert.doesNotMatch(res.headers.get('content-security-policy') ?? '', /unsafe-inline|unsafe-eval/);
  assert.equal(res.headers.get('x-frame-options'), 'DENY');
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  const html = await res.text();
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.equal(html.match(/<script/g)?.length, 1, 'one script: the Copy buttons');
  assert.doesNotMatch(html, /<script src=/);
  for (const { path, method } of operations())
    assert.ok(html.includes(`<code>${path.replace(/&/g, '&amp;')}</code>`) && html.includes(method.toUpperCase()), `${method} ${path}`);
  assert.match(html, /&quot;currency&quot;: &quot;EUR&quot;/, 'the order example is shown');
  assert.match(html, /No such resource in the project of the API key/, 'response codes are described');
  const plain = await fetch(`${t.url}/docs`, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(plain.headers.get('content-encoding'), null);
  assert.ok(Number(res.headers.get('content-length') ?? Infinity) < (await plain.text()).length / 3, 'compressed to a fraction');
});

test('/docs: nested fields (transactions, customer) under their field; a search without script finds capture_mode', async () => {
  const html = await (await fetch(`${t.url}/docs`)).text();
  const orders = html.slice(html.indexOf('id="post-v1-orders"'), html.indexOf('</section>', html.indexOf('id="post-v1-orders"')));
  assert.match(orders, /<code>transactions<\/code>[\s\S]*<ul class="fields nested">[\s\S]*<code>capture_mode<\/code>/);
  assert.match(orders, /<code>customer<\/code>[^\n]*<ul class="fields nested">[\s\S]*<code>email_address<\/code>/);
  const found = await fetch(`${t.url}/docs?q=capture_mode`);
  assert.equal(found.status, 200);
  const page = await found.text();
  assert.match(page, /<p role="status">\d+ operations? mention <code>capture_mode<\/code>/);
  assert.ok(page.includes('id="post-v1-orders"'), 'creating an order takes capture_mode');
  assert.ok(!page.includes('id="post-vault-v1-cards"'), 'the vault does not');
  assert.match(page, /<input type="search" id="q" name="q" maxlength="100" value="capture_mode">/);
  assert.match(found.headers.get('content-security-policy') ?? '', /form-action 'self'/);
  assert.match(
    await (await fetch(`${t.url}/docs?q=${encodeURIComponent('<zzz>')}`)).text(),
    /0 operations mention <code>&lt;zzz&gt;<\/code>/,
  );
});

/** A value of a query parameter's schema as a client writes it: not the default, so it must be read. */
function queryValue(schema: Json): string {
  if (schema.enum) return String(schema.enum.at(-1));
  if (schema.type === 'integer' || schema.type === 'number') {
    const low = schema.minimum ?? 1;
    return String(Math.min(schema.maximum ?? low + 4, low + 4));
  }
  if (schema.type === 'boolean') return 'true';
  return 'x';
}

test('every documented query parameter of every route is read from the query string (issue 42, item 14)', async () => {
  const paid = await payOrder(t, exampleOf(doc.paths['/v1/orders/'].post.requestBody.content['application/json']));
  const problems: string[] = [];
  const checked: string[] = [];
  for (const { path, method, op } of operations()) {
    const query: Array<{ name: string; schema: Json }> = (op.parameters ?? []).filter((p: Json) => p.in === 'query');
    if (!query.length) continue;
    const url = path.replace('{order_id}', paid.id).replace('{transaction_id}', paid.transactions[0].id);
    const body = exampleOf(op.requestBody?.content?.['application/json']);
    const send = (q: string) => t.api(method.toUpperCase(), `${url}?${q}`, body, op.security?.length ? {} : { key: null });
    const one = query.map((p) => `${p.name}=${encodeURIComponent(queryValue(p.schema))}`);
    // each parameter alone, then all of them together
    for (const q of [...one, one.join('&')]) {
      const res = await send(q);
      checked.push(`${method.toUpperCase()} ${path}?${q}`);
      if (res.status < 200 || res.status >= 300)
        problems.push(`${method.toUpperCase()} ${path}?${q}: ${res.status} ${res.text.slice(0, 200)}`);
    }
    // a value that is not of the parameter's type is still refused, naming the parameter
    for (const p of query.filter((p) => p.schema.type === 'integer' || p.schema.enum)) {
      const res = await send(`${p.name}=not-a-${p.schema.type ?? 'value'}`);
      if (res.status !== 400 || res.body?.error?.field !== p.name)
        problems.push(`${path}?${p.name}=junk: ${res.status} ${res.text.slice(0, 200)}`);
    }
  }
  assert.ok(
    checked.some((c) => c.includes('/v1/webhooks/deliveries/?limit=5')),
    checked.join('\n'),
  );
  assert.deepEqual(problems, []);
});
