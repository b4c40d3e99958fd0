import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';
import tls from 'node:tls';
import { createInterface } from 'node:readline';
import { answerMti, decode, Deframer, encode, frame, type Message } from '../codec.ts';
import { ISO_1987, type Layout } from '../layout.ts';
import { Book, type SettledLine } from './book.ts';
import { applyFaultLine, delayOf, noFaults, take, type Faults } from './faults.ts';
import { appendHostJournal, readJournal, repairSettlement } from './journal.ts';
import { DISPUTE_WORDS, HostDisputes } from './disputes.ts';

/**
 * The simulated acquiring host as a TCP server (TLS when given a certificate): one Book, any
 * number of terminals' connections, the settlement files, the fault switches, and an admin
 * line protocol on its own port (`drop 2`, `stats`, `chargeback TERMINAL RRN`...). `tender acquirer-host` runs it.
 */

export interface HostOptions {
  port: number;
  host?: string;
  /** the admin port (0: any free one); absent: no admin listener */
  adminPort?: number;
  /** settlement files and the host's journal (host-journal.jsonl, read back at start) */
  settlementDir?: string;
  holdMs?: number;
  faults?: Partial<Faults>;
  layout?: Layout;
  tls?: { key: string | Buffer; cert: string | Buffer };
  log?: (line: string) => void;
}

export interface RunningHost {
  port: number;
  adminPort?: number;
  faults: Faults;
  book: Book;
  disputes: HostDisputes;
  connections(): number;
  close(): Promise<void>;
}

/** The last two columns are a dispute stage's (empty on other lines); files of 8 columns came before them. */
export const SETTLEMENT_HEADER = 'date,terminal,rrn,stan,type,amount,currency,authorization_code,dispute_id,reason_code';

const rowOf = (l: SettledLine) =>
  [l.date, l.terminal, l.rrn, l.stan, l.type, l.amount, l.currency, l.authorization_code, l.dispute_id ?? '', l.reason_code ?? ''].join(
    ',',
  );

/** Appends each settled line at once to settlement-YYYY-MM-DD.csv, so a killed host loses none. */
function settlementWriter(dir: string | undefined) {
  if (dir) mkdirSync(dir, { recursive: true });
  return (l: SettledLine) => {
    if (!dir) return;
    const file = join(dir, `settlement-${l.date}.csv`);
    appendFileSync(file, (existsSync(file) ? '' : SETTLEMENT_HEADER + '\n') + rowOf(l) + '\n');
  };
}

const pick = (m: Message, ...ns: number[]) => Object.fromEntries(ns.filter((n) => m.fields[n] !== undefined).map((n) => [n, m.fields[n]]));

/** A field of the answer made unlike the request's, for the next answer each `wrong-*` switch is set for (a fault). */
function tampered(a: Message, f: Faults): Message {
  const fields = { ...a.fields };
  const other = (v: string | undefined, width: number) => String((Number(v ?? '0') + 1) % 10 ** width).padStart(width, '0');
  if (take(f, 'wrongAmount')) fields[4] = other(fields[4], 12);
  if (take(f, 'wrongCurrency')) fields[49] = fields[49] === '840' ? '978' : '840';
  if (take(f, 'wrongRrn'))
    fields[37] = (fields[37] ?? '').trimEnd().slice(0, 11).padEnd(11, '0') + (fields[37]?.trimEnd().endsWith('9') ? '8' : '9');
  // an original (field 90) with another STAN; an answer to a request that named none names one
  if (take(f, 'wrongOriginal'))
    fields[90] =
      (fields[90] ?? '0200' + '0'.repeat(38)).slice(0, 4) + other(fields[90]?.slice(4, 10), 6) + (fields[90] ?? '0'.repeat(42)).slice(10);
  return { ...a, fields };
}

const listen = (server: net.Server, port: number, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
  });

export async function startHost(opts: HostOptions): Promise<RunningHost> {
  const layout = opts.layout ?? ISO_1987;
  const faults: Faults = { ...noFaults(), ...opts.faults };
  const log = opts.log ?? (() => {});
  const dir = opts.settlementDir;
  const settle = settlementWriter(dir);
  const book = new Book({
    holdMs: opts.holdMs ?? 7 * 86_400_000,
    settle,
    record: dir ? (e) => appendHostJournal(dir, e) : undefined,
  });
  // journaled first, then the settlement line, as the book's requests are
  const disputes = new HostDisputes(book, (e) => {
    if (dir) appendHostJournal(dir, e);
    for (const l of e.settled) settle(l);
  });
  if (dir) {
    // a restart: what the host held and answered before is remembered, and lines a kill cut off are written
    const entries = readJournal(dir);
    for (const e of entries) {
      if ('dispute' in e) disputes.replay(e);
      else book.replay(e);
    }
    const repaired = repairSettlement(dir, entries, SETTLEMENT_HEADER, rowOf);
    if (entries.length)
      log(`journal replayed: ${entries.length} requests${repaired ? `, ${repaired} settlement lines written again` : ''}`);
  }
  const sockets = new Set<net.Socket>();
  const adminSockets = new Set<net.Socket>();

  const serve = (socket: net.Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    let signedOn = false;
    const deframer = new Deframer();
    const send = (m: Message) => {
      if (!socket.destroyed) socket.write(frame(encode(m, layout)));
    };
    socket.on('data', (chunk) => {
      let bodies: Buffer[];
      try {
        bodies = deframer.push(chunk);
      } catch (err) {
        log(`closing a connection: ${(err as Error).message}`);
        socket.destroy();
        return;
      }
      for (const body of bodies) {
        let m: Message;
        try {
          m = decode(body, layout);
        } catch (err) {
          // a malformed request cannot be answered (no trustworthy STAN): logged and dropped
          log(`dropped a malformed message: ${(err as Error).message}`);
          continue;
        }
        if (m.mti === '0800') {
          const a = book.network(m, faults.refuseSignOn);
          if (m.fields[70] === '001') signedOn = a.fields[39] === '00';
          send(a);
          continue;
        }
        // a terminal that has not signed on gets 91 (issuer or switch inoperative), and nothing is decided
        const partial = signedOn && (m.mti === '0100' || m.mti === '0200') && m.fields[3] === '000000' && faults.partial > 0;
        const decided: Message = signedOn
          ? book.answer(m, { partial })
          : { mti: answerMti(m.mti), fields: { ...pick(m, 11, 41), 39: '91' } };
        if (partial && decided.fields[39] === '10') take(faults, 'partial');
        const answer = tampered(decided, faults);
        if (take(faults, 'cut')) {
          log(`cutting the connection after STAN ${m.fields[11]}`);
          socket.destroy();
          return;
        }
        if (take(faults, 'drop')) {
          log(`dropping the answer to STAN ${m.fields[11]}`);
          continue;
        }
        const twice = take(faults, 'duplicate');
        const deliver = () => {
          send(answer);
          if (twice) send(answer);
        };
        const delay = delayOf(faults);
        if (delay > 0) setTimeout(deliver, delay).unref();
        else deliver();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };

  const server = opts.tls ? tls.createServer({ key: opts.tls.key, cert: opts.tls.cert }, serve) : net.createServer(serve);
  const bind = opts.host ?? '127.0.0.1';
  const port = await listen(server, opts.port, bind);

  let admin: net.Server | undefined;
  let adminPort: number | undefined;
  if (opts.adminPort !== undefined) {
    admin = net.createServer((s) => {
      adminSockets.add(s);
      s.on('error', () => {});
      s.on('close', () => adminSockets.delete(s));
      createInterface({ input: s }).on('line', (line) => {
        const word = line.trim();
        if (!word) return;
        const reply =
          word === 'stats'
            ? JSON.stringify({ ...book.stats, connections: sockets.size, faults })
            : DISPUTE_WORDS.has(word.split(/\s+/)[0])
              ? disputes.apply(word)
              : applyFaultLine(faults, word);
        log(`admin: ${word} -> ${reply}`);
        s.write(reply + '\n');
      });
    });
    adminPort = await listen(admin, opts.adminPort, bind);
  }

  return {
    port,
    adminPort,
    faults,
    book,
    disputes,
    connections: () => sockets.size,
    async close() {
      for (const s of [...sockets, ...adminSockets]) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      if (admin) await new Promise<void>((r) => admin.close(() => r()));
    },
  };
}
