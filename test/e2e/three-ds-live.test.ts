// A live project's EMV 3-D Secure (issue 43): Tender as the 3DS Server, bound to `tender ds-host`
// and `tender acquirer-host`, each its own process on real sockets. Frictionless, attempts, N, R
// and U (under both binding settings), a DS that never answers, a malformed ARes (Erro sent);
// each checks field 48 of the authorization in the acquiring host's journal, or that none was sent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestService } from '../helpers/service.ts';
import { startLiveThreeDs, type LiveThreeDs } from '../helpers/live-three-ds.ts';
import { setAcquirer } from '../../src/services/payments/acquirer-link.ts';
import { readHostJournal } from '../../src/acquirer/iso8583/host/journal.ts';
import { parseSecureField } from '../../src/acquirer/iso8583/fields.ts';
import { dsCard } from '../../src/acquirer/threeds/host/cards.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import type { Json } from '../helpers/json.ts';
import { parseForm, startPayment, submitForm } from '../helpers/cards.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { DS_CHALLENGE_CODE } from '../../src/acquirer/threeds/host/cards.ts';
import { decodeBrowser } from '../../src/acquirer/threeds/messages.ts';

let live: LiveThreeDs;
let t: TestService;
let ds: LiveThreeDs['ds'];
let fallback: LiveThreeDs['fallback'];
let refusing: LiveThreeDs['refusing'];

before(async () => {
  live = await startLiveThreeDs('3ds-live', 'Live 3DS', 1000);
  ({ t, ds, fallback, refusing } = live);
});
after(() => live?.close());

const pay = (project: { api_key: string }, pan: string) => live.pay(project, pan);

const UUID = /^[0-9a-f-]{36}$/;

test('frictionless Y (Visa-like and Mastercard-like) and attempts A: authorized with the ECI, the authentication value, the DS id and the version', async () => {
  for (const [pan, eci] of [
    [dsCard('frictionless'), '05'],
    [dsCard('frictionless', 'mastercard'), '02'],
    [dsCard('attempts'), '06'],
    [dsCard('attempts', 'mastercard'), '01'],
  ]) {
    const { txn, f48, lookup } = await pay(fallback, pan);
    assert.equal(txn.status, 'accepted', pan);
    assert.equal(txn.payment_method_details.liability_shift, true);
    assert.ok(f48, 'an authorization was sent');
    assert.equal(f48.eci, eci, pan);
    assert.match(f48.authenticationValue ?? '', /^[A-Za-z0-9+/=]{28}$/);
    assert.match(f48.dsTransactionId ?? '', UUID);
    assert.equal(f48.version, '2.2.0');
    // the AReq was the lookup attempt, recorded before it was sent: its id is the threeDSServerTransID
    const journal = await ds.journal();
    assert.ok(journal.some((l) => l.dir === 'in' && l.messageType === 'AReq' && l.threeDSServerTransID === lookup));
    assert.ok(journal.some((l) => l.dir === 'out' && l.messageType === 'ARes' && l.dsTransID === f48.dsTransactionId));
  }
});

test('N and R: declined authentication_failed, nothing sent to the acquirer', async () => {
  for (const pan of [dsCard('not_authenticated'), dsCard('rejected'), dsCard('rejected', 'mastercard')]) {
    const { txn, f48 } = await pay(fallback, pan);
    assert.equal(txn.status, 'declined', pan);
    assert.equal(txn.reason, 'authentication_failed');
    assert.equal(f48, undefined, 'no authorization reached the acquirer');
  }
});

test('U: the fallback sends non-authenticated e-commerce (ECI 07 / 00, no AV); --refuse-unauthenticated declines, nothing sent', async () => {
  for (const [pan, eci] of [
    [dsCard('unavailable'), '07'],
    [dsCard('unavailable', 'mastercard'), '00'],
  ]) {
    const { txn, f48 } = await pay(fallback, pan);
    assert.equal(txn.status, 'accepted', pan);
    assert.equal(txn.payment_method_details.liability_shift, false);
    assert.equal(f48?.eci, eci);
    assert.equal(f48?.authenticationValue, undefined);
    assert.match(f48?.dsTransactionId ?? '', UUID);
    assert.equal(f48?.version, '2.2.0');
    const refused = await pay(refusing, pan);
    assert.equal(refused.txn.status, 'declined');
    assert.equal(refused.txn.reason, 'authentication_failed');
    assert.equal(refused.f48, undefined);
  }
});

test('a DS that never answers: unauthenticated fallback after THREEDS_TIMEOUT_MS, never authenticated; refused when the binding says so', async () => {
  const { txn, f48 } = await pay(fallback, dsCard('no_answer'));
  assert.equal(txn.status, 'accepted');
  assert.equal(f48?.eci, '07');
  assert.equal(f48?.authenticationValue, undefined);
  assert.equal(f48?.dsTransactionId, undefined, 'no DS id: no ARes came');
  const refused = await pay(refusing, dsCard('no_answer', 'mastercard'));
  assert.equal(refused.txn.status, 'declined');
  assert.equal(refused.f48, undefined);
});

test('a malformed ARes: an Erro goes to the DS naming the transaction, and the payment is not authenticated', async () => {
  const { txn, f48, lookup } = await pay(fallback, dsCard('malformed'));
  assert.equal(txn.status, 'accepted');
  assert.equal(f48?.eci, '07');
  assert.equal(f48?.authenticationValue, undefined);
  const erro = (await ds.journal()).find((l) => l.dir === 'in' && l.messageType === 'Erro' && l.threeDSServerTransID === lookup);
  assert.ok(erro, 'the DS got an Erro');
  assert.equal(erro.errorCode, '101');
  const refused = await pay(refusing, dsCard('malformed', 'mastercard'));
  assert.equal(refused.txn.status, 'declined');
  assert.equal(refused.f48, undefined);
});

test('the binding: https only (THREEDS_ALLOW_HTTP for tests), known brands, BIN, MCC, country; options need --directory-server', async () => {
  const strict = { ...t.svc.ctx, config: { ...t.svc.ctx.config, threeDs: { ...t.svc.ctx.config.threeDs, allowHttp: false } } };
  const base = {
    acquirer: live.host.url,
    terminalId: 'T3DS0001',
    cardAcceptorId: 'SHOP3DS',
    directoryServer: 'https://ds.example/ds',
    acquirerBin: '400551',
    mcc: '5999',
    merchantCountry: 'NL',
  };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ directoryServer: `${ds.url}/ds` }, /must be https/],
    [{ directoryServer: 'visa=https://a.example,bogus=https://b.example' }, /unknown brand "bogus"/],
    [{ directoryServer: 'not a url' }, /not a URL/],
    [{ acquirerBin: '12' }, /--acquirer-bin/],
    [{ mcc: '59' }, /--mcc/],
    [{ merchantCountry: 'XX' }, /--merchant-country/],
    [{ directoryServer: undefined }, /need --directory-server/],
    [{ dsClientCert: '/x.pem' }, /go together/],
  ];
  for (const [change, message] of cases)
    await assert.rejects(
      setAcquirer(strict, fallback.project_id, { ...base, ...change }),
      (e: Error) => message.test(e.message),
      String(message),
    );
  const r = await setAcquirer(strict, fallback.project_id, {
    ...base,
    directoryServer: `visa=https://v.example/ds,mastercard=https://m.example/ds`,
  });
  assert.deepEqual(r.three_ds?.directory_servers, { visa: 'https://v.example/ds', mastercard: 'https://m.example/ds' });
  assert.equal(r.three_ds?.requestor_id, fallback.project_id.replace(/-/g, ''), 'the requestor id defaults to the project id');
  assert.equal(r.three_ds?.requestor_name, 'Live 3DS shop');
  // bound to ds-host again for what follows
  await setAcquirer(t.svc.ctx, fallback.project_id, { ...base, directoryServer: `${ds.url}/ds` });
});

/**
 * A challenge as the customer's browser goes through it, with no script: Tender's page posts the
 * CReq to the ACS, the code is answered there (the ACS sends the RReq to Tender first), and the
 * CRes is brought back to Tender's notificationURL. `cres`: replaces the CRes the ACS handed back.
 */
async function challenge(project: { api_key: string }, pan: string, code: string, cres?: string) {
  const a = live.nextAmount();
  const p = await startPayment(t, pan, { key: project.api_key, orderOver: { amount: a } });
  const page = await fetch(p.redirect_url, { redirect: 'manual' });
  assert.equal(page.status, 200);
  const csp = page.headers.get('content-security-policy') ?? '';
  const toAcs = parseForm(await page.text(), p.redirect_url);
  assert.equal(toAcs.action, `${ds.url}/acs/challenge`);
  assert.ok(csp.includes(`form-action ${ds.url}`), csp);
  assert.equal(decodeBrowser(toAcs.fields.creq)?.messageType, 'CReq');
  const acs = await submitForm(toAcs, {});
  assert.equal(acs.status, 200);
  const codeForm = parseForm(await acs.text(), toAcs.action);
  const answered = await submitForm(codeForm, { code }, { name: 'action', value: 'submit' });
  assert.equal(answered.status, 200);
  const back = parseForm(await answered.text(), codeForm.action);
  assert.equal(back.action, `${p.redirect_url}cres`);
  const done = await submitForm(back, cres === undefined ? {} : { cres });
  assert.equal(done.status, 303);
  const order = await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: project.api_key });
  const txn = (order.body.transactions as Json[])[0];
  const sent = readHostJournal(live.dir).find((e) => Number(e.request.fields[4]) === a && ['0100', '0200'].includes(e.request.mti));
  return { txn, f48: sent ? parseSecureField(sent.request.fields[48]!) : undefined };
}

test("a challenge answered with the right code: the RReq's result is authorized with its ECI and authentication value", async () => {
  for (const [pan, eci] of [
    [dsCard('challenge'), '05'],
    [dsCard('challenge', 'mastercard'), '02'],
  ]) {
    const { txn, f48 } = await challenge(fallback, pan, DS_CHALLENGE_CODE);
    assert.equal(txn.status, 'accepted', pan);
    assert.equal(txn.payment_method_details.liability_shift, true);
    assert.equal(f48?.eci, eci);
    assert.match(f48?.authenticationValue ?? '', /^[A-Za-z0-9+/=]{28}$/);
    assert.match(f48?.dsTransactionId ?? '', UUID);
    assert.equal(f48?.version, '2.2.0');
  }
  const journal = await ds.journal();
  assert.ok(journal.some((l) => l.dir === 'in' && l.messageType === 'RRes' && l.resultsStatus === '01'));
});

test('a challenge answered with a wrong code: declined authentication_failed, nothing sent to the acquirer', async () => {
  const { txn, f48 } = await challenge(fallback, dsCard('challenge'), '000000');
  assert.equal(txn.status, 'declined');
  assert.equal(txn.reason, 'authentication_failed');
  assert.equal(f48, undefined);
});

test('a duplicate RReq is answered RRes again and changes nothing; a CRes that disagrees with the RReq, or is junk, fails', async () => {
  const before = (await ds.journal()).filter((l) => l.dir === 'in' && l.messageType === 'RRes').length;
  const twice = await challenge(fallback, dsCard('duplicate_rreq'), DS_CHALLENGE_CODE);
  assert.equal(twice.txn.status, 'accepted');
  const rres = (await ds.journal()).filter((l) => l.dir === 'in' && l.messageType === 'RRes').slice(before);
  assert.equal(rres.length, 2);
  assert.ok(rres.every((l) => l.resultsStatus === '01'));
  const junk = await challenge(fallback, dsCard('challenge'), DS_CHALLENGE_CODE, 'junk');
  assert.equal(junk.txn.status, 'declined');
  assert.equal(junk.txn.reason, 'authentication_failed');
  assert.equal(junk.f48, undefined);
});

test('an RReq Tender cannot take is answered Erro (200), never a 500: not JSON, another transaction, a bad status', async () => {
  const rreq = (body: string) =>
    fetch(`${t.url}/pay/3ds/rreq`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => ({
      status: r.status,
      m: (await r.json()) as Record<string, string>,
    }));
  const id = '0190a0b0-0000-7000-8000-000000000000';
  const base = {
    messageType: 'RReq',
    messageVersion: '2.2.0',
    threeDSServerTransID: id,
    dsTransID: id,
    acsTransID: id,
    messageCategory: '01',
    transStatus: 'Y',
  };
  for (const [body, code] of [
    ['{"messageType":', '101'],
    [JSON.stringify({ ...base, messageType: 'AReq' }), '101'],
    [JSON.stringify({ ...base, dsTransID: undefined }), '201'],
    [JSON.stringify(base), '301'],
  ]) {
    const r = await rreq(body);
    assert.equal(r.status, 200);
    assert.equal(r.m.messageType, 'Erro', body);
    assert.equal(r.m.errorCode, code, body);
    assert.equal(r.m.errorComponent, 'S');
  }
});

test("the portal shows the live project's directory servers read-only", async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  const page = await c.get(`/projects/${refusing.project_id}/settings/`);
  assert.equal(page.status, 200, page.text);
  assert.match(page.text, /3-D Secure directory servers/);
  assert.ok(page.text.includes(`<code>${ds.url}/ds</code>`), 'the DS URL is shown');
});

test('the ledger holds', async () => {
  assert.deepEqual((await checkLedger(t.db)).violations, []);
});
