import { decodeBrowser, encodeBrowser, erro, ERRORS, readMessage, type EmvMessage } from '../../acquirer/threeds/messages.ts';
import type { ChallengeAnswer } from '../../acquirer/threeds/server.ts';
import type { EmvResult, TransStatus } from '../../domain/card.ts';
import type { OrderRow } from '../../domain/entities.ts';
import { findAttempt } from '../../store/payments/attempts.ts';
import { findCardAuth, recordRreq } from '../../store/vault/cards.ts';
import type { Ctx } from '../platform/context.ts';
import { completeAuthentication, loadThreeDs, type ThreeDsView } from './card.ts';

/**
 * A live project's EMV challenge around the 3-D Secure page (docs/three-d-secure.md "Challenge"):
 * the CReq the page posts to the ACS, the RReq the DS sends to threeDSServerURL (answered RRes,
 * kept once), and the CRes the customer's browser brings back, checked against the RReq before
 * the authorization.
 */

const RREQ_REQUIRED = ['threeDSServerTransID', 'dsTransID', 'acsTransID', 'transStatus', 'messageCategory'] as const;
const FINAL = new Set(['Y', 'A', 'N', 'R', 'U']);
/** how long a CRes waits for its RReq (the ACS sends the RReq first; a slow DS may deliver it later) */
const RREQ_WAIT_MS = 3000;

/** The answer to a DS's RReq: RRes when it names a challenge of ours and is well formed, else Erro. Nothing else changes on a duplicate. */
export async function answerRreq(ctx: Ctx, text: string): Promise<EmvMessage> {
  const read = readMessage(text, ['RReq'], RREQ_REQUIRED);
  if ('problem' in read) {
    ctx.log.warn({ code: read.problem.code, detail: read.problem.detail }, '3-D Secure: an RReq that cannot be read; Erro answered');
    return erro('S', read.problem.code, 'RReq not valid', read.problem.detail, { ...read.partial, messageType: 'RReq' });
  }
  const m = read.message;
  const bad = (code: (typeof ERRORS)[keyof typeof ERRORS], detail: string) => {
    ctx.log.warn({ code, detail, three_ds_server_trans_id: m.threeDSServerTransID }, '3-D Secure: an RReq refused; Erro answered');
    return erro('S', code, 'RReq not valid', detail, m);
  };
  const lookup = await findAttempt(ctx.db, String(m.threeDSServerTransID));
  const auth = lookup?.kind === 'three_ds' ? await findCardAuth(ctx.db, lookup.project_id, lookup.transaction_id) : undefined;
  const emv = auth?.emv;
  if (!auth || !emv || emv.server_trans_id !== m.threeDSServerTransID) return bad(ERRORS.transaction, 'threeDSServerTransID');
  if (emv.ds_trans_id !== m.dsTransID || emv.acs_trans_id !== m.acsTransID) return bad(ERRORS.transaction, 'dsTransID/acsTransID');
  const s = String(m.transStatus);
  if (!FINAL.has(s)) return bad(ERRORS.format, 'transStatus');
  const authenticated = s === 'Y' || s === 'A';
  if (authenticated && (typeof m.authenticationValue !== 'string' || !/^[A-Za-z0-9+/=]{20,40}$/.test(m.authenticationValue)))
    return bad(ERRORS.missing, 'authenticationValue');
  if (m.eci !== undefined && (typeof m.eci !== 'string' || !/^\d{2}$/.test(m.eci))) return bad(ERRORS.format, 'eci');
  const kept = await recordRreq(ctx.db, auth.project_id, auth.transaction_id, {
    trans_status: s as TransStatus,
    ...(typeof m.eci === 'string' ? { eci: m.eci } : {}),
    ...(authenticated ? { authentication_value: m.authenticationValue as string } : {}),
  });
  if (!kept)
    ctx.log.info({ three_ds_server_trans_id: m.threeDSServerTransID }, '3-D Secure: a duplicate RReq, answered again; nothing changed');
  return {
    messageType: 'RRes',
    messageVersion: m.messageVersion,
    threeDSServerTransID: m.threeDSServerTransID,
    dsTransID: m.dsTransID,
    acsTransID: m.acsTransID,
    resultsStatus: '01',
  };
}

/** The CReq form the 3-D Secure page posts to the ACS, for a live challenge; undefined for the sandbox's. */
export function creqOf(view: ThreeDsView): { acs_url: string; creq: string; session: string } | undefined {
  const emv = view.auth?.emv;
  if (view.auth?.trans_status !== 'C' || !emv?.acs_url || !emv.acs_trans_id) return undefined;
  const creq = {
    messageType: 'CReq',
    messageVersion: emv.version,
    threeDSServerTransID: emv.server_trans_id,
    acsTransID: emv.acs_trans_id,
    challengeWindowSize: '05',
  };
  return { acs_url: emv.acs_url, creq: encodeBrowser(creq), session: Buffer.from(view.txn.id).toString('base64url') };
}

async function rreqOf(ctx: Ctx, view: ThreeDsView): Promise<EmvResult['rreq']> {
  const until = Date.now() + RREQ_WAIT_MS;
  for (;;) {
    const auth = await findCardAuth(ctx.db, view.txn.project_id, view.txn.id);
    if (auth?.emv?.rreq || Date.now() >= until) return auth?.emv?.rreq;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The CRes the customer's browser brings to notificationURL: read, checked against the challenge
 * (its ids) and the RReq, and the authentication completed with what they agree on (else N, and
 * logged). Returns the order afterwards; undefined for an unknown transaction.
 */
export async function acceptCres(ctx: Ctx, transactionId: string, field: string | undefined): Promise<OrderRow | undefined> {
  const view = await loadThreeDs(ctx, transactionId);
  const emv = view?.auth?.emv;
  if (!view || !emv) return undefined;
  if (view.txn.status !== 'pending' || view.auth?.trans_status !== 'C') return view.order;
  const cres = decodeBrowser(field);
  const ok = cres?.messageType === 'CRes' && cres.threeDSServerTransID === emv.server_trans_id && cres.acsTransID === emv.acs_trans_id;
  if (!ok) ctx.log.warn({ transaction: transactionId }, '3-D Secure: a CRes that cannot be taken; the authentication fails');
  const rreq = await rreqOf(ctx, view);
  if (ok && !rreq) ctx.log.warn({ transaction: transactionId }, '3-D Secure: a CRes with no RReq from the DS; the authentication fails');
  const answer: ChallengeAnswer = { ...(ok ? { cres: String(cres.transStatus) } : {}), ...(rreq ? { rreq } : {}), emv };
  return completeAuthentication(ctx, view, { kind: 'challenge', answer: JSON.stringify(answer) });
}
