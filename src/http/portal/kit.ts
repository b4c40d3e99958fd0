import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../../services/platform/context.ts';
import { merchantName, projectOf, projectsOf, type Actor } from '../../services/portal/actions.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { ActiveSession } from '../../services/portal/users.ts';
import { runOnce } from '../../services/portal/once.ts';
import { LOCALES, fromAcceptLanguage, type Locale } from '../pay/i18n.ts';
import { PORTAL_STRINGS, type PortalStrings } from './i18n.ts';
import { layout, PORTAL_CSP, type NavItem } from './view.ts';
import { isUuid } from '../../domain/ids.ts';
import { allows, type Capability } from '../../domain/roles.ts';
import { setPageHeaders } from '../pay/security.ts';

/** What every portal route shares: cookies, CSRF tokens, the signed-in user, page rendering. */

export interface PortalState {
  locale: Locale;
  t: PortalStrings;
  session?: ActiveSession;
  /** the CSRF token of this session's forms (or of the sign-in form) */
  csrf: string;
  /** the pre-session cookie value the sign-in form's token is bound to */
  pre?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    portal: PortalState;
  }
}

export const COOKIE = { session: 'tender_portal', pre: 'tender_portal_pre', lang: 'tender_lang' } as const;

/**
 * The request's cookies. One that is not valid percent-encoding (another application's
 * `analytics=50%off` on the same host) is skipped, never an error: ours are all plain base64url.
 */
export function cookiesOf(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    try {
      out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      // not ours: ignored
    }
  }
  return out;
}

export class Kit {
  readonly base: string;
  readonly secure: boolean;
  readonly origin: string;
  private readonly csrfKey: Buffer;

  constructor(readonly ctx: Ctx) {
    const url = new URL(ctx.config.portalUrl);
    this.base = url.pathname.replace(/\/+$/, '');
    this.secure = url.protocol === 'https:';
    this.origin = url.origin;
    this.csrfKey = Buffer.from(hkdfSync('sha256', ctx.masterKey, Buffer.alloc(0), 'tender/portal/csrf/v1', 32));
  }

  /** Cookies live under the portal's path, HttpOnly, SameSite=Lax, Secure on https. */
  setCookie(reply: FastifyReply, name: string, value: string, maxAgeSeconds?: number) {
    const attrs = [`${name}=${encodeURIComponent(value)}`, `Path=${this.base || '/'}`, 'HttpOnly', 'SameSite=Lax'];
    if (this.secure) attrs.push('Secure');
    if (maxAgeSeconds !== undefined) attrs.push(`Max-Age=${maxAgeSeconds}`);
    reply.header('set-cookie', attrs.join('; ')); // Fastify adds each set-cookie as a header of its own
  }

  /** A form token bound to the session (or to the pre-session cookie of the sign-in form). */
  csrfFor(binding: string) {
    return createHmac('sha256', this.csrfKey).update(`portal\n${binding}`).digest('base64url');
  }

  checkCsrf(binding: string | undefined, token: unknown): boolean {
    if (!binding || typeof token !== 'string') return false;
    const want = Buffer.from(this.csrfFor(binding));
    const got = Buffer.from(token);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /** A browser that says where a form came from must say us ('null' is a same-origin POST under no-referrer). */
  originAllowed(req: FastifyRequest) {
    const o = req.headers.origin;
    return !o || o === 'null' || o === this.origin;
  }

  newPre() {
    return randomBytes(18).toString('base64url');
  }

  /** The language: ?lang= (remembered in a cookie), else the cookie, else Accept-Language. */
  localeOf(req: FastifyRequest, reply: FastifyReply): Locale {
    const asked = (req.query as Record<string, unknown> | undefined)?.lang;
    if (typeof asked === 'string' && (LOCALES as readonly string[]).includes(asked)) {
      this.setCookie(reply, COOKIE.lang, asked, 365 * 24 * 3600);
      return asked as Locale;
    }
    const saved = cookiesOf(req)[COOKIE.lang];
    if (saved && (LOCALES as readonly string[]).includes(saved)) return saved as Locale;
    return fromAcceptLanguage(req.headers['accept-language']) ?? 'en';
  }

  state(locale: Locale): Pick<PortalState, 'locale' | 't'> {
    return { locale, t: PORTAL_STRINGS[locale] };
  }

  /** Whether the signed-in user's role allows `cap` (domain/roles.ts): for showing only what they may use. */
  can(req: FastifyRequest, cap: Capability): boolean {
    const user = req.portal.session?.user;
    return Boolean(user && allows(user.role, cap));
  }

  actor(req: FastifyRequest): Actor {
    return { user: req.portal.session!.user, address: req.ip };
  }

  /** The project of the route's :project_id, if it is the user's merchant's; else NotFound. */
  async project(req: FastifyRequest): Promise<ProjectRow> {
    const id = String((req.params as Record<string, string>).project_id ?? '');
    return projectOf(this.ctx, req.portal.session!.user, isUuid(id) ? id : '00000000-0000-0000-0000-000000000000');
  }

  /** The hosted pages' security headers, with the portal's own CSP. */
  headers(reply: FastifyReply) {
    setPageHeaders(reply, PORTAL_CSP);
  }

  /** Sends a whole page: with the chrome of a signed-in user when there is one. */
  async page(
    req: FastifyRequest,
    reply: FastifyReply,
    o: { title: string; body: string; status?: number; nav?: NavItem; project?: ProjectRow },
  ) {
    const { locale, t, session, csrf } = req.portal;
    const path = req.url.split('?')[0];
    const user = session?.verified ? session.user : undefined;
    const html = layout(
      {
        locale,
        t,
        base: this.base,
        path,
        csrf,
        merchant: user ? await merchantName(this.ctx, user) : undefined,
        email: user?.email,
        role: user?.role,
        projects: user ? await projectsOf(this.ctx, user) : undefined,
        project: o.project,
        nav: o.nav,
      },
      o.title,
      o.body,
    );
    return reply
      .code(o.status ?? 200)
      .type('text/html; charset=utf-8')
      .send(html);
  }

  /**
   * The one-time token of a page's creating forms (services/portal/once.ts): a hidden field,
   * fresh on every render, so a double submit of the form makes one thing.
   */
  onceField() {
    return `<input type="hidden" name="once" value="${randomBytes(18).toString('base64url')}">`;
  }

  /**
   * Runs a creating form's work once per its `once` token and purpose. `done`: this request did
   * the work; `again`: a resent form, answered with where the first one led (`shown`).
   */
  once<T>(req: FastifyRequest, purpose: string, work: () => Promise<{ value: T; shown: string }>) {
    return runOnce(this.ctx, req.portal.session!.user.id, purpose, field(req.body, 'once'), work);
  }

  redirect(reply: FastifyReply, path: string) {
    return reply.code(303).header('location', `${this.base}${path}`).send();
  }
}

/** A string field of a form body ('' when absent or not a single string). */
export const field = (body: unknown, name: string): string => {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : '';
};
