// Masking that follows the data (issue 28, finding 9): card numbers in any of the spellings people
// and tools use, in paths, the Host header and other headers, and anything shaped like an API key
// or webhook secret never reach the service log; order ids stay whole, so the log can be searched.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createLogger, maskDigits } from '../../src/log.ts';
import { payOrder } from '../helpers/pay.ts';
import { moneyClient } from '../helpers/money.ts';

const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

let t: TestService;
before(async () => (t = await startTestService({ logStream })));
after(async () => t?.close());

const PAN = '4111111111111111';
const SPELLINGS = [
  '4111%201111%201111%201111',
  '4111.1111.1111.1111',
  '4111_1111_1111_1111',
  '4111+1111+1111+1111',
  '%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31',
  '4111-1111-1111-1111',
  '4111%2D1111%2D1111%2D1111',
];

/** A raw HTTP/1.1 request with the headers given as sent (Host included), answered status. */
function raw(path: string, headers: Record<string, string>): Promise<number> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'GET', headers, setHost: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The digits of every card-number-like spelling, and the spellings themselves. */
const leaks = (text: string) =>
  [PAN, ...SPELLINGS].filter(
    (s) =>
      text.includes(s) ||
      text
        .replace(/%3(\d)/g, '$1')
        .replace(/[^0-9]/g, '')
        .includes(PAN),
  );

test('card numbers in paths (spaces, %20, dots, underscores, pluses, %-encoded digits, dashes) and in the Host header are masked', async () => {
  lines.length = 0;
  const host = new URL(t.url).host;
  for (const s of SPELLINGS) await raw(`/pay/${s}/`, { host });
  await raw('/v1/orders/', { host: `${PAN}.shop.example` });
  await raw('/v1/orders/', { host: `4111-1111-1111-1111.example:${new URL(t.url).port}` });
  const log = lines.join('');
  assert.ok(log.length > 0 && lines.length >= SPELLINGS.length, 'the requests were logged');
  assert.deepEqual(leaks(log), [], 'no card number in the log');
  assert.ok(log.includes('[masked]'));
});

test('an API key or webhook secret pasted into a path is masked; order ids stay whole', async () => {
  lines.length = 0;
  const host = new URL(t.url).host;
  const key = t.project.api_key;
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const id = '01a21511-8176-7123-9456-aabbccddeeff';
  await raw(`/v1/orders/${key}/`, { host });
  await raw(`/v1/${secret}/`, { host });
  await raw(`/v1/orders/${id}/`, { host });
  const log = lines.join('');
  assert.ok(!log.includes(key), 'the API key is in the log');
  assert.ok(!log.includes(key.slice(5)), 'part of the API key is in the log');
  assert.ok(!log.includes(secret.slice(6, 30)), 'the webhook secret is in the log');
  assert.ok(log.includes(id), 'the order id is kept');
});

test('headers logged by the service are masked the same way; credentials are redacted', () => {
  const out: string[] = [];
  const log = createLogger(
    'info',
    new Writable({
      write(chunk, _enc, done) {
        out.push(String(chunk));
        done();
      },
    }),
  );
  log.info({ headers: { 'x-card': '4111 1111 1111 1111', authorization: 'Basic abc', 'x-key': t.project.api_key } }, 'headers');
  const text = out.join('');
  assert.deepEqual(leaks(text), []);
  assert.ok(!text.includes('Basic abc'));
  assert.ok(!text.includes(t.project.api_key));
  assert.equal(maskDigits('a 4111 1111 1111 1111 b'), 'a [masked] b');
});

test('payment events are log lines with project, order, amount and outcome; none holds the card, its CVC or the holder', async () => {
  lines.length = 0;
  const money = moneyClient(() => t);
  const sale = await payOrder(t, { amount: 1250 });
  const declined = await payOrder(t, { amount: 1300 }, { pan: '4000000000009995' });
  const preauth = await money.preauth();
  assert.equal((await money.capture(preauth)).status, 201);
  assert.equal((await money.refund(sale, 250)).status, 201);
  const lost = await payOrder(t, { amount: 1400 }, { pan: '4000000000001026' });
  assert.equal(lost.status, 'processing');
  assert.equal((await money.runJobs('PT1M', t.project.api_key)).status, 200);

  const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => /^payment |^authorization /.test(String(l.msg)));
  const find = (msg: string, orderId: string) => {
    const e = events.find((x) => x.msg === msg && (x.order_id === orderId || x.of_order_id === orderId));
    assert.ok(e, `"${msg}" for ${orderId} in ${JSON.stringify(events.map((x) => x.msg))}`);
    assert.equal(e.project_id, t.project.project_id);
    assert.equal(e.mode, 'test');
    return e;
  };
  const authorized = find('payment authorized', sale.id);
  assert.equal(authorized.amount, 1250);
  assert.equal(authorized.currency, 'EUR');
  assert.equal(authorized.method, 'credit-card');
  assert.ok(['accepted', 'completed'].includes(String(authorized.outcome)), String(authorized.outcome));
  const decline = find('payment declined', declined.id);
  assert.equal(decline.amount, 1300);
  assert.equal(decline.outcome, 'declined');
  assert.equal(decline.reason, 'insufficient_funds');
  find('payment captured', preauth.id);
  assert.equal(find('payment refunded', sale.id).amount, 250);
  assert.equal(find('payment reversed', lost.id).amount, 1400);
  assert.equal(find('payment declined', lost.id).reason, 'processing_error');

  const log = lines.join('');
  for (const pan of ['4111111111111111', '4000000000009995', '4000000000001026'])
    assert.ok(!log.replace(/[^0-9]/g, ' ').includes(pan), `card number ${pan} in the log`);
  assert.ok(!/ada|lovelace/i.test(log), 'the cardholder name is in the log');
  assert.ok(!/"cvc"|"cvv"|"pan"|"expiry"/i.test(log), 'a card field is in the log');
});
