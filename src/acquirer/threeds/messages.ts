import { randomUUID } from 'node:crypto';

/**
 * EMV 3-D Secure 2.2.0 messages (EMVCo Protocol and Core Functions Specification), browser
 * channel, as JSON: what Tender's 3DS Server and `tender ds-host` exchange. Only the fields this
 * implementation reads or writes are typed; a message may carry more (they are kept, not read).
 * docs/three-d-secure.md has the flow and the field tables.
 */

export const VERSION = '2.2.0';
/** the versions a message may name here; 2.1.0 was retired by the schemes in September 2024 */
const VERSIONS = ['2.2.0', '2.3.1'] as const;

export type MessageType = 'PReq' | 'PRes' | 'AReq' | 'ARes' | 'CReq' | 'CRes' | 'RReq' | 'RRes' | 'Erro';

/** Any EMV message: its type and version, and the rest as it came. */
export interface EmvMessage {
  messageType: MessageType;
  messageVersion: string;
  threeDSServerTransID?: string;
  dsTransID?: string;
  acsTransID?: string;
  [field: string]: unknown;
}

export interface CardRange {
  startRange: string;
  endRange: string;
  actionInd: 'A' | 'M' | 'D';
  acsStartProtocolVersion: string;
  acsEndProtocolVersion: string;
  dsStartProtocolVersion?: string;
  dsEndProtocolVersion?: string;
  threeDSMethodURL?: string;
}

/** EMV error codes this implementation sends (Table A.4). */
export const ERRORS = {
  /** message received invalid: does not parse, unknown messageType */
  invalid: '101',
  /** message version number not supported */
  version: '102',
  /** a required element is missing */
  missing: '201',
  /** an element has the wrong format */
  format: '203',
  /** the transaction id names no transaction known to the receiver */
  transaction: '301',
  /** transaction data not valid (an account number in no range, an answer that does not match) */
  data: '305',
  /** a transaction timed out: the answer came too late */
  timeout: '402',
} as const;

export type ErrorCode = (typeof ERRORS)[keyof typeof ERRORS];

/** The sender of an Erro: S the 3DS Server, D the directory server, A the ACS. */
export type Component = 'S' | 'D' | 'A';

/** An Erro message about `about` (the message that failed, as far as it was read). */
export function erro(
  component: Component,
  code: ErrorCode,
  description: string,
  detail: string,
  about: Partial<EmvMessage> = {},
): EmvMessage {
  return {
    messageType: 'Erro',
    messageVersion: typeof about.messageVersion === 'string' && about.messageVersion ? about.messageVersion : VERSION,
    ...(typeof about.threeDSServerTransID === 'string' ? { threeDSServerTransID: about.threeDSServerTransID } : {}),
    ...(typeof about.dsTransID === 'string' ? { dsTransID: about.dsTransID } : {}),
    ...(typeof about.acsTransID === 'string' ? { acsTransID: about.acsTransID } : {}),
    errorCode: code,
    errorComponent: component,
    errorDescription: description.slice(0, 2048),
    errorDetail: detail.slice(0, 2048),
    ...(typeof about.messageType === 'string' ? { errorMessageType: about.messageType } : {}),
  };
}

/** Why a message cannot be taken: the Erro's code and detail (the field at fault). */
export interface Problem {
  code: ErrorCode;
  detail: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isTransId = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

/**
 * Reads a message's text: JSON, an object, of `types`, a version spoken here, and each of
 * `required` present as a non-empty string (the ids a UUID). Returns the message, or the problem
 * to answer with an Erro (and the message as far as it was read, for the Erro's ids).
 */
export function readMessage(
  text: string,
  types: readonly MessageType[],
  required: readonly string[] = [],
): { message: EmvMessage } | { problem: Problem; partial: Partial<EmvMessage> } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: { code: ERRORS.invalid, detail: 'not JSON' }, partial: {} };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return { problem: { code: ERRORS.invalid, detail: 'not a JSON object' }, partial: {} };
  const m = parsed as Partial<EmvMessage>;
  if (typeof m.messageType !== 'string' || !types.includes(m.messageType))
    return { problem: { code: ERRORS.invalid, detail: `messageType: expected ${types.join(' or ')}` }, partial: m };
  if (typeof m.messageVersion !== 'string' || !(VERSIONS as readonly string[]).includes(m.messageVersion))
    return { problem: { code: ERRORS.version, detail: `messageVersion: ${VERSIONS.join(' or ')}` }, partial: m };
  for (const f of required) {
    const v = (m as Record<string, unknown>)[f];
    if (v === undefined || v === null || v === '') return { problem: { code: ERRORS.missing, detail: f }, partial: m };
    if (typeof v !== 'string' || (f.endsWith('TransID') && !isTransId(v)))
      return { problem: { code: ERRORS.format, detail: f }, partial: m };
  }
  return { message: m as EmvMessage };
}

/** base64url of a message's JSON: how CReq, CRes and the 3DS Method data travel through the browser. */
export const encodeBrowser = (m: object) => Buffer.from(JSON.stringify(m)).toString('base64url');

/** The JSON object in a browser field (base64url, padding tolerated), or undefined. */
export function decodeBrowser(field: unknown): Record<string, unknown> | undefined {
  if (typeof field !== 'string' || field.length > 8192 || !/^[A-Za-z0-9_=-]*$/.test(field)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(field, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export const newTransId = () => randomUUID();
