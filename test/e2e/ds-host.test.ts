// `tender ds-host` as its own process (issue 43): card ranges, the AReq's outcomes by card number,
// Erro for bad messages, the ACS's challenge with its RReq (once and twice), the 3DS Method, and
// the fault switches of its admin port. Tender's side of the exchanges is in three-ds-live*.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { startDsHostProcess, type DsHostProcess } from '../helpers/ds-host.ts';
import { dsCard, DS_CHALLENGE_CODE } from '../../src/acquirer/threeds/host/cards.ts';
import { decodeBrowser, encodeBrowser } from '../../src/acquirer/threeds/messages.ts';

let ds: DsHostProcess;
/** a 3DS Server's threeDSServerURL: the RReqs it got, answered RRes */
let server: Server;
let serverUrl = '';
const rreqs: Record<string, unknown>[] = [];

before(async () => {
  ds = await startDsHostProcess();
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const m = JSON.parse(body) as Record<string, unknown>;
      rreqs.push(m);
      const { threeDSServerTransID, dsTransID, acsTransID, messageVersion } = m;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ messageType: 'RRes', messageVersion, threeDSServerTransID, dsTransID, acsTransID, resultsStatus: '01' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rreq`;
});
after(async () => {
  ds?.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

const areq = (pan: string, extra: Record<string, unknown> = {}) => ({
  messageType: 'AReq',
  messageVersion: '2.2.0',
  threeDSServerTransID: randomUUID(),
  threeDSServerRefNumber: 'TENDER',
  threeDSServerURL: serverUrl,
  notificationURL: 'http://127.0.0.1:9/notify',
  threeDSRequestorID: 'req-1',
  threeDSRequestorName: 'Shop',
  threeDSCompInd: 'U',
  deviceChannel: '02',
  messageCategory: '01',
  acctNumber: pan,
  cardExpiryDate: '3012',
  acquirerBIN: '400551',
  acquirerMerchantID: 'SHOP0001',
  mcc: '5999',
  merchantCountryCode: '250',
  merchantName: 'Shop',
  purchaseAmount: '1250',
  purchaseCurrency: '978',
  purchaseExponent: '2',
  purchaseDate: '20261202120000',
  ...extra,
});

const post = async (body: unknown, signal?: AbortSignal) => {
  const res = await fetch(`${ds.url}/ds`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
  return { status: res.status, text: await res.text() };
};
const message = async (body: unknown) => JSON.parse((await post(body)).text) as Record<string, unknown>;
const form = async (path: string, fields: Record<string, string>) => {
  const res = await fetch(`${ds.url}${path}`, { method: 'POST', body: new URLSearchParams(fields) });
  return { status: res.status, html: await res.text() };
};
const hiddenValue = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

test('PReq: the card ranges with the serialNum; the same serialNum again is nothing new; a bumped one sends them again', async () => {
  const preq = { messageType: 'PReq', messageVersion: '2.2.0', threeDSServerTransID: randomUUID(), threeDSServerRefNumber: 'TENDER' };
  const pres = await message(preq);
  assert.equal(pres.messageType, 'PRes');
  assert.equal(pres.serialNum, '1');
  const ranges = pres.cardRangeData as Record<string, string>[];
  assert.equal(ranges.length, 3);
  assert.ok(ranges.every((r) => r.acsStartProtocolVersion === '2.2.0' && r.actionInd === 'A'));
  assert.equal(ranges.filter((r) => r.threeDSMethodURL).length, 1, 'one range runs the 3DS Method');
  assert.deepEqual((await message({ ...preq, serialNum: '1' })).cardRangeData, []);
  assert.equal(await ds.admin('serial'), 'ok 2');
  const again = await message({ ...preq, serialNum: '1' });
  assert.equal(again.serialNum, '2');
  assert.equal((again.cardRangeData as unknown[]).length, 3);
});

test('AReq outcomes by card number: Y, A, N, R, U with their ECI; a mandated challenge (04) on a frictionless card is C', async () => {
  const cases: [string, string, string, string | undefined][] = [
    [dsCard('frictionless'), 'Y', '05', 'av'],
    [dsCard('frictionless', 'mastercard'), 'Y', '02', 'av'],
    [dsCard('attempts'), 'A', '06', 'av'],
    [dsCard('attempts', 'mastercard'), 'A', '01', 'av'],
    [dsCard('not_authenticated'), 'N', '07', undefined],
    [dsCard('rejected'), 'R', '07', undefined],
    [dsCard('unavailable', 'mastercard'), 'U', '00', undefined],
  ];
  for (const [pan, status, eci, av] of cases) {
    const req = areq(pan);
    const ares = await message(req);
    assert.equal(ares.messageType, 'ARes', pan);
    assert.equal(ares.threeDSServerTransID, req.threeDSServerTransID);
    assert.equal(ares.transStatus, status, pan);
    assert.equal(ares.eci, eci, pan);
    assert.equal(typeof ares.authenticationValue === 'string', Boolean(av), pan);
    assert.ok(typeof ares.dsTransID === 'string' && typeof ares.acsTransID === 'string');
  }
  const mandated = await message(areq(dsCard('frictionless'), { threeDSRequestorChallengeInd: '04' }));
  assert.equal(mandated.transStatus, 'C');
});

test('bad messages are answered Erro: not JSON (101), a version not spoken (102), a field missing (201) or malformed (203), a PAN in no range (305)', async () => {
  const cases: [unknown, string, string][] = [
    ['{"messageType":', '101', 'not JSON'],
    [{ ...areq(dsCard('frictionless')), messageVersion: '2.1.0' }, '102', 'messageVersion'],
    [{ ...areq(dsCard('frictionless')), acquirerBIN: undefined }, '201', 'acquirerBIN'],
    [{ ...areq(dsCard('frictionless')), threeDSServerTransID: 'not-a-uuid' }, '203', 'threeDSServerTransID'],
    [areq('4111111111111111'), '305', 'acctNumber'],
    [{ messageType: 'CRes', messageVersion: '2.2.0' }, '101', 'messageType'],
  ];
  for (const [body, code, detail] of cases) {
    const { status, text } = await post(body);
    assert.equal(status, 200);
    const e = JSON.parse(text) as Record<string, string>;
    assert.equal(e.messageType, 'Erro', text);
    assert.equal(e.errorCode, code, text);
    assert.equal(e.errorComponent, 'D');
    assert.ok(e.errorDetail.includes(detail), text);
  }
  // an Erro from the 3DS Server is taken and journaled
  const id = randomUUID();
  await post({
    messageType: 'Erro',
    messageVersion: '2.2.0',
    threeDSServerTransID: id,
    errorCode: '203',
    errorComponent: 'S',
    errorDetail: 'x',
  });
  assert.ok((await ds.journal()).some((l) => l.dir === 'in' && l.messageType === 'Erro' && l.threeDSServerTransID === id));
});

test('a malformed ARes and an AReq never answered, by card and by fault switch', async () => {
  const bad = await post(areq(dsCard('malformed')));
  assert.throws(() => JSON.parse(bad.text));
  await assert.rejects(post(areq(dsCard('no_answer')), AbortSignal.timeout(300)), /abort|timeout/i);
  assert.equal(await ds.admin('malformed 1'), 'ok');
  const switched = await post(areq(dsCard('frictionless')));
  assert.throws(() => JSON.parse(switched.text), 'the next ARes is malformed');
  assert.equal((await message(areq(dsCard('frictionless')))).transStatus, 'Y', 'then answers as before');
  assert.equal(await ds.admin('no-answer 1'), 'ok');
  await assert.rejects(post(areq(dsCard('frictionless')), AbortSignal.timeout(300)));
  assert.equal((await message(areq(dsCard('frictionless')))).transStatus, 'Y');
  assert.match(await ds.admin('no-answer x'), /^error no-answer takes/);
  assert.match(await ds.admin('bogus 1'), /^error unknown switch/);
});

/** A challenge through the ACS's pages: the CReq, the code, the RReqs to the 3DS Server and the CRes handed back. */
async function challenge(pan: string, code: string) {
  const req = areq(pan);
  const ares = await message(req);
  assert.equal(ares.transStatus, 'C');
  assert.equal(ares.acsURL, `${ds.url}/acs/challenge`);
  const creq = {
    messageType: 'CReq',
    messageVersion: '2.2.0',
    threeDSServerTransID: req.threeDSServerTransID,
    acsTransID: ares.acsTransID,
    challengeWindowSize: '05',
  };
  const page = await form('/acs/challenge', { creq: encodeBrowser(creq), threeDSSessionData: 'session-1' });
  assert.equal(page.status, 200);
  assert.match(page.html, /<label for="code">/);
  const before = rreqs.length;
  const done = await form('/acs/challenge/answer', {
    acsTransID: String(ares.acsTransID),
    threeDSSessionData: 'session-1',
    code,
    action: 'submit',
  });
  assert.equal(done.status, 200);
  assert.match(done.html, /action="http:\/\/127\.0\.0\.1:9\/notify"/);
  assert.equal(hiddenValue(done.html, 'threeDSSessionData'), 'session-1');
  const cres = decodeBrowser(hiddenValue(done.html, 'cres'));
  const sent = rreqs.slice(before);
  return { req, ares, cres, sent };
}

test('a challenge: the right code is Y in the RReq and the CRes, a wrong one N; a finished challenge cannot be answered again', async () => {
  const right = await challenge(dsCard('challenge'), DS_CHALLENGE_CODE);
  assert.equal(right.cres?.transStatus, 'Y');
  assert.equal(right.cres?.messageType, 'CRes');
  assert.equal(right.sent.length, 1);
  assert.equal(right.sent[0].transStatus, 'Y');
  assert.equal(right.sent[0].eci, '05');
  assert.equal(right.sent[0].threeDSServerTransID, right.req.threeDSServerTransID);
  assert.equal(typeof right.sent[0].authenticationValue, 'string');
  const wrong = await challenge(dsCard('challenge', 'mastercard'), '000000');
  assert.equal(wrong.cres?.transStatus, 'N');
  assert.equal(wrong.sent[0].transStatus, 'N');
  assert.equal(wrong.sent[0].eci, '00');
  const again = await form('/acs/challenge/answer', { acsTransID: String(right.ares.acsTransID), code: DS_CHALLENGE_CODE });
  assert.equal(again.status, 400);
  const journal = await ds.journal();
  assert.ok(journal.some((l) => l.dir === 'in' && l.messageType === 'RRes' && l.threeDSServerTransID === right.req.threeDSServerTransID));
  const bad = await form('/acs/challenge', { creq: 'not base64 json!' });
  assert.equal(bad.status, 400);
});

test('a duplicate RReq: the card whose ACS sends its RReq twice, and the switch that does it once for any challenge', async () => {
  const twice = await challenge(dsCard('duplicate_rreq'), DS_CHALLENGE_CODE);
  assert.equal(twice.sent.length, 2);
  assert.deepEqual(twice.sent[0], twice.sent[1]);
  assert.equal(await ds.admin('duplicate-rreq 1'), 'ok');
  assert.equal((await challenge(dsCard('challenge'), DS_CHALLENGE_CODE)).sent.length, 2);
  assert.equal((await challenge(dsCard('challenge'), DS_CHALLENGE_CODE)).sent.length, 1);
});

test('the 3DS Method range: Y once the method ran for the transaction (threeDSCompInd Y), a challenge otherwise', async () => {
  const pan = dsCard('method');
  const id = randomUUID();
  const data = encodeBrowser({ threeDSServerTransID: id, threeDSMethodNotificationURL: 'http://127.0.0.1:9/method' });
  const page = await form('/acs/method', { threeDSMethodData: data });
  assert.equal(page.status, 200);
  assert.match(page.html, /action="http:\/\/127\.0\.0\.1:9\/method"/);
  assert.deepEqual(decodeBrowser(hiddenValue(page.html, 'threeDSMethodData')), { threeDSServerTransID: id });
  assert.equal((await message(areq(pan, { threeDSServerTransID: id, threeDSCompInd: 'Y' }))).transStatus, 'Y');
  assert.equal((await message(areq(pan, { threeDSCompInd: 'N' }))).transStatus, 'C');
  assert.equal((await form('/acs/method', { threeDSMethodData: 'junk' })).status, 400);
});
