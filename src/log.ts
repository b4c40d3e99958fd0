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

/** A digit as it may reach a log: itself, or percent-encoded (%30 to %39). */
const DIGIT = String.raw`(?:\d|%3\d)`;
/**
 * What people and tools put between a card number's digit groups: space, dot, underscore, plus,
 * dash, and their percent-encodings (%20 for a space in a path).
 */
const GAP = String.raw`(?:[ ._+\-]|%20|%2[BbDdEe]|%5[Ff])`;
const UUID = String.raw`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`;
const UUID_WHOLE = new RegExp(`^${UUID}$`, 'i');
/** An API key (test_ or live_ and 43 base64url characters) or a webhook secret (whsec_ and base64). */
const SECRET = String.raw`\b(?:test|live)_[A-Za-z0-9_-]{20,}|\bwhsec_[A-Za-z0-9+/=_-]{16,}`;

/**
 * What is masked in log text: anything shaped like an API key or a webhook secret, and a run of
 * 12 or more digits (plain or percent-encoded), with up to three gap characters between any
 * two (GAP), that could be a card number; unless it is a UUID with a hex letter in it (an
 * order's or transaction's id: about one in twenty of them holds such a run across its dashes,
 * and a log that masks ids cannot be searched for them). The UUID alternative comes before the
 * digit run, so an id is matched whole before any run inside it; an all-digit UUID-shaped string
 * is masked like any other run.
 */
const MASKED = new RegExp(`${SECRET}|${UUID}|${DIGIT}(?:${GAP}{0,3}${DIGIT}){11,}`, 'gi');

/** Text with card-number-like digit runs and key- or secret-shaped words masked (ids kept, see MASKED). */
export const maskDigits = (text: string) =>
  maskUrlSecrets(text).replace(MASKED, (m) => (UUID_WHOLE.test(m) && /[a-f]/i.test(m) ? m : '[masked]'));

/**
 * Path segments after which the next one is a secret: an invitation link (/portal/invite/<token>)
 * is as good as the owner's password until it is used, and one-time links and tokens are too.
 */
const SECRET_AFTER = String.raw`(?:invite|invites|invitations?|tokens?|once|reset|verify)`;
const SECRET_WORD = new RegExp(SECRET, 'g');
const URL_SECRET = new RegExp(String.raw`(/${SECRET_AFTER}/)[A-Za-z0-9_~.%-]{8,}`, 'gi');
/** A route parameter whose value is a secret, by its name (`/invite/:token`). */
const SECRET_PARAM = /(^|_)(token|secret|password|code)$/i;

/**
 * Text with the secrets of URLs masked: the segment after /invite/ (and the other SECRET_AFTER
 * segments), and anything shaped like an API key or a webhook secret. Applied to every line the
 * service writes, whole (createLogger's streamWrite), so a URL quoted in an error or message
 * loses its secret too; digit runs are masked only where they cannot be a field's own number.
 */
export const maskUrlSecrets = (text: string) => text.replace(URL_SECRET, '$1[masked]').replace(SECRET_WORD, '[masked]');

/** A URL as logged: no query string (keys, tokens and search terms travel there), secrets and digit runs masked. */
export const logUrl = (url: string) => maskDigits(url.split('?')[0]);

/** The URL of a matched route with its secret parameters' values masked (whatever the path around them). */
function withoutSecretParams(url: string, params: unknown): string {
  if (!params || typeof params !== 'object') return url;
  let out = url;
  for (const [name, value] of Object.entries(params as Record<string, unknown>))
    if (SECRET_PARAM.test(name) && typeof value === 'string' && value.length >= 4) {
      out = out.split(value).join('[masked]');
      out = out.split(encodeURIComponent(value)).join('[masked]');
    }
  return out;
}

/** Header values as logged, masked like the rest (a card number in Host, a key pasted into a header). */
const maskHeaders = (headers: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(headers ?? {}).map(([k, v]) => [
      k,
      /^(authorization|cookie|set-cookie|proxy-authorization)$/i.test(k) ? '[redacted]' : maskDigits(String(v)),
    ]),
  );

const errSerializer = (err: Error | string) => {
  // a message logged as `err` (req.log.warn({ err: e.message })) is masked like an error's
  if (typeof err === 'string') return maskDigits(err);
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
  params?: unknown;
}

/** mixin: fields added to every line (main.ts passes the current request's trace id). */
export function createLogger(level: string, destination?: pino.DestinationStream, mixin?: () => object) {
  return pino(
    {
      level,
      mixin,
      redact: { paths: REDACT, censor: '[redacted]' },
      // Fastify's request serializer logs the URL as sent: this one replaces it (pino's own win).
      serializers: {
        req: (req: LoggedRequest) => ({
          method: req.method,
          url: logUrl(withoutSecretParams(req.url?.split('?')[0] ?? '', req.params)),
          host: maskDigits(req.host ?? ''),
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
        err: errSerializer,
        headers: maskHeaders,
      },
      hooks: {
        // messages are masked too: an error text may quote what a client sent
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? maskDigits(a) : a)) as Parameters<typeof method>);
        },
        // and every line as written, whatever field carries a URL with a secret in it (issue 42, item 11)
        streamWrite: maskUrlSecrets,
      },
    },
    destination,
  );
}
export type Logger = pino.Logger;
