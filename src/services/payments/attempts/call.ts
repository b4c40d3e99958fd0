import { AsyncLocalStorage } from 'node:async_hooks';
import { nowFor, type Ctx } from '../../platform/context.ts';
import { AUTHENTICATOR_CALLS, type Authenticator } from '../../../acquirer/authenticator.ts';
import type { Connector, Outcome } from '../../../acquirer/connector.ts';
import type { AttemptRow } from '../../../store/payments/attempts.ts';
import type { ProjectRow } from '../../../domain/entities.ts';

/*
 * The call of an attempt (docs/money.md "Acquirer attempts"): never inside a database
 * transaction, bounded by ACQUIRER_TIMEOUT_MS, a first call not sent past its deadline or while
 * the link is down; and the guards that make every connector and authenticator call go through it.
 */

/** The acquirer's answer to one call, or why there was none. */
export type Answer<T = Outcome> = { outcome: T } | { error: string };

/**
 * A programming error: an acquirer call asked for while the caller holds a database transaction
 * (Db.holding: within(), or a tx() callback). The attempt's record would commit only with that
 * transaction, after the answer, and a crash meanwhile would lose it while the acquirer moved the
 * money; the connection and its row locks would be held for as long as the acquirer takes. The
 * call is not made.
 */
export class HeldTransactionError extends Error {
  constructor(a: Pick<AttemptRow, 'kind'> & { id?: string }) {
    super(
      `programming error: the ${a.kind} call${a.id ? ` of attempt ${a.id}` : ''} was asked for inside a database transaction; ` +
        'record and commit the attempt, then call the acquirer with no transaction open (docs/money.md "Acquirer attempts")',
    );
    this.name = 'HeldTransactionError';
  }
}

/**
 * Refuses (HeldTransactionError) when the caller holds a transaction: callAcquirer asks it, and a
 * use case that records an attempt asks it first, so a broken rule records nothing either.
 */
export function refuseHeld(ctx: Pick<Ctx, 'db'>, a: Pick<AttemptRow, 'kind'> & { id?: string }) {
  if (ctx.db.holding()) throw new HeldTransactionError(a);
}

/** A programming error: a connector's or an authenticator's call made other than through callAcquirer. */
export class UnguardedCallError extends Error {
  constructor(method: string) {
    super(`programming error: ${method} was called outside callAcquirer (services/payments/attempts/call.ts); it was not sent`);
    this.name = 'UnguardedCallError';
  }
}

/** The attempt whose call runs now, set by callAcquirer for the call and all it starts. */
const guardedCalls = new AsyncLocalStorage<string>();

/** The connector methods that reach the acquirer (everything but its name, capabilities and notification reader). */
const CALLS = ['authorize', 'capture', 'void', 'refund', 'inquire', 'reverse'] as const;
const guarded = new WeakMap<object, object>();

/** `inner` with each of `methods` refusing to run unless made through callAcquirer. */
function guard<T extends object>(inner: T, methods: readonly string[]): T {
  let g = guarded.get(inner) as T | undefined;
  if (!g) {
    const calls = Object.fromEntries(
      methods.map((m) => [
        m,
        (req: never) => {
          if (guardedCalls.getStore() === undefined) return Promise.reject(new UnguardedCallError(m));
          return (inner as Record<string, (r: never) => Promise<unknown>>)[m].call(inner, req);
        },
      ]),
    );
    g = Object.assign(Object.create(inner) as T, calls);
    guarded.set(inner, g);
  }
  return g;
}

/**
 * The connector as the services get it (connectorFor): each of its calls refuses to run unless
 * made through callAcquirer, so no path can reach the acquirer without the attempt recorded and
 * committed first and no transaction held.
 */
export const guardConnector = (inner: Connector): Connector => guard(inner, CALLS);

/** The authenticator as the services get it (authenticatorFor): its calls too only through callAcquirer. */
export const guardAuthenticator = (inner: Authenticator): Authenticator => guard(inner, AUTHENTICATOR_CALLS);

/**
 * Calls the acquirer for an attempt: never inside a database transaction (it throws
 * HeldTransactionError). The timeout and any
 * throw become `error` (the cause is logged with the attempt id; a connector never puts card data
 * in its errors).
 */
export async function callAcquirer<T = Outcome>(ctx: Ctx, a: Pick<AttemptRow, 'id' | 'kind'>, call: () => Promise<T>): Promise<Answer<T>> {
  // outside the try: a broken rule is the caller's bug, never "no answer from the acquirer"
  refuseHeld(ctx, a);
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ctx.config.acquirer.timeoutMs} ms`)), ctx.config.acquirer.timeoutMs);
      timer.unref();
    });
    return { outcome: await Promise.race([guardedCalls.run(a.id, call), timeout]) };
  } catch (err) {
    const error = (err as Error).message || String(err);
    ctx.log.warn({ attempt: { id: a.id, kind: a.kind }, err: error }, 'acquirer gave no answer: the attempt stays in flight');
    return { error };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The answer of a money operation whose first call was not sent because its send deadline had
 * passed (sendFirstCall): nothing reached the acquirer, so the attempt fails at once.
 */
export const NOT_SENT: Outcome = {
  status: 'error',
  reason: 'processing_error',
  response_code: '96',
  response_code_description: "Not sent: the service was held up past the call's deadline; nothing was charged",
};

/**
 * The answer of a money operation whose first call was not sent because the connector's link to
 * its acquirer is known to be down (Connector.linkDown): nothing was sent, nothing is to recover,
 * the attempt fails at once and the customer may try again.
 */
export const LINK_DOWN: Outcome = {
  status: 'error',
  reason: 'processing_error',
  response_code: '91',
  response_code_description: 'Not sent: the link to the acquirer is down; nothing was charged',
};

/**
 * The first call of an authorization, capture, void or refund: callAcquirer, unless the call's
 * send deadline has passed, when it is not made and the answer is NOT_SENT (logged with the
 * attempt id), or `connector`'s link is known to be down, when it is not made either and the
 * answer is LINK_DOWN.
 *
 * The deadline (on the project's clock): recovery asks the acquirer about the attempt at its
 * recover_at, and an acquirer's "not found" is only true if no call can still arrive after it. A
 * call is Tender's for at most ACQUIRER_TIMEOUT_MS; half of the rest of ACQUIRER_RECOVERY_MS
 * (greater, config.ts) is left for a network that delivers it later than that. Without it, a node
 * held up between record and call (a pause, a loaded machine) could send a refund after the
 * inquiry failed it: the acquirer refunds, Tender does not.
 */
export function sendFirstCall(
  ctx: Ctx,
  project: Pick<ProjectRow, 'clock_offset_ms'>,
  a: Pick<AttemptRow, 'id' | 'kind' | 'recover_at'>,
  call: () => Promise<Outcome>,
  connector?: Pick<Connector, 'linkDown'>,
): Promise<Answer> {
  if (connector?.linkDown?.()) {
    ctx.log.warn({ attempt: { id: a.id, kind: a.kind } }, 'acquirer call not sent: the link to the acquirer is down');
    return Promise.resolve({ outcome: LINK_DOWN });
  }
  const { timeoutMs, recoveryMs } = ctx.config.acquirer;
  const deadline = a.recover_at ? a.recover_at.getTime() - timeoutMs - (recoveryMs - timeoutMs) / 2 : Infinity;
  const late = nowFor(project).getTime() - deadline;
  if (late <= 0) return callAcquirer(ctx, a, call);
  ctx.log.warn({ attempt: { id: a.id, kind: a.kind }, late_ms: late }, 'acquirer call not sent: its deadline had passed');
  return Promise.resolve({ outcome: NOT_SENT });
}
