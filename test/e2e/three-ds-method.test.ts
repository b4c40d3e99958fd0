// The EMV 3DS Method (issue 43), as the customer's browser goes through it without a browser:
// a card whose range has a threeDSMethodURL (ds-host's 40000013 range) is not looked up at once;
// Tender's 3-D Secure page posts the method data to the ACS in a hidden iframe, the ACS notifies
// Tender, the page goes ahead, and the AReq names the same threeDSServerTransID with
// threeDSCompInd Y (ds-host then answers Y); without the notification N (ds-host challenges);
// a card whose range has no method URL is asked at once with U.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { startDsHostProcess, type DsHostProcess } from '../helpers/ds-host.ts';
import { parseForm, startPayment, submitForm, type ParsedForm } from '../helpers/cards.ts';
import { createBoundProject } from '../../src/services/payments/acquirer-link.ts';
import { dsCard } from '../../src/acquirer/threeds/host/cards.ts';
import { decodeBrowser } from '../../src/acquirer/threeds/messages.ts';

let t: TestService;
let host: HostProcess;
let ds: DsHostProcess;
let dir: string;
let live: { project_id: string; api_key: string };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-3ds-method-'));
  [host, ds] = await Promise.all([startHostProcess(dir), startDsHostProcess()]);
  t = await startTestService({ env: { THREEDS_ALLOW_HTTP: 'true', THREEDS_TIMEOUT_MS: '1500' } });
  live = await createBoundProject(t.svc.ctx, {
    merchantId: t.project.merchant_id,
    name: 'Method shop',
    mode: 'live',
    acquirer: host.url,
    terminalId: 'T3DS0001',
    cardAcceptorId: 'SHOP3DS',
    directoryServer: `${ds.url}/ds`,
    acquirerBin: '400551',
    mcc: '5999',
    merchantCountry: 'NL',
  });
});
after(async () => {
  await t?.close();
  host?.stop();
  ds?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Every form of a page. */
const formsOf = (html: string, base: string): ParsedForm[] =>
  [...html.matchAll(/<form\b/gi)].map((m) => parseForm(html.slice(m.index), base));

let amount = 3000;
/** A payment of `pan` started through the API; the 3-D Secure page's forms. */
async function begin(pan: string) {
  const p = await startPayment(t, pan, { key: live.api_key, orderOver: { amount: ++amount } });
  const res = await fetch(p.redirect_url, { redirect: 'manual' });
  return { p, res, html: await res.text() };
}
const txnOf = async (p: { order: { id: string } }) =>
  (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: live.api_key })).body.transactions[0];
const areqOf = async (id: string) =>
  (await ds.journal()).find((l) => l.dir === 'in' && l.messageType === 'AReq' && l.threeDSServerTransID === id);
const lookupOf = async (txnId: string) =>
  (await t.db.query<{ id: string }>("SELECT id FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'three_ds'", [txnId]))[0]?.id;

test('method notified: the iframe posts the method data, the ACS notifies Tender, the AReq carries Y with the same id, frictionless', async () => {
  const { p, res, html } = await begin(dsCard('method'));
  assert.equal(res.status, 200);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, new RegExp(`frame-src 'self' ${ds.url}`), 'the iframe may load the ACS');
  const [method, go] = formsOf(html, p.redirect_url);
  assert.equal(method.action, `${ds.url}/acs/method`);
  assert.match(html, /<form id="m" method="post" action="[^"]+" target="tdsm">/, 'posted into the hidden iframe');
  assert.match(html, /<iframe name="tdsm" title="3-D Secure" hidden>/);
  const data = decodeBrowser(method.fields.threeDSMethodData)!;
  const id = String(data.threeDSServerTransID);
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.equal(data.threeDSMethodNotificationURL, `${p.redirect_url}method-notification`);
  assert.equal(await areqOf(id), undefined, 'no AReq before the method');
  assert.equal((await txnOf(p)).status, 'new');
  // the iframe: the ACS's method page hands the notification back to Tender
  const acs = await submitForm(method, {});
  assert.equal(acs.status, 200);
  assert.ok(
    (await ds.journal()).some((l) => l.messageType === 'Method' && l.threeDSServerTransID === id),
    'ds-host recorded the method',
  );
  const back = parseForm(await acs.text(), `${ds.url}/acs/method`);
  assert.equal(back.action, data.threeDSMethodNotificationURL);
  const notified = await submitForm(back, {});
  assert.equal(notified.status, 200);
  assert.match(await notified.text(), /parent\.postMessage\('tender-3ds-method',location\.origin\)/);
  assert.match(notified.headers.get('content-security-policy') ?? '', /frame-ancestors 'self'/);
  // the page goes ahead: the lookup, then the 3-D Secure page authorizes
  const ahead = await submitForm(go, {});
  assert.equal(ahead.status, 303);
  assert.equal(ahead.headers.get('location'), p.redirect_url);
  const done = await fetch(p.redirect_url, { redirect: 'manual' });
  assert.equal(done.status, 302);
  const areq = await areqOf(id);
  assert.equal(areq?.threeDSCompInd, 'Y');
  assert.equal(await lookupOf(p.txn.id), id, "the lookup attempt's id is the method's threeDSServerTransID");
  const txn = await txnOf(p);
  assert.equal(txn.status, 'accepted');
  assert.equal(txn.payment_method_details.liability_shift, true);
  // a second go-ahead changes nothing
  const again = await submitForm(go, {});
  assert.equal(again.status, 303);
  assert.equal((await ds.journal()).filter((l) => l.messageType === 'AReq' && l.threeDSServerTransID === id).length, 1);
});

test('no notification (the page timed out, or script is off): the AReq carries N and the issuer challenges', async () => {
  const { p, html } = await begin(dsCard('method'));
  const [method, go] = formsOf(html, p.redirect_url);
  const id = String(decodeBrowser(method.fields.threeDSMethodData)!.threeDSServerTransID);
  assert.match(html, /<noscript><div class="actions"><button class="primary" type="submit">/, 'without script, a button goes ahead');
  assert.match(html, /setTimeout\(ahead,10000\)/, 'the page waits 10 seconds at most');
  const ahead = await submitForm(go, {});
  assert.equal(ahead.status, 303);
  assert.equal((await areqOf(id))?.threeDSCompInd, 'N');
  const page = await fetch(p.redirect_url, { redirect: 'manual' });
  assert.equal(parseForm(await page.text(), p.redirect_url).action, `${ds.url}/acs/challenge`);
  // a notification after the go-ahead is not taken: the finished method was taken by its lookup
  const late = await fetch(`${p.redirect_url}method-notification`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ threeDSMethodData: method.fields.threeDSMethodData }).toString(),
  });
  assert.equal(late.status, 400, 'no method of this transaction waits any more');
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM threeds_methods WHERE transaction_id = $1', [p.txn.id]);
  assert.equal(row.n, 0);
});

test('a range with no method URL: the AReq goes at once with U; bad notifications and go-aheads change nothing', async () => {
  const { p, res } = await begin(dsCard('frictionless'));
  assert.equal(res.status, 302, 'frictionless: straight to the authorization');
  const id = await lookupOf(p.txn.id);
  assert.equal((await areqOf(id!))?.threeDSCompInd, 'U');
  const { p: q, html } = await begin(dsCard('method'));
  const [method, go] = formsOf(html, q.redirect_url);
  const bodies: Record<string, string>[] = [
    { threeDSMethodData: 'not base64!' },
    { threeDSMethodData: Buffer.from('{"threeDSServerTransID":"0b1d3f0e-8a3c-4c1e-9d55-0c8a7e3b2f10"}').toString('base64url') },
    {},
  ];
  for (const body of bodies)
    assert.equal(
      (
        await fetch(`${q.redirect_url}method-notification`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(body).toString(),
        })
      ).status,
      400,
      JSON.stringify(body),
    );
  const forged = await submitForm({ ...go, fields: { csrf: 'x' } }, {});
  assert.equal(forged.status, 303);
  const [row] = await t.db.query<{ notified_at: Date | null; finished_at: Date | null; cvc_ct: string | null }>(
    'SELECT notified_at, finished_at, cvc_ct FROM threeds_methods WHERE transaction_id = $1',
    [q.txn.id],
  );
  assert.equal(row.notified_at, null, 'no notification taken');
  assert.equal(row.finished_at, null, 'a go-ahead without the token is refused');
  assert.ok(row.cvc_ct && !row.cvc_ct.includes('123'), 'the CVC waits sealed');
  const id2 = String(decodeBrowser(method.fields.threeDSMethodData)!.threeDSServerTransID);
  assert.equal(await areqOf(id2), undefined);
  // the merchant cancels: the order ends and the sealed CVC is dropped
  const cancel = await t.api('DELETE', `/v1/orders/${q.order.id}/`, undefined, { key: live.api_key });
  assert.equal(cancel.status, 200, cancel.text);
  const [after] = await t.db.query<{ cvc_ct: string | null }>('SELECT cvc_ct FROM threeds_methods WHERE transaction_id = $1', [q.txn.id]);
  assert.equal(after.cvc_ct, null);
});
