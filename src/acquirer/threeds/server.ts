import countries from 'i18n-iso-countries';
import { currencyExponent, currencyNumeric } from '../../domain/currency.ts';
import { eciFor, liabilityShift, type EmvResult, type TransStatus } from '../../domain/card.ts';
import type { Authenticator, Purchase } from '../authenticator.ts';
import type { CardData, OperationRef, ThreeDsResult } from '../connector.ts';
import { erro, ERRORS, readMessage, VERSION, type EmvMessage } from './messages.ts';
import { directoryServer } from './preq.ts';
import { postJson } from './post.ts';

/**
 * Tender as the EMV 3DS Server (2.2.0, browser channel) of a live project: the AReq to the
 * directory server of the card's brand, the ARes read and checked (docs/three-d-secure.md).
 * The AReq's threeDSServerTransID is the lookup attempt's id, recorded before the call
 * (services/payments/card.ts). A DS message that does not parse, fails validation or names
 * another transaction is answered with an Erro and never taken as authenticated; a DS that does
 * not answer within `timeoutMs` is U (the binding's unauthenticated fallback).
 */

export interface ThreeDsBinding {
  /** brand -> the DS's URL; `*` for every brand */
  directory_servers: Record<string, string>;
  acquirer_bin: string;
  mcc: string;
  /** ISO 3166 alpha-2 */
  merchant_country: string;
  /** the acquirer's merchant id (the card acceptor id) */
  merchant_id: string;
  requestor_id: string;
  requestor_name: string;
  /** PEM text of the client certificate, its key and the DS's CA (mutual TLS) */
  tls?: { cert?: string; key?: string; ca?: string };
}

export interface EmvOptions {
  timeoutMs: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** The DS URL of a brand: its own, else the one for every brand. */
const dsUrlFor = (b: ThreeDsBinding, brand: string) => b.directory_servers[brand] ?? b.directory_servers['*'];

const pad = (n: number) => String(n).padStart(2, '0');
/** YYYYMMDDHHMMSS in UTC */
const emvDate = (d: Date) =>
  `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
const numericCountry = (alpha2: string | undefined) => (alpha2 ? countries.alpha2ToNumeric(alpha2.toUpperCase()) : undefined);
const clip = (v: string | undefined, n: number) => (v ? v.slice(0, n) : undefined);

/** The AReq of a lookup (docs/three-d-secure.md "Order to AReq"). */
function buildAReq(b: ThreeDsBinding, req: OperationRef & { card: CardData; challenge?: boolean; purchase?: Purchase }): EmvMessage {
  const p = req.purchase;
  const c = p?.customer;
  const br = p?.browser;
  const exp = currencyExponent(req.currency) ?? 2;
  const phone = c?.phone?.replace(/[^0-9+]/g, '');
  const m: Record<string, unknown> = {
    messageType: 'AReq',
    messageVersion: VERSION,
    messageCategory: '01',
    deviceChannel: '02',
    threeDSServerTransID: req.operation_id,
    threeDSServerRefNumber: 'TENDER',
    threeDSServerURL: p?.server_url,
    notificationURL: p?.notification_url,
    threeDSCompInd: p?.method_done ?? 'U',
    threeDSRequestorID: b.requestor_id,
    threeDSRequestorName: b.requestor_name,
    threeDSRequestorURL: p?.requestor_url,
    threeDSRequestorAuthenticationInd: '01',
    threeDSRequestorChallengeInd: req.challenge ? '04' : (p?.challenge_ind ?? '01'),
    acquirerBIN: b.acquirer_bin,
    acquirerMerchantID: b.merchant_id,
    mcc: b.mcc,
    merchantCountryCode: numericCountry(b.merchant_country),
    merchantName: clip(p?.merchant_name ?? b.requestor_name, 40),
    acctNumber: req.card.pan,
    cardExpiryDate: req.card.expiry.slice(4, 6) + req.card.expiry.slice(0, 2),
    purchaseAmount: String(req.amount),
    purchaseCurrency: currencyNumeric(req.currency),
    purchaseExponent: String(exp),
    purchaseDate: emvDate(req.now),
    transType: '01',
    browserAcceptHeader: clip(br?.accept ?? '*/*', 2048),
    browserIP: br?.ip,
    browserJavaEnabled: br?.javascript === true && br.java === true,
    browserJavascriptEnabled: br?.javascript === true,
    browserLanguage: clip(br?.language ?? 'en', 8),
    browserUserAgent: clip(br?.user_agent ?? 'unknown', 2048),
    ...(br?.javascript
      ? {
          browserColorDepth: String(br.color_depth ?? 24),
          browserScreenHeight: String(br.screen_height ?? 0),
          browserScreenWidth: String(br.screen_width ?? 0),
          browserTZ: String(br.tz ?? 0),
        }
      : {}),
    cardholderName: clip(req.card.name, 45),
    email: clip(c?.email, 254),
    billAddrLine1: clip(c?.address, 50),
    billAddrCity: clip(c?.city, 50),
    billAddrPostCode: clip(c?.postal_code, 16),
    billAddrCountry: numericCountry(c?.country),
    ...(phone ? { mobilePhone: { cc: phone.startsWith('+') ? phone.slice(1, 3) : '', subscriber: phone.replace(/^\+\d{2}/, '') } } : {}),
  };
  for (const k of Object.keys(m)) if (m[k] === undefined) delete m[k];
  return m as EmvMessage;
}

const STATUSES = new Set(['Y', 'A', 'C', 'N', 'R', 'U']);

/** Why an ARes is not taken, or undefined when it is a good answer to `areq`. */
function aresProblem(ares: EmvMessage, areq: EmvMessage): { code: (typeof ERRORS)[keyof typeof ERRORS]; detail: string } | undefined {
  if (ares.threeDSServerTransID !== areq.threeDSServerTransID) return { code: ERRORS.transaction, detail: 'threeDSServerTransID' };
  if (!STATUSES.has(String(ares.transStatus))) return { code: ERRORS.format, detail: 'transStatus' };
  const s = ares.transStatus as string;
  if (
    (s === 'Y' || s === 'A') &&
    (typeof ares.authenticationValue !== 'string' || !/^[A-Za-z0-9+/=]{20,40}$/.test(ares.authenticationValue))
  )
    return { code: ERRORS.missing, detail: 'authenticationValue' };
  if ((s === 'Y' || s === 'A') && (typeof ares.eci !== 'string' || !/^\d{2}$/.test(ares.eci)))
    return { code: ERRORS.missing, detail: 'eci' };
  if (s === 'C' && (typeof ares.acsURL !== 'string' || !/^https?:\/\//.test(ares.acsURL)))
    return { code: ERRORS.missing, detail: 'acsURL' };
  return undefined;
}

/** The result of a lookup that may not be taken as authenticated: U, the binding's fallback decides. */
const unauthenticated = (card: Pick<CardData, 'brand'>, serverTransId: string, ds?: string): ThreeDsResult => ({
  trans_status: 'U',
  eci: eciFor(card.brand, 'U'),
  liability_shift: false,
  emv: { server_trans_id: serverTransId, version: VERSION, ...(ds ? { ds_trans_id: ds } : {}) },
});

/** The result a good ARes (or RReq) gives. */
function resultOf(card: Pick<CardData, 'brand'>, m: EmvMessage, areqId: string, version: string): ThreeDsResult {
  const s = m.transStatus as TransStatus;
  const authenticated = s === 'Y' || s === 'A';
  return {
    trans_status: s,
    eci: typeof m.eci === 'string' && /^\d{2}$/.test(m.eci) ? m.eci : eciFor(card.brand, s),
    liability_shift: liabilityShift(s),
    emv: {
      server_trans_id: areqId,
      version,
      ...(typeof m.dsTransID === 'string' ? { ds_trans_id: m.dsTransID } : {}),
      ...(typeof m.acsTransID === 'string' ? { acs_trans_id: m.acsTransID } : {}),
      ...(authenticated && typeof m.authenticationValue === 'string' ? { authentication_value: m.authenticationValue } : {}),
      ...(s === 'C' && typeof m.acsURL === 'string' ? { acs_url: m.acsURL } : {}),
    },
  };
}

/** What a live challenge's completeChallenge is given (services/payments/three-ds-emv.ts): the CRes's status and the RReq kept. */
export interface ChallengeAnswer {
  /** the CRes's transStatus; absent when the CRes could not be read */
  cres?: string;
  rreq?: NonNullable<EmvResult['rreq']>;
  /** the exchange as the ARes left it */
  emv?: EmvResult;
}

/**
 * A live challenge's result: the RReq's, when a RReq came and the CRes agrees with it; else N
 * (never authenticated without the DS's word).
 */
function challengeResult(req: { card: CardData; answer: string }): ThreeDsResult {
  let a: ChallengeAnswer = {};
  try {
    a = JSON.parse(req.answer) as ChallengeAnswer;
  } catch {
    /* not an answer of ours: N */
  }
  const { rreq: r, emv } = a;
  const agreed = r && a.cres === r.trans_status && STATUSES.has(r.trans_status) && r.trans_status !== 'C';
  const s: TransStatus = agreed ? r.trans_status : 'N';
  const authenticated = s === 'Y' || s === 'A';
  return {
    trans_status: s,
    eci: agreed && r.eci && /^\d{2}$/.test(r.eci) ? r.eci : eciFor(req.card.brand, s),
    liability_shift: liabilityShift(s),
    ...(emv
      ? {
          emv: {
            ...emv,
            rreq: r,
            ...(authenticated && r?.authentication_value ? { authentication_value: r.authentication_value } : {}),
          },
        }
      : {}),
  };
}

/**
 * The EMV 3DS Server of a live project bound to directory servers. completeChallenge is given
 * the challenge's CRes and RReq as the services read them (ChallengeAnswer): it decides, with
 * no network call.
 */
export function emvAuthenticator(b: ThreeDsBinding, o: EmvOptions): Authenticator {
  const log = o.log ?? (() => {});
  const sendErro = (url: string, m: EmvMessage) =>
    postJson(url, m, { timeoutMs: Math.min(o.timeoutMs, 5000), tls: b.tls }).catch((err: Error) =>
      log('3-D Secure: the Erro did not reach the directory server', { err: err.message }),
    );
  return {
    name: 'emv3ds',
    async authenticate3ds(req) {
      const url = dsUrlFor(b, req.card.brand);
      // no directory server for this brand: non-authenticated e-commerce
      if (!url) return { trans_status: 'U', eci: eciFor(req.card.brand, 'U'), liability_shift: false };
      const areq = buildAReq(b, req);
      let text: string;
      try {
        text = await postJson(url, areq, { timeoutMs: o.timeoutMs, tls: b.tls });
      } catch (err) {
        log('3-D Secure: no ARes from the directory server; unauthenticated fallback', {
          attempt: req.operation_id,
          err: (err as Error).message,
        });
        return unauthenticated(req.card, req.operation_id);
      }
      const read = readMessage(text, ['ARes', 'Erro'], ['threeDSServerTransID']);
      if ('message' in read && read.message.messageType === 'Erro') {
        log('3-D Secure: the directory server answered Erro; unauthenticated fallback', {
          attempt: req.operation_id,
          code: read.message.errorCode,
          detail: read.message.errorDetail,
        });
        return unauthenticated(req.card, req.operation_id);
      }
      const problem = 'problem' in read ? read.problem : aresProblem(read.message, areq);
      if (problem || !('message' in read)) {
        const about = 'problem' in read ? { ...read.partial, messageType: 'ARes' as const } : read.message;
        log('3-D Secure: an ARes that cannot be taken; Erro sent, unauthenticated fallback', { attempt: req.operation_id, ...problem });
        await sendErro(
          url,
          erro('S', problem!.code, 'ARes not valid', problem!.detail, { ...about, threeDSServerTransID: req.operation_id }),
        );
        return unauthenticated(req.card, req.operation_id, typeof about.dsTransID === 'string' ? about.dsTransID : undefined);
      }
      return resultOf(req.card, read.message, req.operation_id, read.message.messageVersion);
    },
    completeChallenge: async (req) => challengeResult(req),
    directoryFor: (brand) => ((url) => (url ? directoryServer(url, b, o) : undefined))(dsUrlFor(b, brand)),
    directories: () => [...new Set(Object.values(b.directory_servers))].map((url) => directoryServer(url, b, o)),
  };
}
