import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { ROLES, type Role } from '../../domain/roles.ts';
import { auditLog } from '../../services/portal/actions.ts';
import { changeRole, inviteUser, membersOf, pendingInvites, removeUser, requiresTotp, setRequireTotp } from '../../services/portal/team.ts';
import { field, type Kit } from './kit.ts';
import { TEAM_STRINGS } from './i18n-team.ts';
import { alert, copyable, csrfField, esc, idCode, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/** The team (owners: invite, change roles, remove, require a second factor) and the audit log. */
export const teamRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  async function teamPage(
    req: FastifyRequest,
    reply: FastifyReply,
    o: { status?: number; error?: string; link?: string; done?: string } = {},
  ) {
    const project = await kit.project(req);
    const { t, locale, csrf } = req.portal;
    const w = TEAM_STRINGS[locale];
    const me = req.portal.session!.user;
    const base = `${kit.base}/projects/${project.id}/team/`;
    const [members, invites, required] = await Promise.all([
      membersOf(ctx, me.merchant_id),
      pendingInvites(ctx, me.merchant_id),
      requiresTotp(ctx, me.merchant_id),
    ]);
    const roleSelect = (id: string, current: Role) =>
      `<select id="${id}" name="role">${ROLES.map((r) => `<option value="${r}"${r === current ? ' selected' : ''}>${esc(w.role_short[r])}</option>`).join('')}</select>`;
    const rows = members.map((m) => [
      esc(m.email),
      `<span data-role="${m.role}">${esc(w.role_short[m.role])}</span>`,
      esc(m.totp ? w.on : w.off),
      esc(when(m.created, project)),
      m.id === me.id
        ? ''
        : `<form method="post" action="${base}${m.id}/role" class="inline">${csrfField(csrf)}<label for="role-${m.id}" class="vh">${esc(`${w.role}: ${m.email}`)}</label>${roleSelect(`role-${m.id}`, m.role)}<button type="submit" class="secondary">${esc(w.change_role)}<span class="vh"> ${esc(m.email)}</span></button></form>
<form method="post" action="${base}${m.id}/remove" class="inline">${csrfField(csrf)}<button type="submit" class="danger">${esc(w.remove)}<span class="vh"> ${esc(m.email)}</span></button></form>`,
    ]);
    const inviteRows = invites.map((i) => [esc(i.email), esc(w.role_short[i.role]), esc(when(i.expires, project))]);
    const body = `<h1>${esc(w.team_title)}</h1>
${o.error ? alert(o.error) : ''}${o.done ? notice(o.done) : ''}
<section class="panel" aria-labelledby="members-h"><h2 id="members-h" class="vh">${esc(w.team_title)}</h2>
${table(w.team_title, [t.email, w.role, w.two_factor, t.created, t.actions], rows)}</section>
<section class="panel" aria-labelledby="invite-h"><h2 id="invite-h">${esc(w.invite_title)}</h2><p>${esc(w.invite_intro)}</p>
${o.link ? `<div class="notice" role="status"><p>${esc(w.invite_shown_once)}</p>${copyable('invite-link', o.link, t, w.invite_link)}</div>` : ''}
<form method="post" action="${base}invite">${csrfField(csrf)}
<div class="field"><label for="invite-email">${esc(t.email)}</label><input type="email" id="invite-email" name="email" required maxlength="254"></div>
<div class="field"><label for="invite-role">${esc(w.role)}</label><select id="invite-role" name="role">${ROLES.map((r) => `<option value="${r}"${r === 'viewer' ? ' selected' : ''}>${esc(w.roles[r])}</option>`).join('')}</select></div>
<button type="submit">${esc(w.invite)}</button></form>
${inviteRows.length ? `<h3>${esc(w.pending)}</h3>${table(w.pending, [t.email, w.role, w.expires], inviteRows)}` : ''}</section>
<section class="panel" aria-labelledby="require-h"><h2 id="require-h">${esc(w.require_totp)}</h2><p data-require-totp="${required}">${esc(required ? w.require_totp_on : w.require_totp_off)}</p>
<form method="post" action="${base}require-totp">${csrfField(csrf)}<input type="hidden" name="on" value="${required ? '0' : '1'}"><button type="submit"${required ? ' class="secondary"' : ''}>${esc(required ? w.make_optional : w.require)}</button></form></section>`;
    return kit.page(req, reply, { title: w.team_title, body, nav: 'team', project, status: o.status });
  }

  /** Refused changes show the reason on the team page, with the API's status. */
  async function change(req: FastifyRequest, reply: FastifyReply, run: () => Promise<void>) {
    const project = await kit.project(req);
    try {
      await run();
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return teamPage(req, reply, { status: statusOf(err), error: `${err.type}: ${err.message}` });
    }
    return kit.redirect(reply, `/projects/${project.id}/team/?saved=1`);
  }

  app.get('/projects/:project_id/team/', async (req, reply) =>
    teamPage(req, reply, { done: field(req.query, 'saved') ? req.portal.t.saved : undefined }),
  );

  app.post('/projects/:project_id/team/invite', async (req, reply) => {
    await kit.project(req);
    try {
      const made = await inviteUser(ctx, kit.actor(req), { email: field(req.body, 'email'), role: field(req.body, 'role') });
      return teamPage(req, reply, { link: `${ctx.config.portalUrl.replace(/\/+$/, '')}/invite/${made.token}` });
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return teamPage(req, reply, { status: statusOf(err), error: `${err.type}: ${err.message}` });
    }
  });

  app.post('/projects/:project_id/team/:user_id/role', async (req, reply) =>
    change(req, reply, () => changeRole(ctx, kit.actor(req), (req.params as { user_id: string }).user_id, field(req.body, 'role'))),
  );

  app.post('/projects/:project_id/team/:user_id/remove', async (req, reply) =>
    change(req, reply, () => removeUser(ctx, kit.actor(req), (req.params as { user_id: string }).user_id)),
  );

  app.post('/projects/:project_id/team/require-totp', async (req, reply) =>
    change(req, reply, () => setRequireTotp(ctx, kit.actor(req), field(req.body, 'on') === '1')),
  );

  app.get('/projects/:project_id/audit/', async (req, reply) => {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const w = TEAM_STRINGS[locale];
    const log = await auditLog(ctx, req.portal.session!.user, 200);
    const rows = log.map((a) => [
      esc(when(a.created, project)),
      esc(a.email ?? ''),
      `<span data-action="${esc(a.action)}">${esc(w.entry(a.action, (a.detail ?? {}) as Record<string, unknown>))}</span>`,
      a.project_id ? idCode(a.project_id) : '',
      esc(a.address ?? ''),
    ]);
    const body = `<h1>${esc(w.audit_title)}</h1><section class="panel" aria-labelledby="audit-h"><h2 id="audit-h" class="vh">${esc(w.audit_title)}</h2>
<p>${esc(t.audit_intro)}</p>${rows.length ? table(w.audit_title, [t.time, t.user, t.event, t.project, t.address], rows) : `<p>${esc(t.no_audit)}</p>`}</section>`;
    return kit.page(req, reply, { title: w.audit_title, body, nav: 'audit', project });
  });
};
