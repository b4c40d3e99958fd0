import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { createInterface } from 'node:readline';
import {
  decodeBrowser,
  encodeBrowser,
  erro,
  ERRORS,
  isTransId,
  newTransId,
  readMessage,
  type CardRange,
  type EmvMessage,
} from '../messages.ts';
import { behaviourOf, DS_CHALLENGE_CODE, DS_RANGES, rangeOf, type Behaviour } from './cards.ts';
import { challengePage, errorPage, handBackPage } from './pages.ts';
import { journalLine, type DsJournalLine } from './journal.ts';

/**
 * `tender ds-host`: a directory server with its issuers' ACS, as its own process, for tests and
 * demos of live projects' 3-D Secure (docs/three-d-secure.md "ds-host"). HTTP(S) with JSON
 * messages at POST /ds (PReq, AReq, Erro); the ACS's pages at /acs/...; the RReq sent to the
 * AReq's threeDSServerURL. Behaviour by card number (cards.ts) and fault switches on an admin
 * line protocol (`no-answer 1`, `malformed 1`, `duplicate-rreq 1`, `delay 500`, `serial`,
 * `stats`, `journal`, `clear`), as `tender acquirer-host` has.
 */

export interface DsHostOptions {
  port: number;
  host?: string;
  /** the admin port (0: any free one); absent: no admin listener */
  adminPort?: number;
  /** HTTPS with this certificate; `ca`: client certificates are required and checked against it (mutual TLS) */
  tls?: { key: string | Buffer; cert: string | Buffer; ca?: string | Buffer };
  /** the URL the browser reaches the ACS at (default: this server's own) */
  publicUrl?: string;
  log?: (line: string) => void;
}

export interface DsFaults {
  /** the next N AReqs are never answered */
  noAnswer: number;
  /** the next N AReqs are answered with text that is not JSON */
  malformed: number;
  /** the next N RReqs are sent twice */
  duplicateRreq: number;
  /** ms before each ARes */
  delayMs: number;
}

export interface RunningDsHost {
  url: string;
  port: number;
  adminPort?: number;
  faults: DsFaults;
  journal: DsJournalLine[];
  close(): Promise<void>;
}

interface Trans {
  areq: EmvMessage;
  behaviour: Behaviour;
  brand: 'visa' | 'mastercard';
  dsTransID: string;
  acsTransID: string;
  final?: 'Y' | 'N';
}

const noDsFaults = (): DsFaults => ({ noAnswer: 0, malformed: 0, duplicateRreq: 0, delayMs: 0 });
const SWITCHES: Record<string, keyof DsFaults> = {
  'no-answer': 'noAnswer',
  malformed: 'malformed',
  'duplicate-rreq': 'duplicateRreq',
  delay: 'delayMs',
};

/** One admin line (`malformed 1`, `clear`); answers `ok` or why not. */
export function applyDsFaultLine(f: DsFaults, line: string): string {
  const [word, value] = line.trim().split(/\s+/);
  if (word === 'clear') return (Object.assign(f, noDsFaults()), 'ok');
  const key = SWITCHES[word];
  if (!key)
    return `error unknown switch ${JSON.stringify(word)}; known: ${Object.keys(SWITCHES).join(', ')}, serial, clear, stats, journal`;
  const n = Number(value);
  if (!value || !Number.isInteger(n) || n < 0) return `error ${word} takes a whole number >= 0`;
  f[key] = n;
  return 'ok';
}

const ECI = { visa: { Y: '05', A: '06', none: '07' }, mastercard: { Y: '02', A: '01', none: '00' } };
const eciOf = (brand: 'visa' | 'mastercard', s: string) => (s === 'Y' ? ECI[brand].Y : s === 'A' ? ECI[brand].A : ECI[brand].none);
const authValue = () => randomBytes(20).toString('base64');

const AREQ_REQUIRED = [
  'threeDSServerTransID',
  'threeDSServerURL',
  'notificationURL',
  'acctNumber',
  'acquirerBIN',
  'acquirerMerchantID',
  'mcc',
  'merchantCountryCode',
  'merchantName',
  'purchaseAmount',
  'purchaseCurrency',
  'purchaseExponent',
  'purchaseDate',
  'deviceChannel',
  'messageCategory',
  'threeDSRequestorID',
  'threeDSRequestorName',
  'threeDSCompInd',
] as const;

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > 64 * 1024) reject(new Error('body too large'));
      else chunks.push(d);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const listen = (server: net.Server, port: number, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
  });

export async function startDsHost(opts: DsHostOptions): Promise<RunningDsHost> {
  const log = opts.log ?? (() => {});
  const faults = noDsFaults();
  const journal: DsJournalLine[] = [];
  const trans = new Map<string, Trans>();
  /** threeDSServerTransIDs whose 3DS Method ran */
  const methods = new Set<string>();
  let serial = 1;
  const sockets = new Set<net.Socket>();
  let base = '';

  const note = (dir: 'in' | 'out', m: Record<string, unknown>) => {
    journal.push(journalLine(dir, m));
    if (journal.length > 10_000) journal.shift();
  };
  const json = (res: http.ServerResponse, m: EmvMessage | Record<string, never>) => {
    if ('messageType' in m) note('out', m);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(m));
  };
  const html = (res: http.ServerResponse, status: number, body: string) =>
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body);

  const ranges = (): CardRange[] =>
    DS_RANGES.map((r) => ({
      startRange: r.start,
      endRange: r.end,
      actionInd: 'A',
      acsStartProtocolVersion: '2.2.0',
      acsEndProtocolVersion: '2.2.0',
      dsStartProtocolVersion: '2.2.0',
      dsEndProtocolVersion: '2.2.0',
      ...(r.method ? { threeDSMethodURL: `${base}/acs/method` } : {}),
    }));

  function preq(m: EmvMessage): EmvMessage {
    // the same serial number: nothing changed since
    const same = m.serialNum === String(serial);
    return {
      messageType: 'PRes',
      messageVersion: m.messageVersion,
      threeDSServerTransID: m.threeDSServerTransID,
      dsTransID: newTransId(),
      serialNum: String(serial),
      cardRangeData: same ? [] : ranges(),
    };
  }

  function areq(m: EmvMessage): EmvMessage | undefined {
    const pan = String(m.acctNumber);
    const behaviour = behaviourOf(pan);
    if (!behaviour) return erro('D', ERRORS.data, 'Transaction data not valid', 'acctNumber: in no card range of this DS', m);
    const t: Trans = { areq: m, behaviour, brand: rangeOf(pan)!.brand, dsTransID: newTransId(), acsTransID: newTransId() };
    trans.set(t.acsTransID, t);
    const ids = { threeDSServerTransID: m.threeDSServerTransID, dsTransID: t.dsTransID, acsTransID: t.acsTransID };
    const ares = (transStatus: string, extra: Record<string, unknown> = {}): EmvMessage => ({
      messageType: 'ARes',
      messageVersion: m.messageVersion,
      ...ids,
      dsReferenceNumber: 'TENDER-DS-HOST',
      acsReferenceNumber: 'TENDER-ACS-HOST',
      transStatus,
      ...extra,
    });
    const authenticated = (s: 'Y' | 'A') => ares(s, { eci: eciOf(t.brand, s), authenticationValue: authValue() });
    const challenge = () => ares('C', { acsURL: `${base}/acs/challenge`, acsChallengeMandated: 'Y', authenticationType: '02' });
    switch (behaviour) {
      case 'frictionless':
        return m.threeDSRequestorChallengeInd === '04' ? challenge() : authenticated('Y');
      case 'attempts':
        return authenticated('A');
      case 'challenge':
      case 'duplicate_rreq':
        return challenge();
      case 'not_authenticated':
        return ares('N', { transStatusReason: '01', eci: eciOf(t.brand, 'N') });
      case 'rejected':
        return ares('R', { transStatusReason: '11', eci: eciOf(t.brand, 'R') });
      case 'unavailable':
        return ares('U', { transStatusReason: '08', eci: eciOf(t.brand, 'U') });
      case 'method':
        return m.threeDSCompInd === 'Y' && methods.has(String(m.threeDSServerTransID)) ? authenticated('Y') : challenge();
      case 'no_answer':
      case 'malformed':
        return undefined;
    }
  }

  async function ds(req: http.IncomingMessage, res: http.ServerResponse) {
    const text = await readBody(req);
    const read = readMessage(text, ['PReq', 'AReq', 'Erro']);
    if ('problem' in read) {
      note('in', read.partial);
      return json(res, erro('D', read.problem.code, 'Message received invalid', read.problem.detail, read.partial));
    }
    const m = read.message;
    note('in', m);
    if (m.messageType === 'Erro') return json(res, {});
    if (m.messageType === 'PReq') {
      const ok = readMessage(text, ['PReq'], ['threeDSServerTransID']);
      return json(res, 'problem' in ok ? erro('D', ok.problem.code, 'Invalid PReq', ok.problem.detail, m) : preq(m));
    }
    const ok = readMessage(text, ['AReq'], AREQ_REQUIRED);
    if ('problem' in ok) return json(res, erro('D', ok.problem.code, 'Invalid AReq', ok.problem.detail, m));
    const behaviour = behaviourOf(String(m.acctNumber));
    if (behaviour === 'no_answer' || (faults.noAnswer > 0 && faults.noAnswer--)) {
      log(`not answering the AReq of ${m.threeDSServerTransID}`);
      return; // the connection stays open until the client gives up (or the host closes)
    }
    if (faults.delayMs > 0) await new Promise((r) => setTimeout(r, faults.delayMs));
    if (behaviour === 'malformed' || (faults.malformed > 0 && faults.malformed--)) {
      note('out', { messageType: 'ARes', threeDSServerTransID: m.threeDSServerTransID, errorDetail: 'malformed' });
      return res.writeHead(200, { 'content-type': 'application/json' }).end('{"messageType":"ARes","messageVersion":"2.2.0","transStat');
    }
    json(res, areq(m)!);
  }

  /** The RReq of a finished challenge, to the 3DS Server (twice for a duplicate_rreq card or switch); its RRes journaled. */
  async function sendRreq(t: Trans) {
    const s = t.final!;
    const rreq: EmvMessage = {
      messageType: 'RReq',
      messageVersion: t.areq.messageVersion,
      threeDSServerTransID: t.areq.threeDSServerTransID,
      dsTransID: t.dsTransID,
      acsTransID: t.acsTransID,
      messageCategory: '01',
      transStatus: s,
      eci: eciOf(t.brand, s),
      ...(s === 'Y' ? { authenticationValue: authValue() } : { transStatusReason: '01' }),
      authenticationType: '02',
      interactionCounter: '01',
    };
    const times = t.behaviour === 'duplicate_rreq' || (faults.duplicateRreq > 0 && faults.duplicateRreq--) ? 2 : 1;
    for (let i = 0; i < times; i++) {
      note('out', rreq);
      try {
        const r = await fetch(String(t.areq.threeDSServerURL), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(rreq),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await r.text();
        const read = readMessage(text, ['RRes', 'Erro']);
        note('in', 'message' in read ? read.message : { messageType: 'RRes', errorDetail: `unreadable RRes (HTTP ${r.status})` });
      } catch (err) {
        note('in', { messageType: 'RRes', errorDetail: `no RRes: ${(err as Error).message}` });
      }
    }
  }

  async function acs(req: http.IncomingMessage, res: http.ServerResponse, path: string) {
    const form = new URLSearchParams(await readBody(req));
    if (path === '/acs/method') {
      const data = decodeBrowser(form.get('threeDSMethodData'));
      const id = data?.threeDSServerTransID;
      const back = data?.threeDSMethodNotificationURL;
      if (!isTransId(id) || typeof back !== 'string' || !/^https?:\/\//.test(back))
        return html(res, 400, errorPage('invalid 3DS Method data'));
      methods.add(id);
      note('in', { messageType: 'Method', threeDSServerTransID: id });
      return html(res, 200, handBackPage('Checking your device', back, { threeDSMethodData: encodeBrowser({ threeDSServerTransID: id }) }));
    }
    if (path === '/acs/challenge') {
      const creq = decodeBrowser(form.get('creq'));
      const t = typeof creq?.acsTransID === 'string' ? trans.get(creq.acsTransID) : undefined;
      if (!creq || creq.messageType !== 'CReq' || !t || creq.threeDSServerTransID !== t.areq.threeDSServerTransID)
        return html(res, 400, errorPage('invalid challenge request'));
      note('in', creq);
      const amount = `${Number(t.areq.purchaseAmount) / 10 ** Number(t.areq.purchaseExponent)} (${t.areq.purchaseCurrency})`;
      const session = form.get('threeDSSessionData') ?? '';
      return html(res, 200, challengePage({ acsTransID: t.acsTransID, session, merchant: String(t.areq.merchantName), amount }));
    }
    if (path === '/acs/challenge/answer') {
      const t = trans.get(form.get('acsTransID') ?? '');
      if (!t || t.final) return html(res, 400, errorPage('this challenge is over'));
      t.final = form.get('action') !== 'cancel' && form.get('code') === DS_CHALLENGE_CODE ? 'Y' : 'N';
      // the RReq reaches the 3DS Server before the browser brings the CRes
      await sendRreq(t);
      const cres: EmvMessage = {
        messageType: 'CRes',
        messageVersion: t.areq.messageVersion,
        threeDSServerTransID: t.areq.threeDSServerTransID,
        acsTransID: t.acsTransID,
        transStatus: t.final,
        challengeCompletionInd: 'Y',
      };
      note('out', cres);
      const fields = { cres: encodeBrowser(cres), threeDSSessionData: form.get('threeDSSessionData') ?? '' };
      return html(res, 200, handBackPage('Returning to the shop', String(t.areq.notificationURL), fields));
    }
    html(res, 404, errorPage('not found'));
  }

  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    const run =
      req.method !== 'POST' ? undefined : path === '/ds' ? ds(req, res) : path.startsWith('/acs/') ? acs(req, res, path) : undefined;
    if (!run) return void res.writeHead(404).end();
    run.catch((err: Error) => {
      log(`request failed: ${err.message}`);
      if (!res.headersSent) res.writeHead(400).end();
    });
  };

  const server = opts.tls
    ? https.createServer(
        {
          key: opts.tls.key,
          cert: opts.tls.cert,
          ...(opts.tls.ca ? { ca: opts.tls.ca, requestCert: true, rejectUnauthorized: true } : {}),
        },
        handle,
      )
    : http.createServer(handle);
  server.on('connection', (s: net.Socket) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  server.on('secureConnection', (s: net.Socket) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  const bind = opts.host ?? '127.0.0.1';
  const port = await listen(server, opts.port, bind);
  base = (opts.publicUrl ?? `${opts.tls ? 'https' : 'http'}://${bind}:${port}`).replace(/\/$/, '');

  let admin: net.Server | undefined;
  let adminPort: number | undefined;
  if (opts.adminPort !== undefined) {
    admin = net.createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
      createInterface({ input: s }).on('line', (line) => {
        const word = line.trim();
        if (!word) return;
        const reply =
          word === 'stats'
            ? JSON.stringify({ serial, transactions: trans.size, methods: methods.size, faults })
            : word === 'journal'
              ? JSON.stringify(journal)
              : word === 'serial'
                ? `ok ${++serial}`
                : applyDsFaultLine(faults, word);
        log(`admin: ${word} -> ${reply.length > 80 ? reply.slice(0, 80) + '...' : reply}`);
        s.write(reply + '\n');
      });
    });
    adminPort = await listen(admin, opts.adminPort, bind);
  }

  return {
    url: base,
    port,
    adminPort,
    faults,
    journal,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      if (admin) await new Promise<void>((r) => admin.close(() => r()));
    },
  };
}
