import { unauthenticated } from '../../src/acquirer/authenticator.ts';
import { selfSigned } from '../helpers/self-signed.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { decode, Deframer, encode, frame, type Message } from '../../src/acquirer/iso8583/codec.ts';
import { expiryField, PROCESSING, secureField, transmissionTime } from '../../src/acquirer/iso8583/fields.ts';
import { startHost } from '../../src/acquirer/iso8583/host/server.ts';
import { Link, LinkUnknown, parseHostUrl } from '../../src/acquirer/iso8583/link.ts';
import { IsoOperations, parseReference } from '../../src/acquirer/iso8583/operations.ts';
import type { JournalEntry, LinkJournal } from '../../src/acquirer/iso8583/journal.ts';

let stan = 500;
const sale = (terminal = 'TERM0001'): Message => {
  const s = String(++stan).padStart(6, '0');
  return {
    mti: '0200',
    fields: {
      2: '4111111111111111',
      3: PROCESSING.purchase,
      4: '1000',
      7: transmissionTime(new Date()),
      11: s,
      14: expiryField('122099'),
      37: `TST000${s}`,
      41: terminal,
      42: 'SHOP',
      48: secureField({ eci: '07' }),
      49: '978',
    },
  };
};

const links: Link[] = [];
const open = (url: string, extra: Partial<ConstructorParameters<typeof Link>[0]> = {}) => {
  const warnings: string[] = [];
  const link = new Link({
    url,
    timeoutMs: 1000,
    backoffMs: [20, 100],
    log: (level, msg) => level === 'warn' && warnings.push(msg),
    ...extra,
  });
  links.push(link);
  return { link, warnings };
};
test.after(() => Promise.all(links.map((l) => l.close())));

/** Waits for a condition the link reaches by itself (sign-on, reconnect), bounded. */
async function until(what: string, ok: () => boolean) {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(ok(), what);
}

test('addresses: iso8583:// and iso8583s:// only', () => {
  assert.deepEqual(parseHostUrl('iso8583://127.0.0.1:7000'), { secure: false, host: '127.0.0.1', port: 7000 });
  assert.deepEqual(parseHostUrl('iso8583s://acq.example:443'), { secure: true, host: 'acq.example', port: 443 });
  for (const bad of ['http://x:1', 'iso8583://x', 'iso8583://x:0', 'iso8583://x:70000'])
    assert.throws(() => parseHostUrl(bad), /expected iso8583:\/\/HOST:PORT/);
});

test('one connection carries many requests at once, matched by terminal and STAN; state shows the link', async () => {
  const host = await startHost({ port: 0 });
  const { link } = open(`iso8583://127.0.0.1:${host.port}`);
  try {
    const reqs = [sale('TERM0001'), sale('TERM0002'), sale('TERM0001')];
    const answers = await Promise.all(reqs.map((m) => link.request(m)));
    assert.deepEqual(
      answers.map((a) => [a.fields[41].trim(), a.fields[11], a.fields[39]]),
      reqs.map((r) => [r.fields[41], r.fields[11], '00']),
    );
    assert.equal(host.connections(), 1);
    const s = link.state();
    assert.deepEqual([s.connected, s.signed_on, s.in_flight], [true, true, 0]);
  } finally {
    await host.close();
  }
});

test('a dropped answer makes the outcome unknown; doubled answers and answers to no request are dropped; others go on', async () => {
  const host = await startHost({ port: 0, adminPort: 0 });
  const { link, warnings } = open(`iso8583://127.0.0.1:${host.port}`);
  try {
    host.faults.drop = 1;
    const lost = link.request(sale());
    const other = link.request(sale());
    await assert.rejects(lost, (e) => e instanceof LinkUnknown && /no answer from the acquirer within \d+ ms/.test(e.message));
    assert.equal((await other).fields[39], '00');
    host.faults.duplicate = 1;
    assert.equal((await link.request(sale())).fields[39], '00');
    assert.equal((await link.request(sale())).fields[39], '00', 'the doubled answer disturbed nothing');
    await until('the doubled answer was logged and dropped', () => link.state().dropped_messages >= 1);
    assert.ok(warnings.some((w) => /answer to no pending request/.test(w)));
  } finally {
    await host.close();
  }
});

test('malformed answers and broken length headers from a host are logged and dropped; the link reconnects', async () => {
  // a host that answers garbage first, then a broken header, then behaves
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    const d = new Deframer();
    s.on('data', (c) => {
      for (const b of d.push(c)) {
        const m = decode(b);
        const fields: Record<number, string> = { 7: m.fields[7], 11: m.fields[11], 39: '00' };
        for (const n of [41, 70]) if (m.fields[n]) fields[n] = m.fields[n];
        const reply = frame(
          encode({
            mti: m.mti === '0800' ? '0810' : '0210',
            fields,
          }),
        );
        if (m.mti === '0800') s.write(reply);
        else if (connections === 1) {
          s.write(frame(Buffer.from('9999garbage-garbage'))); // unknown MTI: dropped
          s.write(Buffer.from([0, 0])); // length 0: the stream is broken, the link starts over
        } else s.write(reply);
      }
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { link, warnings } = open(`iso8583://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
  try {
    await assert.rejects(link.request(sale()), LinkUnknown);
    assert.ok(warnings.some((w) => /malformed message/.test(w)));
    assert.ok(warnings.some((w) => /broken stream/.test(w)));
    await until('signed on again', () => link.state().signed_on && connections === 2);
    assert.equal((await link.request(sale())).fields[39], '00');
    assert.ok(link.state().reconnects >= 1);
  } finally {
    await link.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('a refused sign-on keeps payments out until the host accepts; a cut connection is reconnected', async () => {
  const host = await startHost({ port: 0, faults: { refuseSignOn: true } });
  const { link } = open(`iso8583://127.0.0.1:${host.port}`);
  try {
    await assert.rejects(link.request(sale(), 200), /not signed on/);
    host.faults.refuseSignOn = false;
    await until('signed on', () => link.state().signed_on);
    host.faults.cut = 1;
    await assert.rejects(link.request(sale()), (e) => e instanceof LinkUnknown && /connection to the acquirer was lost/.test(e.message));
    await until('signed on again', () => link.state().signed_on);
    assert.equal((await link.request(sale())).fields[39], '00');
  } finally {
    await host.close();
  }
});

test('TLS when the address is iso8583s://', async () => {
  const { dir, cert, key } = selfSigned('iso-tls-');
  const host = await startHost({ port: 0, tls: { cert: readFileSync(cert), key: readFileSync(key) } });
  const { link } = open(`iso8583s://127.0.0.1:${host.port}`, { tls: { ca: readFileSync(cert) } });
  try {
    assert.equal((await link.request(sale())).fields[39], '00');
    // a plain link to a TLS host never signs on
    const { link: plain } = open(`iso8583://127.0.0.1:${host.port}`);
    await assert.rejects(plain.request(sale(), 300), /not signed on/);
  } finally {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A journal in memory with the same rules as the database's (STANs per terminal and day, first row wins). */
function memoryJournal(): LinkJournal & { rows: Map<string, JournalEntry> } {
  const stans = new Map<string, number>();
  const rows = new Map<string, JournalEntry>();
  return {
    rows,
    nextStan: async (t, d) => {
      const n = (stans.get(`${t}|${d}`) ?? 0) + 1;
      stans.set(`${t}|${d}`, n);
      return n;
    },
    find: async (p, op) => rows.get(`${p}|${op}`),
    record: async (e) => rows.get(`${e.project_id}|${e.operation_id}`) ?? (rows.set(`${e.project_id}|${e.operation_id}`, e), e),
    answered: async (p, op, code, auth) => {
      const e = rows.get(`${p}|${op}`);
      if (e) rows.set(`${p}|${op}`, { ...e, response_code: code, authorization_code: auth });
    },
  };
}

test('operations: the same operation id is the same message; a lost authorization is reversed by its operation id; inquiries', async () => {
  const host = await startHost({ port: 0 });
  const { link } = open(`iso8583://127.0.0.1:${host.port}`);
  const journal = memoryJournal();
  const ops = new IsoOperations(link, journal, { acquirer: 'x', terminal_id: 'TOPS0001', card_acceptor_id: 'SHOP' });
  const base = { project_id: 'p1', transaction_id: 't1', amount: 5000, currency: 'EUR', now: new Date() };
  const card = { pan: '4111111111111111', expiry: '122099', brand: 'visa' };
  // a live project with no directory server bound: non-authenticated e-commerce
  const three = await unauthenticated.authenticate3ds({ ...base, operation_id: 'op-0', idempotency_key: 'k', card });
  assert.deepEqual(three, { trans_status: 'U', eci: '07', liability_shift: false });
  try {
    const a = await ops.authorize({ ...base, operation_id: 'op-1', card, three_ds: three, capture: false });
    assert.equal(a.status, 'accepted');
    const again = await ops.authorize({ ...base, operation_id: 'op-1', card, three_ds: three, capture: false });
    assert.deepEqual(again, a, 'answered from the journal, nothing sent twice');
    assert.equal(host.book.stats.requests, 1);
    const ref = parseReference(a.reference)!;
    assert.equal(ref.kind, 'preauth');
    assert.equal(ref.stan, '000001');

    const cap = await ops.capture({ ...base, amount: 3000, operation_id: 'op-2', reference: a.reference! });
    assert.equal(cap.status, 'accepted');
    assert.equal((await ops.refund({ ...base, amount: 1000, operation_id: 'op-3', reference: a.reference! })).status, 'accepted');
    assert.equal((await ops.refund({ ...base, amount: 2500, operation_id: 'op-4', reference: a.reference! })).response_code, '13');

    // an authorization whose answer is lost: unknown, then reversed by its operation id
    host.faults.drop = 1;
    await assert.rejects(ops.authorize({ ...base, operation_id: 'op-5', card, three_ds: three, capture: true }), LinkUnknown);
    await assert.rejects(ops.inquire({ ...base, operation_id: 'op-5' }), LinkUnknown);
    const rev = await ops.reverse({ ...base, operation_id: 'op-6', original_operation_id: 'op-5' });
    assert.equal(rev.status, 'accepted');
    assert.equal(
      (await ops.reverse({ ...base, operation_id: 'op-7', original_operation_id: 'never-sent' })).response_code_description,
      'Nothing to reverse: never sent',
    );
    assert.equal((await ops.inquire({ ...base, operation_id: 'op-2' })).status, 'accepted');
    assert.equal((await ops.inquire({ ...base, operation_id: 'op-404' })).status, 'not_found');

    // a reversal is repeated (0401) until answered
    const s = await ops.authorize({ ...base, operation_id: 'op-8', card, three_ds: three, capture: true });
    host.faults.drop = 1;
    const voided = await ops.reverse({ ...base, operation_id: 'op-9', original_operation_id: 'op-8' });
    assert.equal(voided.status, 'accepted');
    assert.equal(host.book.stats.retransmissions, 1, 'the 0401 repeat was answered as the 0400');
    assert.ok(s.reference);

    const refuse = new IsoOperations(link, journal, {
      acquirer: 'x',
      terminal_id: 'TOPS0001',
      card_acceptor_id: 'SHOP',
      refuse_unauthenticated: true,
    });
    const no = await refuse.authorize({ ...base, operation_id: 'op-10', card, three_ds: three, capture: true });
    assert.deepEqual([no.status, no.reason, no.response_code], ['declined', 'authentication_failed', '3DS-U']);
  } finally {
    await host.close();
  }
});

test('bad input among good answers: each is logged and dropped, the payments in flight get their own answers, no reconnect', async () => {
  // a host that, before each financial answer, sends an unknown MTI, a field out of its charset, an
  // answer to a STAN never sent, and an answer of the wrong type to the STAN asked; then the answer
  const server = net.createServer((s) => {
    const d = new Deframer();
    s.on('data', (c) => {
      for (const b of d.push(c)) {
        const m = decode(b);
        const fields: Record<number, string> = { 7: m.fields[7], 11: m.fields[11], 39: '00' };
        for (const n of [41, 70]) if (m.fields[n]) fields[n] = m.fields[n];
        if (m.mti === '0800') {
          s.write(frame(encode({ mti: '0810', fields })));
          continue;
        }
        const good = encode({ mti: '0210', fields });
        const badField = Buffer.from(good);
        badField.write('A', 12, 'latin1'); // the first byte of field 7 (n10): not a digit
        s.write(
          Buffer.concat([
            frame(Buffer.from('0999' + 'x'.repeat(20))), // unknown MTI
            frame(badField),
            frame(encode({ mti: '0210', fields: { ...fields, 11: '999999' } })), // a STAN never sent
            frame(encode({ mti: '0110', fields })), // the STAN asked, but not the answer to a 0200
            frame(good),
          ]),
        );
      }
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { link, warnings } = open(`iso8583://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
  try {
    const answers = await Promise.all(Array.from({ length: 5 }, () => link.request(sale())));
    assert.deepEqual(
      answers.map((a) => a.fields[39]),
      ['00', '00', '00', '00', '00'],
    );
    const s = link.state();
    assert.equal(s.dropped_messages, 20, 'four bad messages per payment, each counted');
    assert.deepEqual([s.reconnects, s.connected, s.signed_on, s.in_flight], [0, true, true, 0]);
    // each kind written once at once, the rest counted (summarised when the link closes, below)
    assert.equal(warnings.filter((w) => /malformed message/.test(w)).length, 1);
    assert.equal(warnings.filter((w) => /answer to no pending request/.test(w)).length, 1);
    await link.close();
    assert.ok(warnings.some((w) => /malformed message: 9 more like it/.test(w)));
    assert.ok(warnings.some((w) => /answer to no pending request: 9 more like it/.test(w)));
  } finally {
    await link.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('20,000 junk answers write a few warning lines, not 20,000: the first of each kind, then how many more (issue 42, item 15)', async () => {
  // a host that signs on, then answers a payment with 10,000 frames of an unknown MTI and 10,000
  // answers to STANs never sent, then the answer
  const server = net.createServer((s) => {
    const d = new Deframer();
    s.on('data', (c) => {
      for (const b of d.push(c)) {
        const m = decode(b);
        const fields: Record<number, string> = { 7: m.fields[7], 11: m.fields[11], 39: '00' };
        for (const n of [41, 70]) if (m.fields[n]) fields[n] = m.fields[n];
        if (m.mti === '0800') {
          s.write(frame(encode({ mti: '0810', fields })));
          continue;
        }
        const junk = frame(Buffer.from('0999' + 'x'.repeat(20)));
        const stray = frame(encode({ mti: '0210', fields: { ...fields, 11: '999999' } }));
        s.write(Buffer.concat([...Array.from({ length: 10_000 }, () => junk), ...Array.from({ length: 10_000 }, () => stray)]));
        s.write(frame(encode({ mti: '0210', fields })));
      }
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  const { link } = open(`iso8583://127.0.0.1:${(server.address() as net.AddressInfo).port}`, {
    timeoutMs: 10_000,
    log: (level, msg, fields) => level === 'warn' && lines.push({ msg, fields }),
  });
  try {
    assert.equal((await link.request(sale())).fields[39], '00');
    assert.equal(link.state().dropped_messages, 20_000, 'every junk answer dropped and counted');
    await link.close();
    assert.ok(lines.length <= 4, `${lines.length} warning lines: ${[...new Set(lines.map((l) => l.msg))].join(' | ')}`);
    for (const kind of ['dropped a malformed message', 'dropped an answer to no pending request']) {
      const first = lines.filter((l) => l.msg === `acquirer link: ${kind}`);
      assert.equal(first.length, 1, `the first ${kind} is written as it came`);
      const summary = lines.find((l) => l.msg.startsWith(`acquirer link: ${kind}: `));
      assert.equal(summary?.fields?.repeated, 9_999, `the other ${kind} are counted: ${summary?.msg}`);
      assert.match(summary!.msg, /9999 more like it in the last \d+ s$/);
    }
  } finally {
    await link.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('a length header above 8192 breaks the stream: logged, the payment in flight is unknown, the link reconnects and goes on', async () => {
  let connections = 0;
  const server = net.createServer((s) => {
    const n = ++connections;
    const d = new Deframer();
    s.on('data', (c) => {
      for (const b of d.push(c)) {
        const m = decode(b);
        const fields: Record<number, string> = { 7: m.fields[7], 11: m.fields[11], 39: '00' };
        for (const k of [41, 70]) if (m.fields[k]) fields[k] = m.fields[k];
        if (m.mti === '0800') s.write(frame(encode({ mti: '0810', fields })));
        else if (n === 1)
          s.write(Buffer.from([0x20, 0x01, 0x30, 0x32])); // 8193: no message is that long
        else s.write(frame(encode({ mti: '0210', fields })));
      }
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { link, warnings } = open(`iso8583://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
  try {
    await assert.rejects(link.request(sale()), (e) => e instanceof LinkUnknown && /connection to the acquirer was lost/.test(e.message));
    assert.ok(warnings.some((w) => /broken stream/.test(w)));
    await until('signed on again', () => link.state().signed_on && connections === 2);
    assert.equal((await link.request(sale())).fields[39], '00');
  } finally {
    await link.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
