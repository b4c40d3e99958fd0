/** ds-host's journal (admin `journal`): the messages in and out, with no card number. */

/** One line of the host's journal: a message in or out, with no card number. */
export interface DsJournalLine {
  at: string;
  dir: 'in' | 'out';
  messageType: string;
  threeDSServerTransID?: string;
  dsTransID?: string;
  acsTransID?: string;
  transStatus?: string;
  eci?: string;
  errorCode?: string;
  errorDetail?: string;
  resultsStatus?: string;
  threeDSCompInd?: string;
  threeDSRequestorChallengeInd?: string;
  messageVersion?: string;
  /** a PReq's (the serial number it sends back) or a PRes's */
  serialNum?: string;
  /** a PRes's number of card ranges */
  ranges?: number;
  /** an AReq's browser fields (what the 3DS Server measured of the customer's browser) */
  browser?: Record<string, string | boolean>;
}

const BROWSER_FIELDS = [
  'browserJavascriptEnabled',
  'browserJavaEnabled',
  'browserColorDepth',
  'browserScreenHeight',
  'browserScreenWidth',
  'browserTZ',
  'browserLanguage',
] as const;

export const journalLine = (dir: 'in' | 'out', m: Record<string, unknown>): DsJournalLine => {
  const keep = ['messageType', 'messageVersion', 'threeDSServerTransID', 'dsTransID', 'acsTransID', 'transStatus', 'eci'] as const;
  const more = ['errorCode', 'errorDetail', 'resultsStatus', 'threeDSCompInd', 'threeDSRequestorChallengeInd'] as const;
  const line: Record<string, string> = { at: new Date().toISOString(), dir };
  for (const k of [...keep, ...more, 'serialNum'] as const) if (typeof m[k] === 'string') line[k] = m[k] as string;
  line.messageType ??= '?';
  const browser = Object.fromEntries(
    BROWSER_FIELDS.filter((k) => typeof m[k] === 'string' || typeof m[k] === 'boolean').map((k) => [k, m[k] as string | boolean]),
  );
  return {
    ...line,
    ...(Array.isArray(m.cardRangeData) ? { ranges: m.cardRangeData.length } : {}),
    ...(m.messageType === 'AReq' ? { browser } : {}),
  } as unknown as DsJournalLine;
};
