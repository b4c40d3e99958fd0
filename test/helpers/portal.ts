import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../../src/services/portal/users.ts';
import type { TestService } from './service.ts';
import type { Json } from './json.ts';

/** Portal helpers: users, a cookie-keeping HTTP client, browser sign-in and axe-core checks. */

export const PASSWORD = 'correct horse battery staple';
let seq = 0;

/** A portal user of the test project's merchant (or of the merchant given). */
export async function portalUser(t: TestService, merchantId = t.project.merchant_id) {
  const email = `user${++seq}-${Date.now()}@shop.example`;
  await createUser(t.svc.ctx, { merchantId, email, password: PASSWORD });
  return { email, password: PASSWORD };
}

export interface PortalResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/** A browser without a browser: keeps cookies, reads the CSRF token of the last page. */
export class PortalClient {
  cookies = new Map<string, string>();
  csrf = '';
  /** the one-time token of the last page's creating forms */
  once = '';
  constructor(readonly t: TestService) {}

  get base() {
    return this.t.config.portalUrl;
  }

  async req(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<PortalResponse> {
    const res = await fetch(path.startsWith('http') ? path : `${this.base}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      if (attrs.some((a) => /max-age=0/i.test(a.trim()))) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(i + 1));
    }
    const text = await res.text();
    const token = /name="csrf" value="([^"]+)"/.exec(text);
    if (token) this.csrf = token[1];
    const once = /name="once" value="([^"]+)"/.exec(text);
    if (once) this.once = once[1];
    return { status: res.status, headers: res.headers, text, location: res.headers.get('location') };
  }

  get = (path: string) => this.req('GET', path);
  /** A form post with the CSRF and one-time tokens of the last page (unless the form names its own). */
  post = (path: string, form: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    this.req('POST', path, { csrf: this.csrf, ...(this.once ? { once: this.once } : {}), ...form }, headers);

  async signIn(email: string, password: string): Promise<PortalResponse> {
    await this.get('/sign-in');
    return this.post('/sign-in', { email, password });
  }
}

/** Signs in through the real sign-in page; lands on the home of the first project. */
export async function signInPage(page: Page, t: TestService, user: { email: string; password: string }) {
  await page.goto(`${t.config.portalUrl}/sign-in`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/portal\/projects\/[0-9a-f-]{36}\/$/);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Runs axe-core in the page (evaluated through the debugger, so the page's CSP stays as it is). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const r = await (window as Json).axe.run(document);
    return r.violations.map((v: Json) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n: Json) => n.target.join(' ')).join(', ')}`);
  });
  return violations as string[];
}

export async function assertAccessible(page: Page, what: string) {
  const v = await axeViolations(page);
  assert.deepEqual(v, [], `axe-core on ${what} (${page.url()})`);
}

export const VIEWPORTS = {
  phone: { viewport: { width: 375, height: 740 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true },
  desktop: { viewport: { width: 1280, height: 900 } },
} as const;

/** A context in English that records CSP complaints and script errors. */
export async function portalContext(browser: Browser, kind: keyof typeof VIEWPORTS = 'desktop') {
  const context = await browser.newContext({ ...VIEWPORTS[kind], locale: 'en-GB' });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  return { context, page, problems };
}
