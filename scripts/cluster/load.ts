// The bounded load of `npm run test:cluster`: merchants' requests through HAProxy, each counted.
// Every write carries an Idempotency-Key; a 503 (or a connection cut) is retried with the same
// key, as a client is told to, and counted as failed. An order is "acknowledged" once a 2xx
// answered its creation: the checks afterwards look for every one of them in the database.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Json } from '../../test/helpers/json.ts';
import { randomPan } from '../../test/helpers/cards.ts';

export interface Figures {
  sent: number;
  ok: number;
  failed: number;
  /** failures by status (or "network") */
  failures: Record<string, number>;
  /** answers retryable as documented: a 503 with Retry-After and an error body; a 409 IdempotencyError (the key still held) */
  retryable: number;
}

export const newFigures = (): Figures => ({ sent: 0, ok: 0, failed: 0, failures: {}, retryable: 0 });

export interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

export class Client {
  /** every order a 201 acknowledged */
  readonly created: string[] = [];
  /** set to a moment (the primary's kill): the first success of a request sent after it is noted */
  mark = 0;
  firstOkAfterMark = 0;

  constructor(
    readonly base: string,
    readonly key: string,
    readonly figures: Figures,
  ) {}

  private auth = () => 'Basic ' + Buffer.from(`${this.key}:`).toString('base64');

  /** One HTTP request, counted; a network failure is status 0. */
  async once(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
    redirect: RequestRedirect = 'manual',
  ): Promise<Answer> {
    this.figures.sent++;
    const sentAt = Date.now();
    try {
      const res = await fetch(url.startsWith('http') ? url : `${this.base}${url}`, {
        method,
        redirect,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: Json = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        /* a page */
      }
      if (res.status < 400) {
        this.figures.ok++;
        if (this.mark && sentAt > this.mark && !this.firstOkAfterMark) this.firstOkAfterMark = Date.now();
      }
      // retryable as documented: a 503 with Retry-After, and from the API (JSON) an error body; a
      // 409 IdempotencyError: the key's claim is held by a request whose answer was lost (a
      // route that calls the acquirer commits its claim first: docs/money.md)
      else
        this.fail(
          String(res.status),
          (res.status === 503 &&
            Boolean(res.headers.get('retry-after')) &&
            (!/json/.test(res.headers.get('content-type') ?? '') || Boolean(parsed?.error))) ||
            (res.status === 409 && parsed?.error?.type === 'IdempotencyError'),
        );
      return { status: res.status, body: parsed, headers: res.headers };
    } catch {
      this.fail('network', false);
      return { status: 0, body: undefined, headers: new Headers() };
    }
  }

  private fail(why: string, retryable: boolean) {
    this.figures.failed++;
    this.figures.failures[why] = (this.figures.failures[why] ?? 0) + 1;
    if (retryable) this.figures.retryable++;
  }

  /** An API call with the key and an Idempotency-Key, retried on 503 / network errors with the same key. */
  async api(method: string, path: string, body?: unknown, expect = [200, 201]): Promise<Answer> {
    const idem: Record<string, string> = method === 'GET' ? {} : { 'idempotency-key': randomUUID() };
    const until = Date.now() + 120_000;
    while (Date.now() < until) {
      const res = await this.once(method, path, body, { authorization: this.auth(), ...idem });
      if (expect.includes(res.status)) return res;
      // the same key still held by a request a killed node was serving: retry later, as the answer says
      const held = res.status === 409 && res.body?.error?.type === 'IdempotencyError';
      if (res.status !== 0 && res.status !== 503 && res.status !== 502 && !held)
        throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`${method} ${path}: no answer within 120 s`);
  }

  /** Creates a card order and pays it through the vault, authenticate and the 3-D Secure pages (frictionless cards). */
  async pay(
    order: Record<string, unknown>,
    txn: Record<string, unknown> = {},
    // a card of its own per payment, as real customers pay: one card paying hundreds of times a
    // minute is what the per-card risk limit refuses (docs/risk.md)
    pan = randomPan(),
  ): Promise<{ id: string; txn: string }> {
    const created = (await this.api('POST', '/v1/orders/', { ...order, transactions: [{ payment_method: 'credit-card', ...txn }] }, [201]))
      .body;
    this.created.push(created.id);
    const t = created.transactions[0];
    const card = (
      await this.api(
        'POST',
        '/vault/v1/cards/',
        { pan, expiry: `12${new Date().getUTCFullYear() + 3}`, name: 'Ada Lovelace', setup_token: t.payment_method_details.setup_token },
        [201],
      )
    ).body;
    const auth = (
      await this.api(
        'POST',
        `/v1/orders/${created.id}/transactions/${t.id}/authenticate/`,
        { vault_token: card.vault_token, cvc: '123' },
        [200],
      )
    ).body;
    let url: string | null = new URL(auth.redirect_url, this.base).toString();
    for (let hop = 0; url && url.startsWith(this.base) && hop < 10; hop++) {
      let res = await this.once('GET', url);
      for (let i = 0; i < 480 && (res.status === 503 || res.status === 502 || res.status === 0); i++) {
        await new Promise((r) => setTimeout(r, 250));
        res = await this.once('GET', url);
      }
      if (res.status < 300 || res.status >= 400) throw new Error(`3-D Secure page ${url}: ${res.status}`);
      url = res.headers.get('location') && new URL(res.headers.get('location')!, url).toString();
    }
    return { id: created.id, txn: t.id };
  }
}

export const order = (ref: string, over: Record<string, unknown> = {}) => ({
  merchant_order_id: ref,
  description: 'Cluster test',
  currency: 'EUR',
  amount: 1000 + Math.floor(Math.random() * 9000),
  return_url: 'https://shop.example/return',
  ...over,
});

/** A webhook receiver: counts each (order, delivery) it was sent; answers 200, after `delayMs` while set. */
export class Receiver {
  server: Server;
  url = '';
  delayMs = 0;
  /** order id -> messages received */
  received = new Map<string, number>();
  total = 0;

  constructor() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        setTimeout(() => {
          try {
            const id = JSON.parse(body).order_id as string;
            this.received.set(id, (this.received.get(id) ?? 0) + 1);
            this.total++;
          } catch {
            /* not ours */
          }
          res.end('ok');
        }, this.delayMs);
      });
    });
  }

  async listen() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hook`;
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(r));
  }
}

/** Runs `workers` loops of fn until stop() is called; answers when all loops have finished. */
export function loop(workers: number, fn: (i: number) => Promise<void>) {
  let stopped = false;
  const errors: Error[] = [];
  const runs = Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; !stopped; i++) {
      try {
        await fn(w * 1_000_000 + i);
      } catch (err) {
        errors.push(err as Error);
        stopped = true;
      }
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(runs);
      if (errors.length) throw errors[0];
    },
  };
}
