import pino from 'pino';

/** Paths that may carry secrets; their values never reach a log line. */
export const REDACT = [
  'pan', '*.pan', 'cvc', '*.cvc', 'api_key', '*.api_key', 'apiKey',
  'req.headers.authorization', 'headers.authorization', 'authorization',
  'walletBPayMessage', '*.walletBPayMessage', 'secret', '*.secret',
  'name', '*.name', 'cardholder_name', '*.cardholder_name',
];

/** A run of 12 or more digits, optionally grouped by spaces or dashes, could be a card number. */
const DIGIT_RUN = /\d(?:[ -]?\d){11,}/g;

/** Text with every digit run that could be a card number masked. */
export const maskDigits = (text: string) => text.replace(DIGIT_RUN, '[masked]');

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
        req: (req: LoggedRequest) => ({ method: req.method, url: logUrl(req.url ?? ''), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort }),
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
