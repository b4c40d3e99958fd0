import type { Connector, Outcome } from './connector.ts';
import { acquirer, payments } from '../telemetry/metrics.ts';
import { traced } from '../telemetry/tracing.ts';

/**
 * A connector as operators see it: the same calls, timed and counted (tender_acquirer_*,
 * tender_authorizations_total) and, with tracing on, each a child span of the request or job
 * that made it. main.ts wraps every connector it builds; the payment services never know.
 * Labels and span attributes are the connector's name, the operation, the outcome and the
 * decline reason: never the card, the amount or an id.
 */
export function observed(inner: Connector, onError?: (operation: string, outcome: string) => void): Connector {
  const name = inner.name;
  const call = async <T>(operation: string, run: () => Promise<T>, outcomeOf: (r: T) => string): Promise<T> => {
    acquirer.inFlight.inc({ connector: name });
    const end = acquirer.duration.startTimer({ connector: name, operation });
    try {
      const r = await traced(`acquirer ${operation}`, { 'tender.acquirer': name, 'tender.operation': operation }, async (span) => {
        const r = await run();
        span?.setAttribute('tender.outcome', outcomeOf(r));
        return r;
      });
      const outcome = outcomeOf(r);
      acquirer.calls.inc({ connector: name, operation, outcome });
      if (outcome === 'error') onError?.(operation, outcome);
      return r;
    } catch (err) {
      const outcome = isTimeout(err) ? 'timeout' : 'failed';
      acquirer.calls.inc({ connector: name, operation, outcome });
      onError?.(operation, outcome);
      throw err;
    } finally {
      end();
      acquirer.inFlight.dec({ connector: name });
    }
  };
  const status = (o: Outcome) => o.status;
  const threeDs = (r: { trans_status: string }) => `trans_status_${r.trans_status}`;
  return {
    name,
    capabilities: inner.capabilities,
    ...(inner.notification ? { notification: inner.notification.bind(inner) } : {}),
    authenticate3ds: (req) => call('authenticate3ds', () => inner.authenticate3ds(req), threeDs),
    completeChallenge: (req) => call('completeChallenge', () => inner.completeChallenge(req), threeDs),
    async authorize(req) {
      const o = await call('authorize', () => inner.authorize(req), status);
      payments.authorizations.inc({ connector: name, brand: brandOf(req.card.brand), outcome: o.status, reason: o.reason ?? '' });
      if (o.status === 'processing') acquirer.unknown.inc({ connector: name });
      return o;
    },
    async inquire(req) {
      const o = await call('inquire', () => inner.inquire(req), status);
      if (o.status !== 'processing') acquirer.recoveries.inc({ connector: name, outcome: o.status });
      return o;
    },
    capture: (req) => call('capture', () => inner.capture(req), status),
    void: (req) => call('void', () => inner.void(req), status),
    refund: (req) => call('refund', () => inner.refund(req), status),
    async reverse(req) {
      const o = await call('reverse', () => inner.reverse(req), status);
      acquirer.recoveries.inc({ connector: name, outcome: `reversal_${o.status}` });
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
