import type { DirectoryServer, PreqAnswer } from '../authenticator.ts';
import { isRange } from '../../domain/card-ranges.ts';
import { readMessage, VERSION } from './messages.ts';
import { postJson } from './post.ts';

/** What a PReq needs of the binding and the server's options (server.ts ThreeDsBinding, EmvOptions). */
interface PreqSetup {
  tls?: { cert?: string; key?: string; ca?: string };
}

/**
 * The PReq/PRes exchange with a directory server (EMV 3DS 2.2.0 "Preparation"): Tender asks for
 * the DS's card ranges, sending the `serialNum` of the PRes it keeps so the DS answers only the
 * changes since. The PRes is read strictly: a message that is not a PRes of this exchange is no
 * answer (a throw), a range that cannot be read is left out and counted.
 */

const VERSION_TEXT = /^\d+\.\d+\.\d+$/;
const ACTIONS = new Set(['A', 'M', 'D']);

/** The directory server at `url` of binding `b`: its PReq. */
export function directoryServer(url: string, b: PreqSetup, o: { timeoutMs: number }): DirectoryServer {
  return {
    url,
    async preq(serialNum, operationId) {
      const preq = {
        messageType: 'PReq',
        messageVersion: VERSION,
        threeDSServerTransID: operationId,
        threeDSServerRefNumber: 'TENDER',
        ...(serialNum ? { serialNum } : {}),
      };
      const text = await postJson(url, preq, { timeoutMs: o.timeoutMs, tls: b.tls });
      return readPres(text, operationId, serialNum);
    },
  };
}

/** A PRes's text as the refresh takes it; throws when it is not a good PRes for the PReq `operationId`. */
export function readPres(text: string, operationId: string, sentSerial: string | undefined): PreqAnswer {
  const read = readMessage(text, ['PRes', 'Erro'], ['threeDSServerTransID']);
  if ('problem' in read) throw new Error(`PRes not valid: ${read.problem.detail}`);
  const m = read.message;
  if (m.messageType === 'Erro') throw new Error(`the directory server answered Erro ${String(m.errorCode)} (${String(m.errorDetail)})`);
  if (m.threeDSServerTransID !== operationId) throw new Error('PRes not valid: threeDSServerTransID');
  if (typeof m.serialNum !== 'string' || !m.serialNum || m.serialNum.length > 20) throw new Error('PRes not valid: serialNum');
  const data = m.cardRangeData ?? [];
  if (!Array.isArray(data)) throw new Error('PRes not valid: cardRangeData');
  let skipped = 0;
  const ranges: PreqAnswer['ranges'] = [];
  for (const r of data as Record<string, unknown>[]) {
    const str = (k: string) => (typeof r?.[k] === 'string' && r[k] ? (r[k] as string) : undefined);
    const start = str('startRange');
    const end = str('endRange');
    const action = str('actionInd') ?? 'A';
    const acsStart = str('acsStartProtocolVersion');
    const acsEnd = str('acsEndProtocolVersion');
    const versions = [acsStart, acsEnd, str('dsStartProtocolVersion'), str('dsEndProtocolVersion')];
    const method = str('threeDSMethodURL');
    const ok =
      start &&
      end &&
      isRange(start, end) &&
      ACTIONS.has(action) &&
      (action === 'D' || (acsStart && acsEnd)) &&
      versions.every((v) => v === undefined || VERSION_TEXT.test(v)) &&
      (method === undefined || (/^https?:\/\//.test(method) && method.length <= 2048));
    if (!ok) {
      skipped++;
      continue;
    }
    ranges.push({
      action: action as 'A' | 'M' | 'D',
      start_range: start,
      end_range: end,
      acs_start_version: acsStart ?? '',
      acs_end_version: acsEnd ?? '',
      ds_start_version: versions[2] ?? null,
      ds_end_version: versions[3] ?? null,
      method_url: method ?? null,
    });
  }
  return { serialNum: m.serialNum, full: !sentSerial, ranges, skipped };
}
