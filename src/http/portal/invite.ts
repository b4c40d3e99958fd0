import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { acceptInvite, inviteOf } from '../../services/portal/team.ts';
import { COOKIE, cookiesOf, field, type Kit } from './kit.ts';
import { TEAM_STRINGS } from './i18n-team.ts';
import { alert, csrfField, esc } from './view.ts';
import { statusOf } from '../errors.ts';

/**
 * An invitation link (/invite/<token>): the invited person chooses a password and signs in
 * as usual. Public, like the sign-in page: its form token is bound to the pre-session cookie.
 */
export const inviteRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  async function page(req: FastifyRequest, reply: FastifyReply, status = 200, error?: string) {
    const { t, locale } = req.portal;
    const w = TEAM_STRINGS[locale];
    const token = (req.params as { token: string }).token;
    const invite = await inviteOf(ctx, token);
    if (!invite)
      return kit.page(req, reply, { status: 404, title: w.accept_title, body: `<h1>${esc(w.accept_title)}</h1>${alert(w.invite_gone)}` });
    let pre = cookiesOf(req)[COOKIE.pre];
    if (!pre || pre.length > 64) {
      pre = kit.newPre();
      kit.setCookie(reply, COOKIE.pre, pre);
    }
    const body = `<h1>${esc(w.accept_title)}</h1>
${error ? alert(error) : ''}<p>${esc(w.accept_intro(invite.email, w.role_short[invite.role]))}</p>
<form method="post" action="${kit.base}/invite/${esc(token)}" class="panel-form">${csrfField(kit.csrfFor(`pre\n${pre}`))}
<input type="hidden" name="email" value="${esc(invite.email)}" autocomplete="username">
<div class="field"><label for="new-password">${esc(t.password)}</label><input type="password" id="new-password" name="password" autocomplete="new-password" minlength="12" maxlength="256" required></div>
<button type="submit">${esc(w.accept)}</button></form>`;
    return kit.page(req, reply, { status, title: w.accept_title, body });
  }

  app.get('/invite/:token', async (req, reply) => page(req, reply));

  app.post('/invite/:token', async (req, reply) => {
    const pre = cookiesOf(req)[COOKIE.pre];
    if (!kit.originAllowed(req) || !kit.checkCsrf(pre && `pre\n${pre}`, field(req.body, 'csrf'))) {
      const t = req.portal.t;
      return kit.page(req, reply, {
        status: 403,
        title: t.refused_title,
        body: `<h1>${esc(t.refused_title)}</h1>${alert(t.form_expired)}`,
      });
    }
    try {
      await acceptInvite(ctx, (req.params as { token: string }).token, field(req.body, 'password'), req.ip);
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      if (statusOf(err) === 404) return page(req, reply);
      return page(req, reply, statusOf(err), err.message);
    }
    return kit.redirect(reply, '/sign-in');
  });
};
