import { answerMti, type Message } from './codec.ts';

/**
 * Is this answer the answer to this request? The link pairs them by terminal (41) and STAN (11);
 * then every field the answer echoes must say what the request said: its processing code (3),
 * amount (4), currency (49), RRN (37) and original data elements (90). A field the request
 * carried and the answer leaves out is not compared (hosts may echo less); a field the answer
 * carries and the request did not is a mismatch (it names something this request never did).
 * docs/acquirer-iso8583.md "Answers checked against their requests".
 */

/** The fields compared, with what each holds (what a problem names). */
const ECHOED: Readonly<Record<number, string>> = {
  3: 'processing code',
  4: 'amount',
  11: 'STAN',
  37: 'RRN',
  41: 'terminal',
  49: 'currency',
  90: 'original data elements',
};

/** Fixed n fields travel left-padded with zeros, an/ans ones right-padded with spaces: compared without the padding. */
const bare = (v: string) => (/^\d+$/.test(v) ? v.replace(/^0+(?=\d)/, '') : v.trimEnd());

export interface AnswerCheck {
  /** what does not match, one line per field (no card data: the PAN and expiry are never compared) */
  problems: string[];
  /** field 39 is 10, "approved for partial amount": what the host approved (field 4), when it is a smaller positive amount */
  partial?: number;
}

export function checkAnswer(request: Message, answer: Message): AnswerCheck {
  const problems: string[] = [];
  if (answer.mti !== answerMti(request.mti)) problems.push(`MTI: ${answer.mti} does not answer ${request.mti}`);
  const partialCode = answer.fields[39]?.trim() === '10';
  let partial: number | undefined;
  for (const n of Object.keys(ECHOED).map(Number)) {
    const sent = request.fields[n];
    const got = answer.fields[n];
    if (got === undefined || (sent !== undefined && bare(sent) === bare(got))) continue;
    if (n === 4 && partialCode && sent !== undefined) {
      // a partial approval answers the approved amount in field 4: below what was asked, above 0
      const approved = Number(bare(got));
      if (Number.isSafeInteger(approved) && approved > 0 && approved < Number(bare(sent))) {
        partial = approved;
        continue;
      }
    }
    problems.push(
      sent === undefined
        ? `field ${n} (${ECHOED[n]}): answered ${JSON.stringify(got)}, not sent`
        : `field ${n} (${ECHOED[n]}): sent ${JSON.stringify(sent)}, answered ${JSON.stringify(got)}`,
    );
  }
  return { problems, ...(partial !== undefined ? { partial } : {}) };
}
