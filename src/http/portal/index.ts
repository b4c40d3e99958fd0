import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../../services/platform/context.ts';
import { DomainError } from '../../domain/errors.ts';
import { sessionOf, signIn, signOut, ThrottledError, verifySessionCode } from '../../services/portal/users.ts';
import { audit, projectsOf } from '../../services/portal/actions.ts';
import { COOKIE, Kit, cookiesOf, field } from './kit.ts';
import { ASSETS, alert, csrfField, esc } from './view.ts';
import { homeRoutes } from './home.ts';
import { orderRoutes } from './orders.ts';
import { linkRoutes } from './links.ts';
import { settingsRoutes } from './settings.ts';
import { testToolRoutes } from './test-tools.ts';
import { teamRoutes } from './team.ts';
import { webhookRoutes } from './webhooks.ts';
import { inviteRoutes } from './invite.ts';
import { allows, capabilityOf } from '../../domain/roles.ts';
import { requiresTotp } from '../../services/portal/team.ts';
import { TEAM_STRINGS } from './i18n-team.ts';
import { methodPortalRoutes } from './methods.ts';
import { disputePortalRoutes } from './disputes.ts';
import { riskRuleRoutes } from './risk-rules.ts';
import { riskRoutes } from './risk.ts';
import { payoutRoutes } from './payouts.ts';
import { statusOf } from '../errors.ts';

/**
 * The merchant portal at {portal_url}: server-rendered pages on the API's services.
 * Public: sign-in and the assets. Everything else needs a session (cookie), a verified second
 * factor when the user has one, and on every POST the session's CSRF token and our Origin.
 */
/** What a user without a second factor may still reach when the owners require one. */
const TOTP_SETUP = /^(\/projects\/:project_id\/settings\/(totp\/(setup|confirm))?|\/sign-out)$/;

export const portalRoutes = (ctx: Ctx) => async (app: FastifyInstance) => {
  const kit = new Kit(ctx);
  app.decorateRequest('portal', null as never);

  app.addHook('onRequest', async (req, reply) => {
    kit.headers(reply);
    const locale = kit.localeOf(req, reply);
    const session = await sessionOf(ctx, cookiesOf(req)[COOKIE.session]);
    req.portal = { ...kit.state(locale), session, csrf: session ? kit.csrfFor(session.id) : '' };
  });

  app.setNotFoundHandler((req, reply) => notFound(req, reply));
  app.setErrorHandler(async (err: Error & { statusCode?: number }, req, reply) => {
    if (!req.portal) req.portal = { ...kit.state('en'), csrf: '' };
    const t = req.portal.t;
    if (err instanceof DomainError && statusOf(err) === 404) return notFound(req, reply);
    const status =
      err instanceof DomainError ? statusOf(err) : err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status >= 500) {
      req.log.error({ err }, 'portal page failed');
      return kit.page(req, reply, { status, title: t.error_title, body: `<h1>${esc(t.error_title)}</h1><p>${esc(t.error_text)}</p>` });
    }
    return kit.page(req, reply, { status, title: t.refused_title, body: `<h1>${esc(t.refused_title)}</h1>${alert(err.message)}` });
  });

  function notFound(req: FastifyRequest, reply: FastifyReply) {
    req.portal ??= { ...kit.state('en'), csrf: '' };
    const t = req.portal.t;
    return kit.page(req, reply, {
      status: 404,
      title: t.not_found_title,
      body: `<h1>${esc(t.not_found_title)}</h1><p>${esc(t.not_found_text)}</p>`,
    });
  }

  const refused = (req: FastifyRequest, reply: FastifyReply) => {
    const t = req.portal.t;
    return kit.page(req, reply, { status: 403, title: t.refused_title, body: `<h1>${esc(t.refused_title)}</h1>${alert(t.form_expired)}` });
  };

  app.get('/assets/:name', async (req, reply) => {
    const a = ASSETS[(req.params as { name: string }).name];
    if (!a) return notFound(req, reply);
    return reply.header('cache-control', 'public, max-age=3600').type(a.type).send(a.body);
  });

  // ---- sign-in ---------------------------------------------------------------------------

  function signInPage(req: FastifyRequest, reply: FastifyReply, o: { status?: number; error?: string; email?: string; pre?: string } = {}) {
    const t = req.portal.t;
    let pre = o.pre ?? cookiesOf(req)[COOKIE.pre];
    if (!pre || pre.length > 64) {
      pre = kit.newPre();
      kit.setCookie(reply, COOKIE.pre, pre);
    }
    const body = `<h1>${esc(t.sign_in)}</h1>
${o.error ? alert(o.error) : ''}<form method="post" action="${kit.base}/sign-in" class="panel-form">
${csrfField(kit.csrfFor(`pre\n${pre}`))}
<div class="field"><label for="email">${esc(t.email)}</label><input type="email" id="email" name="email" autocomplete="username" required value="${esc(o.email)}"${o.error ? '' : ' autofocus'}></div>
<div class="field"><label for="password">${esc(t.password)}</label><input type="password" id="password" name="password" autocomplete="current-password" required${o.error ? ' autofocus' : ''}></div>
<button type="submit">${esc(t.sign_in)}</button>
</form>`;
    return kit.page(req, reply, { status: o.status, title: t.sign_in, body });
  }

  app.get('/sign-in', async (req, reply) => {
    if (req.portal.session?.verified) return kit.redirect(reply, '/');
    return signInPage(req, reply);
  });

  app.post('/sign-in', async (req, reply) => {
    const t = req.portal.t;
    const pre = cookiesOf(req)[COOKIE.pre];
    if (!kit.originAllowed(req) || !kit.checkCsrf(pre && `pre\n${pre}`, field(req.body, 'csrf'))) return refused(req, reply);
    const email = field(req.body, 'email');
    try {
      const done = await signIn(ctx, { email, password: field(req.body, 'password'), address: req.ip });
      kit.setCookie(reply, COOKIE.session, done.token);
      kit.setCookie(reply, COOKIE.pre, '', 0);
      if (done.needsCode) return kit.redirect(reply, '/sign-in/code');
      await audit(ctx, { user: done.user, address: req.ip }, 'sign_in', null);
      return kit.redirect(reply, '/');
    } catch (err) {
      if (err instanceof ThrottledError) {
        reply.header('retry-after', String(err.retryAfter));
        return signInPage(req, reply, { status: 429, error: t.throttled(err.retryAfter), email });
      }
      if (err instanceof DomainError && statusOf(err) === 401)
        return signInPage(req, reply, { status: 401, error: t.sign_in_failed, email });
      throw err;
    }
  });

  function codePage(req: FastifyRequest, reply: FastifyReply, status = 200, error?: string) {
    const t = req.portal.t;
    const body = `<h1>${esc(t.code_title)}</h1>
${error ? alert(error) : ''}<form method="post" action="${kit.base}/sign-in/code">
${csrfField(req.portal.csrf)}
<div class="field"><label for="code">${esc(t.code_label)} <span class="hint" id="code-hint">${esc(t.code_hint)}</span></label>
<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="8" aria-describedby="code-hint" required autofocus></div>
<button type="submit">${esc(t.verify)}</button>
</form>`;
    return kit.page(req, reply, { status, title: t.code_title, body });
  }

  app.get('/sign-in/code', async (req, reply) => {
    const s = req.portal.session;
    if (!s) return kit.redirect(reply, '/sign-in');
    if (s.verified) return kit.redirect(reply, '/');
    return codePage(req, reply);
  });

  app.post('/sign-in/code', async (req, reply) => {
    const s = req.portal.session;
    if (!s) return kit.redirect(reply, '/sign-in');
    if (!kit.originAllowed(req) || !kit.checkCsrf(s.id, field(req.body, 'csrf'))) return refused(req, reply);
    try {
      if (!(await verifySessionCode(kit.ctx, s, field(req.body, 'code'), req.ip)))
        return codePage(req, reply, 401, req.portal.t.code_wrong);
    } catch (err) {
      if (!(err instanceof ThrottledError)) throw err;
      reply.header('retry-after', String(err.retryAfter));
      return codePage(req, reply, 429, req.portal.t.throttled(err.retryAfter));
    }
    await audit(ctx, { user: s.user, address: req.ip }, 'sign_in', null, { second_factor: true });
    return kit.redirect(reply, '/');
  });

  await app.register(inviteRoutes(kit));

  // ---- signed-in area --------------------------------------------------------------------

  await app.register(async (area) => {
    area.addHook('preHandler', async (req, reply) => {
      const s = req.portal.session;
      if (!s) return kit.redirect(reply, '/sign-in');
      if (!s.verified) return kit.redirect(reply, '/sign-in/code');
      if (req.method === 'POST' && (!kit.originAllowed(req) || !kit.checkCsrf(s.id, field(req.body, 'csrf')))) return refused(req, reply);
      // The role, on every route and action (domain/roles.ts): a hidden button is never the only guard.
      const route = (req.routeOptions.url ?? '').slice(kit.base.length);
      const action = route.endsWith('/actions')
        ? field(req.body, 'action')
        : route.endsWith('/confirm')
          ? field(req.query, 'action')
          : undefined;
      if (!allows(s.user.role, capabilityOf(req.method, route, action))) {
        const t = req.portal.t;
        return kit.page(req, reply, {
          status: 403,
          title: t.refused_title,
          body: `<h1>${esc(t.refused_title)}</h1>${alert(TEAM_STRINGS[req.portal.locale].no_permission)}`,
        });
      }
      // When the owners require a second factor, a user without one sets it up before anything else.
      if (!s.user.totp_secret_ct && !TOTP_SETUP.test(route) && (await requiresTotp(ctx, s.user.merchant_id))) {
        const [first] = await projectsOf(ctx, s.user);
        if (!first) return refused(req, reply);
        return kit.redirect(reply, `/projects/${first.id}/settings/?totp=required#security`);
      }
    });

    area.get('/', async (req, reply) => {
      const [first] = await projectsOf(ctx, req.portal.session!.user);
      return first
        ? kit.redirect(reply, `/projects/${first.id}/`)
        : kit.page(req, reply, { title: req.portal.t.portal, body: `<h1>${esc(req.portal.t.portal)}</h1>` });
    });

    area.get('/switch', async (req, reply) => {
      const id = String((req.query as Record<string, unknown>).project ?? '');
      return kit.redirect(reply, `/projects/${encodeURIComponent(id)}/`);
    });

    area.post('/sign-out', async (req, reply) => {
      const s = req.portal.session!;
      await signOut(ctx, s.id);
      await audit(ctx, kit.actor(req), 'sign_out', null);
      kit.setCookie(reply, COOKIE.session, '', 0);
      return kit.redirect(reply, '/sign-in');
    });

    await area.register(homeRoutes(kit));
    await area.register(orderRoutes(kit));
    await area.register(linkRoutes(kit));
    await area.register(payoutRoutes(kit));
    await area.register(settingsRoutes(kit));
    await area.register(testToolRoutes(kit));
    await area.register(teamRoutes(kit));
    await area.register(webhookRoutes(kit));
    await area.register(methodPortalRoutes(kit));
    await area.register(disputePortalRoutes(kit));
    await area.register(riskRuleRoutes(kit));
    await area.register(riskRoutes(kit));
  });
};
