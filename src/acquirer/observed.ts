import type { Authenticator } from './authenticator.ts';
import type { Connector, Outcome } from './connector.ts';
import { acquirer, payments, type ModeLabel } from '../telemetry/metrics.ts';
import { paymentMethodLabel } from '../domain/payment-methods.ts';
import { traced } from '../telemetry/tracing.ts';

type OnError = (operation: string, outcome: string) => void;

/** One call timed, counted and traced under `name` (a connector's or an authenticator's). */
function timing(name: string, mode: ModeLabel, onError?: OnError) {
  return async <T>(operation: string, run: () => Promise<T>, outcomeOf: (r: T) => string): Promise<T> => {
    acquirer.inFlight.inc({ mode, connector: name });
    const end = acquirer.duration.startTimer({ mode, connector: name, operation });
    try {
      const r = await traced(`acquirer ${operation}`, { 'tender.acquirer': name, 'tender.operation': operation }, async (span) => {
        const r = await run();
        span?.setAttribute('tender.outcome', outcomeOf(r));
        return r;
      });
      const outcome = outcomeOf(r);
      acquirer.calls.inc({ mode, connector: name, operation, outcome });
      if (outcome === 'error') onError?.(operation, outcome);
      return r;
    } catch (err) {
      const outcome = isTimeout(err) ? 'timeout' : 'failed';
      acquirer.calls.inc({ mode, connector: name, operation, outcome });
      onError?.(operation, outcome);
      throw err;
    } finally {
      end();
      acquirer.inFlight.dec({ mode, connector: name });
    }
  };
}

const threeDs = (r: { trans_status: string }) => `trans_status_${r.trans_status}`;

/**
 * An authenticator (authenticator.ts) as operators see it: its calls in the same families as the
 * acquirer's (operation authenticate3ds, completeChallenge; outcome trans_status_X), under the
 * authenticator's name.
 */
export function observedAuthenticator(inner: Authenticator, mode: ModeLabel, onError?: OnError): Authenticator {
  const call = timing(inner.name, mode, onError);
  return {
    name: inner.name,
    authenticate3ds: (req) => call('authenticate3ds', () => inner.authenticate3ds(req), threeDs),
    completeChallenge: (req) => call('completeChallenge', () => inner.completeChallenge(req), threeDs),
    ...(inner.directoryFor ? { directoryFor: inner.directoryFor.bind(inner) } : {}),
    ...(inner.directories ? { directories: inner.directories.bind(inner) } : {}),
  };
}

/**
 * A connector as operators see it: the same calls, timed and counted (tender_acquirer_*,
 * tender_authorizations_total) and, with tracing on, each a child span of the request or job
 * that made it. main.ts wraps every connector it builds; the payment services never know.
 * Labels and span attributes are the connector's name, the operation, the outcome and the
 * decline reason, and the mode of the projects it serves (`mode`: main.ts wraps the test and the
 * live connectors apart) with the payment method for authorizations: never the card, the amount
 * or an id.
 */
export function observed(inner: Connector, mode: ModeLabel, onError?: OnError): Connector {
  const name = inner.name;
  const call = timing(name, mode, onError);
  const status = (o: Outcome) => o.status;
  return {
    name,
    capabilities: inner.capabilities,
    ...(inner.notification ? { notification: inner.notification.bind(inner) } : {}),
    ...(inner.linkDown ? { linkDown: inner.linkDown.bind(inner) } : {}),
    async authorize(req) {
      const o = await call('authorize', () => inner.authorize(req), status);
      const method = paymentMethodLabel(req.payment_method);
      payments.authorizations.inc({
        mode,
        method,
        connector: name,
        brand: brandOf(req.card.brand),
        outcome: o.status,
        reason: o.reason ?? '',
      });
      if (o.status === 'processing') acquirer.unknown.inc({ mode, connector: name });
      return o;
    },
    async inquire(req) {
      const o = await call('inquire', () => inner.inquire(req), status);
      if (o.status !== 'processing') acquirer.recoveries.inc({ mode, connector: name, outcome: o.status });
      return o;
    },
    capture: (req) => call('capture', () => inner.capture(req), status),
    void: (req) => call('void', () => inner.void(req), status),
    refund: (req) => call('refund', () => inner.refund(req), status),
    async reverse(req) {
      const o = await call('reverse', () => inner.reverse(req), status);
      acquirer.recoveries.inc({ mode, connector: name, outcome: `reversal_${o.status}` });
      return o;
    },
  };
}

const BRANDS = new Set([
  'visa',
  'mastercard',
  'amex',
  'discover',
  'jcb',
  'diners',
  'unionpay',
  'maestro',
  'mir',
  'elo',
  'hiper',
  'hipercard',
  'cartes_bancaires',
]);
/** A brand label from a known set (a connector might pass anything through). */
const brandOf = (b: string | undefined) => (b && BRANDS.has(b.toLowerCase()) ? b.toLowerCase() : 'other');

const isTimeout = (err: unknown) => {
  const e = err as { name?: string; code?: string } | undefined;
  return e?.name === 'TimeoutError' || e?.name === 'AbortError' || e?.code === 'ETIMEDOUT' || e?.code === 'UND_ERR_HEADERS_TIMEOUT';
};
