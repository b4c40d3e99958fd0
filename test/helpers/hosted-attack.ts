// The hosted-page card tester of issue 44 (test/e2e/risk-velocity.test.ts, bench/card-testing.ts):
// a browser bound to one loopback source address, filling in an order page's card form.
import { Agent, fetch as undiciFetch } from 'undici';
import type { Json } from './json.ts';

export interface Browser {
  get(url: string | URL, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** A browser from one loopback address (127.0.0.0/8 is all local on Linux), redirects not followed. */
export function browserFrom(address: string): Browser {
  const agent = new Agent({ localAddress: address });
  const get = (url: string | URL, init: RequestInit = {}) =>
    undiciFetch(url, { ...(init as Json), dispatcher: agent, redirect: 'manual' }) as unknown as Promise<Response>;
  return { get, close: () => agent.destroy() };
}

/**
 * The customer on the hosted order page at `base`: the card form filled in, and the redirects
 * followed until they leave the 3-D Secure page. Answers the last status, 0 when the page had no
 * card form (the order is over).
 */
export async function hostedAttempt(base: string, browser: Browser, orderUrl: string, pan: string): Promise<number> {
  const page = await (await browser.get(orderUrl)).text();
  const form = /<form method="post" action="([^"]+)" novalidate class="card-form"[\s\S]*?name="csrf" value="([^"]+)"/.exec(page);
  if (!form) return 0;
  let res = await browser.get(new URL(form[1]!.replace(/&amp;/g, '&'), base), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(base).origin },
    body: new URLSearchParams({ csrf: form[2]!, pan, expiry: '12/34', cvc: '123', name: 'Card Tester' }).toString(),
  });
  for (let hop = 0; (res.status === 302 || res.status === 303) && hop < 6; hop++) {
    const next = new URL(res.headers.get('location')!, base);
    if (!next.pathname.includes('/3ds/')) break;
    await res.arrayBuffer();
    res = await browser.get(next);
  }
  await res.arrayBuffer();
  return res.status;
}
