import pino from 'pino';

/** Paths that may carry secrets; their values never reach a log line. */
export const REDACT = [
  'pan', '*.pan', 'cvc', '*.cvc', 'api_key', '*.api_key', 'apiKey',
  'req.headers.authorization', 'headers.authorization', 'authorization',
  'walletBPayMessage', '*.walletBPayMessage', 'secret', '*.secret',
];

export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}
export type Logger = pino.Logger;
