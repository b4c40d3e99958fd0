// Which URLs a live project may name: webhook, return and failure URLs of orders, links and the
// project's webhook endpoint. Served to payments, links and webhooks alike, so it lives beneath them.
import { lookup } from 'node:dns/promises';
import type { Ctx } from './context.ts';
import type { Config } from '../../config.ts';
import { invalid } from '../../domain/errors.ts';
import { addressClass, isIpLiteral, isLocalName } from '../../domain/ssrf.ts';
import type { ProjectRow } from '../../domain/entities.ts';

const DNS_TIMEOUT_MS = 2000;
/**
 * How long a name's verdict is kept. Every order of a live shop names the same host or two, and
 * a lookup per order put getaddrinfo (libuv's four threads) in front of every order: under eight
 * concurrent clients orders waited for DNS for up to DNS_TIMEOUT_MS (bench/card-flow.ts --live).
 * The check at the form is advisory for webhooks (delivery looks the name up again, uncached, at
 * connect time) and return URLs only send the customer's browser back; a minute is well inside
 * what a shop's DNS records are cached for anyway.
 */
const VERDICT_MS = 60_000;
const MAX_NAMES = 10_000;
/** name -> its verdict (a promise: concurrent orders naming the same host share one lookup) */
const verdicts = new Map<string, { until: number; problem: Promise<string | undefined> }>();

function nameProblem(host: string): Promise<string | undefined> {
  const now = Date.now();
  const known = verdicts.get(host);
  if (known && known.until > now) return known.problem;
  if (verdicts.size >= MAX_NAMES) verdicts.clear();
  const problem = resolvedProblem(host);
  verdicts.set(host, { until: now + VERDICT_MS, problem });
  return problem;
}

async function resolvedProblem(host: string): Promise<string | undefined> {
  let addresses: { address: string }[];
  try {
    addresses = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('dns timeout')), DNS_TIMEOUT_MS).unref()),
    ]);
  } catch {
    return undefined;
  }
  // one message whatever the address and its class: the form must not tell a merchant what an
  // internal name resolves to (that would map the network Tender runs in)
  if (addresses.some((a) => addressClass(a.address))) return `${host} does not resolve to public addresses only`;
  return undefined;
}

/** Why a URL may not be called for a live project, or undefined. Unresolvable names pass: delivery checks again. */
async function urlProblem(config: Config, url: string): Promise<string | undefined> {
  if (url.startsWith(config.publicBaseUrl + '/')) return undefined; // our own pages
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return 'not a valid URL';
  }
  if (isLocalName(host)) return `${host} is this machine`;
  if (isIpLiteral(host)) {
    const c = addressClass(host);
    return c ? `${host} is a ${c} address` : undefined;
  }
  return nameProblem(host);
}

/** Live projects refuse URLs that point into private networks. Throws a ValidationError naming the field. */
export async function checkPublicUrls(ctx: Pick<Ctx, 'config'>, project: Pick<ProjectRow, 'mode'>, urls: Record<string, unknown>) {
  if (project.mode !== 'live') return;
  for (const [field, url] of Object.entries(urls)) {
    if (typeof url !== 'string' || !url) continue;
    const problem = await urlProblem(ctx.config, url);
    if (problem) throw invalid(field, `${field} must be a public address for a live project: ${problem}`);
  }
}

/** The order fields that name URLs the service calls or sends the customer to. */
export const checkOrderUrls = (
  ctx: Pick<Ctx, 'config'>,
  project: Pick<ProjectRow, 'mode'>,
  input: { webhook_url?: unknown; return_url?: unknown; failure_url?: unknown },
) => checkPublicUrls(ctx, project, { webhook_url: input.webhook_url, return_url: input.return_url, failure_url: input.failure_url });
