/**
 * Attempts of a webhook delivery that were numbered but never got an outcome written: the
 * attempt is numbered (and its delivery held) before the POST, and its outcome is written after
 * the answer, so a process that dies in between leaves a number without a log row. The log shows
 * such an attempt as interrupted rather than skipping its number. The newest attempt of a pending
 * delivery whose hold has not lapsed is still under way, not interrupted.
 */
export function interruptedAttempts(
  d: { status: string; attempts: number; next_attempt_at: Date | null },
  logged: readonly number[],
  now: Date,
): number[] {
  const seen = new Set(logged);
  const underWay = d.status === 'pending' && d.next_attempt_at !== null && d.next_attempt_at > now ? d.attempts : 0;
  const out: number[] = [];
  for (let n = 1; n <= d.attempts; n++) if (!seen.has(n) && n !== underWay) out.push(n);
  return out;
}

/** What the delivery log says of an interrupted attempt. */
export const INTERRUPTED =
  'interrupted: the service stopped while this attempt was under way, so its outcome was not recorded (the receiver may have had it; the next attempt carries the same webhook-id)';
