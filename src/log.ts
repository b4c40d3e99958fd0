import pino from 'pino';

/** Paths that may carry secrets; their values never reach a log line. */
const REDACT = [
  'pan',
  '*.pan',
  'cvc',
  '*.cvc',
  'api_key',
  '*.api_key',
  'apiKey',
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'walletBPayMessage',
  '*.walletBPayMessage',
  'secret',
  '*.secret',
  'name',
  '*.name',
  'cardholder_name',
  '*.cardholder_name',
];

/**
 * A run of 12 or more digits, optionally grouped by spaces or dashes, could be a card number;
 * unless it lies within a UUID with a hex letter in it (an order's or transaction's id: about
 * one in twenty of them holds such a run across its dashes, and a log that masks ids cannot be
 * searched for them). The UUID alternative comes first, so an id is matched whole before any
 * run inside it; an all-digit UUID-shaped string is masked like any other run.
 */
const DIGIT_RUN = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\d(?:[ -]?\d){11,}/gi;

/** Text with every digit run that could be a card number masked (ids kept, see DIGIT_RUN). */
export const maskDigits = (text: string) => text.replace(DIGIT_RUN, (m) => (/[a-f]/i.test(m) ? m : '[masked]'));

/** A URL as logged: no query string (keys, tokens and search terms travel there), digit runs masked. */
export const logUrl = (url: string) => maskDigits(url.split('?')[0]);

const errSerializer = (err: Error) => {
  const out = pino.stdSerializers.err(err);
  if (typeof out.message === 'string') out.message = maskDigits(out.message);
  if (typeof out.stack === 'string') out.stack = maskDigits(out.stack);
  return out;
};

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      // Fastify's request serializer logs the URL as sent: this one replaces it (pino's own win).
      serializers: {
        req: (req: LoggedRequest) => ({
          method: req.method,
          url: logUrl(req.url ?? ''),
          host: req.host,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
        err: errSerializer,
      },
      hooks: {
        // messages are masked too: an error text may quote what a client sent
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? maskDigits(a) : a)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}
export type Logger = pino.Logger;
