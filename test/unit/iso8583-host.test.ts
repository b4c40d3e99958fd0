import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, Deframer, encode, frame, type Message } from '../../src/acquirer/iso8583/codec.ts';
import { expiryField, originalData, PROCESSING, secureField, transmissionTime } from '../../src/acquirer/iso8583/fields.ts';
import { startHost, SETTLEMENT_HEADER } from '../../src/acquirer/iso8583/host/server.ts';
import { applyFaultLine, delayOf, noFaults, take } from '../../src/acquirer/iso8583/host/faults.ts';

/** A bare terminal: one socket, requests written, answers collected in order. */
async function terminal(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  const d = new Deframer();
  const got: Message[] = [];
  const waiters: (() => void)[] = [];
  socket.on('data', (c) => {
    for (const b of d.push(c)) got.push(decode(b));
    waiters.splice(0).forEach((w) => w());
  });
  const closed = new Promise<void>((r) => socket.on('close', () => r()));
  return {
    got,
    closed,
    send: (m: Message) => socket.write(frame(encode(m))),
    raw: (b: Buffer) => socket.write(b),
    /** the next answer (waits for it) */
    async next(): Promise<Message> {
      while (!got.length) await new Promise<void>((r) => waiters.push(r));
      return got.shift()!;
    },
    end: () => socket.destroy(),
  };
}

let stan = 0;
const sentAt = transmissionTime(new Date());
const req = (mti: string, fields: Record<number, string>): Message => ({
  mti,
  fields: { 7: sentAt, 11: String(++stan).padStart(6, '0'), 41: 'TERM0001', 42: 'SHOP00000000001', 49: '978', ...fields },
});
const card = (pan: string, amount: number, mti = '0200') =>
  req(mti, {
    2: pan,
    3: PROCESSING.purchase,
    4: String(amount),
    14: expiryField('122099'),
    22: '012',
    37: `RRN${stan + 1}`,
    48: secureField({ eci: '07' }),
  });
const ref = (m: Message) => originalData({ mti: m.mti, stan: m.fields[11], transmission: m.fields[7] });

test('the host answers sign-on, sales, pre-authorizations, completions, refunds and voids, and writes the settlement file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'host-'));
  const host = await startHost({ port: 0, settlementDir: dir });
  const t = await terminal(host.port);
  try {
    // before sign-on, nothing is decided
    t.send(card('4111111111111111', 100));
    assert.equal((await t.next()).fields[39], '91');
    t.send(req('0800', { 70: '001' }));
    const signOn = await t.next();
    assert.deepEqual([signOn.mti, signOn.fields[39]], ['0810', '00']);
    t.send(req('0800', { 70: '301' }));
    assert.equal((await t.next()).fields[39], '00');

    // declines by reason, as the simulator's cards
    for (const [pan, code] of [
      ['4000000000000002', '05'],
      ['4000000000009995', '51'],
      ['4000000000000069', '54'],
      ['4000000000000127', 'N7'],
      ['4000000000000119', '96'],
    ]) {
      t.send(card(pan, 500));
      assert.equal((await t.next()).fields[39], code, pan);
    }
    // a sale, retransmitted: the same answer, settled once
    const sale = card('4111111111111111', 1000);
    t.send(sale);
    const a1 = await t.next();
    t.send(sale);
    const a2 = await t.next();
    assert.deepEqual([a1.mti, a1.fields[39], a1.fields[11]], ['0210', '00', sale.fields[11]]);
    assert.deepEqual(a2, a1);
    assert.match(a1.fields[38], /^[A-Z0-9]{6}$/);
    // a partial refund, then one more than is left
    t.send(req('0200', { 3: PROCESSING.refund, 4: '400', 37: 'RRNREF1', 90: ref(sale) }));
    assert.equal((await t.next()).fields[39], '00');
    t.send(req('0200', { 3: PROCESSING.refund, 4: '700', 37: 'RRNREF2', 90: ref(sale) }));
    assert.equal((await t.next()).fields[39], '13');

    // a pre-authorization captured in part; a second one voided
    const pre = card('5555555555554444', 2000, '0100');
    t.send(pre);
    const held = await t.next();
    assert.deepEqual([held.mti, held.fields[39]], ['0110', '00']);
    t.send(req('0220', { 4: '2500', 37: 'RRNCAP0', 90: ref(pre) }));
    assert.equal((await t.next()).fields[39], '13', 'more than was held');
    t.send(req('0220', { 4: '1500', 37: 'RRNCAP1', 90: ref(pre) }));
    const cap = await t.next();
    assert.deepEqual([cap.mti, cap.fields[39], cap.fields[38]], ['0230', '00', held.fields[38]]);
    const pre2 = card('4242424242424242', 300, '0100');
    t.send(pre2);
    assert.equal((await t.next()).fields[39], '00');
    const voidMsg = req('0400', { 4: '300', 90: ref(pre2) });
    t.send(voidMsg);
    assert.deepEqual([(await t.next()).mti], ['0410']);
    // its repeat as 0401 gets the same answer; a completion of the voided hold is refused
    t.send({ ...voidMsg, mti: '0401' });
    assert.equal((await t.next()).fields[39], '00');
    t.send(req('0220', { 4: '300', 37: 'RRNCAP2', 90: ref(pre2) }));
    assert.equal((await t.next()).fields[39], '12');
    // a STAN used twice on one day for different requests is a collision: 94, nothing decided
    t.send({ ...card('4111111111111111', 77), fields: { ...card('4111111111111111', 77).fields, 11: sale.fields[11] } });
    assert.equal((await t.next()).fields[39], '94');
    assert.equal(host.book.stats.collisions, 1);

    const day = new Date().toISOString().slice(0, 10);
    const lines = readFileSync(join(dir, `settlement-${day}.csv`), 'utf8')
      .trim()
      .split('\n');
    assert.equal(lines[0], SETTLEMENT_HEADER);
    const rows = lines.slice(1).map((l) => l.split(','));
    assert.deepEqual(
      rows.map((r) => [r[1], r[2], r[3], r[4], r[5], r[6]]),
      [
        ['TERM0001', sale.fields[37], sale.fields[11], 'sale', '1000', 'EUR'],
        ['TERM0001', 'RRNREF1', rows[1][3], 'refund', '400', 'EUR'],
        ['TERM0001', 'RRNCAP1', rows[2][3], 'completion', '1500', 'EUR'],
      ],
    );
    assert.equal(rows[0][7], a1.fields[38]);
  } finally {
    t.end();
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('fault switches: refused sign-on, dropped, doubled and delayed answers, a cut connection; set at run time by admin lines', async () => {
  const host = await startHost({ port: 0, adminPort: 0, faults: { refuseSignOn: true } });
  const admin = await terminal(host.adminPort!);
  const adminLine = async (line: string) => {
    const s = net.connect(host.adminPort!, '127.0.0.1');
    s.write(line + '\n');
    const reply = await new Promise<string>((r) => s.once('data', (c) => r(c.toString().trim())));
    s.destroy();
    return reply;
  };
  admin.end();
  const t = await terminal(host.port);
  try {
    t.send(req('0800', { 70: '001' }));
    assert.equal((await t.next()).fields[39], '91');
    assert.equal(await adminLine('refuse-sign-on off'), 'ok');
    assert.match(await adminLine('drop x'), /^error drop takes a whole number/);
    assert.match(await adminLine('explode 1'), /^error unknown switch/);
    t.send(req('0800', { 70: '001' }));
    assert.equal((await t.next()).fields[39], '00');

    assert.equal(await adminLine('drop 1'), 'ok');
    const lost = card('4111111111111111', 10);
    t.send(lost);
    const kept = card('4111111111111111', 11);
    t.send(kept);
    // the first answer never comes: the first to arrive is the second request's
    assert.equal((await t.next()).fields[11], kept.fields[11]);
    // asked again, the dropped one is answered from the host's memory, not decided twice
    t.send(lost);
    assert.equal((await t.next()).fields[11], lost.fields[11]);
    assert.equal(host.book.stats.retransmissions, 1);

    assert.equal(await adminLine('duplicate 1'), 'ok');
    const twice = card('4111111111111111', 12);
    t.send(twice);
    const [x, y] = [await t.next(), await t.next()];
    assert.deepEqual(x, y);

    assert.equal(await adminLine('delay 50'), 'ok');
    t.send(card('4111111111111111', 13));
    assert.equal((await t.next()).fields[39], '00');
    assert.equal(await adminLine('clear'), 'ok');

    const stats = JSON.parse(await adminLine('stats'));
    assert.equal(stats.faults.delayMs, 0);
    assert.equal(stats.connections, 1);

    // a malformed message is dropped and the connection goes on serving
    t.raw(frame(Buffer.from('9999garbage-garbage')));
    t.send(req('0800', { 70: '301' }));
    assert.equal((await t.next()).fields[70], '301');

    assert.equal(await adminLine('cut 1'), 'ok');
    t.send(card('4111111111111111', 14));
    await t.closed;
    // a broken length header closes the connection too
    const t2 = await terminal(host.port);
    t2.raw(Buffer.from([0, 0]));
    await t2.closed;
  } finally {
    t.end();
    await host.close();
  }
});

test('a restarted host remembers from its journal: holds, answers given and STANs used; lines a kill cut off are written', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'host-'));
  const signOn = async (t: Awaited<ReturnType<typeof terminal>>) => {
    t.send(req('0800', { 70: '001' }));
    assert.equal((await t.next()).fields[39], '00');
  };
  let host = await startHost({ port: 0, settlementDir: dir });
  let t = await terminal(host.port);
  try {
    await signOn(t);
    const sale = card('4111111111111111', 1000);
    t.send(sale);
    const sold = await t.next();
    const pre = card('4111111111111111', 900, '0100');
    t.send(pre);
    const held = await t.next();
    assert.deepEqual([sold.fields[39], held.fields[39]], ['00', '00']);
    t.end();
    await host.close();

    host = await startHost({ port: 0, settlementDir: dir });
    t = await terminal(host.port);
    await signOn(t);
    // the hold is still there to complete; the sale asked again gets its first answer, settled once
    t.send(req('0220', { 4: '900', 37: 'RRNCAPR', 90: ref(pre) }));
    const cap = await t.next();
    assert.deepEqual([cap.fields[39], cap.fields[38]], ['00', held.fields[38]]);
    t.send(sale);
    assert.deepEqual(await t.next(), sold);
    // another request on a STAN used before the restart is a collision
    t.send({ ...card('4111111111111111', 5), fields: { ...card('4111111111111111', 5).fields, 11: pre.fields[11] } });
    assert.equal((await t.next()).fields[39], '94');
    assert.deepEqual([host.book.stats.retransmissions, host.book.stats.collisions], [1, 1]);
    t.end();
    await host.close();

    // the journal keeps no full PAN; a settlement line lost to a kill after the journal write comes back at start
    const journal = readFileSync(join(dir, 'host-journal.jsonl'), 'utf8');
    assert.doesNotMatch(journal, /4111111111111111/);
    assert.match(journal, /411111\*{6}1111/);
    assert.deepEqual(
      journal
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).result),
      ['decided', 'decided', 'decided', 'retransmission', 'collision'],
    );
    const file = join(dir, `settlement-${new Date().toISOString().slice(0, 10)}.csv`);
    const full = readFileSync(file, 'utf8');
    writeFileSync(file, full.trim().split('\n').slice(0, -1).join('\n') + '\n');
    host = await startHost({ port: 0, settlementDir: dir });
    assert.equal(readFileSync(file, 'utf8'), full);
    assert.deepEqual(
      full
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',')[4]),
      ['sale', 'completion'],
    );
  } finally {
    t.end();
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('fault rates roll on a seeded generator: the same seed, the same faults; delay-rate delays a share of the answers', () => {
  const run = (seed: string) => {
    const f = noFaults();
    for (const line of [`seed ${seed}`, 'drop-rate 0.2', 'cut-rate 0.1', 'delay 100', 'delay-rate 0.3'])
      assert.equal(applyFaultLine(f, line), 'ok');
    return Array.from({ length: 200 }, () => `${take(f, 'cut') ? 'c' : ''}${take(f, 'drop') ? 'd' : ''}${delayOf(f) ? 'l' : ''}`).join(',');
  };
  assert.equal(run('42'), run('42'));
  assert.notEqual(run('42'), run('43'));
  const hits = run('7').split(',');
  const share = (c: string) => hits.filter((h) => h.includes(c)).length / hits.length;
  // 200 rolls: each share lands near its rate
  assert.ok(share('d') > 0.08 && share('d') < 0.35, `drop ${share('d')}`);
  assert.ok(share('l') > 0.15 && share('l') < 0.45, `delay ${share('l')}`);
  assert.match(applyFaultLine(noFaults(), 'delay-rate 2'), /^error delay-rate takes a probability/);
  const f = noFaults();
  applyFaultLine(f, 'delay 50');
  assert.equal(delayOf(f), 50, 'without delay-rate every answer is delayed');
});

test('dispute stages: raised in order on the admin words, journaled, written as settlement lines, remembered after a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'host-disputes-'));
  let host = await startHost({ port: 0, settlementDir: dir });
  const t = await terminal(host.port);
  try {
    t.send(req('0800', { 70: '001' }));
    await t.next();
    const sale = card('4111111111111111', 1200);
    t.send(sale);
    assert.equal((await t.next()).fields[39], '00');
    const rrn = sale.fields[37];
    const id = host.disputes.apply(`chargeback TERM0001 ${rrn} 1000 10.4`).replace(/^ok /, '');
    assert.match(id, /^DSP\d{9}$/);
    assert.match(host.disputes.apply(`chargeback TERM0001 ${rrn} 201`), /1\.\.200/);
    assert.equal(host.disputes.apply(`second-presentment ${id}`), `ok ${id}`);
    assert.match(host.disputes.apply(`second-presentment ${id}`), /already had/);
    t.end();
    await host.close();

    const file = join(dir, `settlement-${new Date().toISOString().slice(0, 10)}.csv`);
    const full = readFileSync(file, 'utf8');
    // the last stage's line cut off by a kill: written again at start, and the dispute goes on
    writeFileSync(file, full.trim().split('\n').slice(0, -1).join('\n') + '\n');
    host = await startHost({ port: 0, settlementDir: dir });
    assert.equal(readFileSync(file, 'utf8'), full);
    assert.equal(host.disputes.apply(`pre-arbitration ${id}`), `ok ${id}`);
    assert.match(host.disputes.apply(`chargeback TERM0001 ${rrn}`), /^ok DSP000000002$/, 'the rest of the sale, a new id');
    const rows = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    assert.deepEqual(
      rows.map((r) => [r[2], r[4], r[5], r[8], r[9]]),
      [
        [rrn, 'sale', '1200', '', ''],
        [rrn, 'chargeback', '1000', id, '10.4'],
        [rrn, 'second_presentment', '1000', id, '10.4'],
        [rrn, 'pre_arbitration', '1000', id, '10.4'],
        [rrn, 'chargeback', '200', 'DSP000000002', '4837'],
      ],
    );
    assert.ok(rows.every((r) => r.length === 10));
  } finally {
    t.end();
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
