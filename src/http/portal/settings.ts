import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { activeMethods, settingsOf, timeZoneOf, timeZones } from '../../domain/project.ts';
import { saveTimeZone } from '../../services/portal/time-zone.ts';
import { VIEW_STRINGS } from './i18n-views.ts';
import { methodsSettings } from './methods.ts';
import { payoutSettingsPanel, savePayouts } from './payouts.ts';
import { audit, auditLog, createKey, keysOf, revokeKey, rotateSecret, saveWebhookUrl } from '../../services/portal/actions.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { confirmTotp, disableTotp, pendingTotp, startTotpSetup } from '../../services/portal/users.ts';
import { field, type Kit } from './kit.ts';
import { TEAM_STRINGS } from './i18n-team.ts';
import type { PortalStrings } from './i18n.ts';
import { alert, badge, copyable, csrfField, esc, idCode, money, notice, qrSvg, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/** Settings: API keys, webhooks, payment methods and fees, the second factor, the audit log. */
export const settingsRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;
  const path = (p: ProjectRow, rest = '') => `${kit.base}/projects/${p.id}/settings/${rest}`;

  interface Shown {
    status?: number;
    newKey?: string;
    newSecret?: string;
    message?: string;
    error?: string;
    totpError?: string;
    methodsError?: string;
    zoneError?: string;
    /** what the time zone field shows after a refused save */
    zoneTyped?: string;
    payoutsError?: string;
  }

  async function settingsPage(req: FastifyRequest, reply: FastifyReply, o: Shown = {}) {
    const project = await kit.project(req);
    const { t, locale, csrf } = req.portal;
    const user = req.portal.session!.user;
    const s = settingsOf(project.settings);
    const keys = await keysOf(ctx, project);
    const dev = kit.can(req, 'developer'); // keys and webhooks: developers and owners (domain/roles.ts)
    // the creating forms (a key, a secret) carry the page's one-time token: a double submit makes one
    const once = kit.onceField();
    const form = (action: string, button: string, cls = '', extra = '') =>
      `<form method="post" action="${action}" class="inline">${csrfField(csrf)}${extra}<button type="submit"${cls ? ` class="${cls}"` : ''}>${button}</button></form>`;
    const keyRows = keys.map((k) => [
      `<code>${esc(k.hint)}</code>`,
      esc(when(k.created, project)),
      esc(k.last_used ? when(k.last_used, project) : t.never),
      k.revoked ? badge('cancelled', `${t.revoked} ${when(k.revoked, project)}`) : badge('active', t.active),
      k.revoked || !dev
        ? ''
        : form(path(project, `keys/${k.id}/revoke`), `${esc(t.revoke)}<span class="vh"> ${esc(k.hint)}</span>`, 'danger'),
    ]);
    const methodRows = activeMethods(s).map((m) => [esc(m), esc((s.payment_methods[m]?.currencies ?? []).join(', '))]);
    const feeRows = Object.entries(s.fees).map(([m, f]) => [
      esc(m),
      esc(`${(f!.bps / 100).toFixed(2)} % + ${money(f!.fixed, 'EUR', locale)}`),
    ]);
    const pending = pendingTotp(kit.ctx, user);
    const totp = user.totp_secret_ct
      ? `<p>${esc(t.totp_on)}</p><form method="post" action="${path(project, 'totp/disable')}">${csrfField(csrf)}
<div class="field"><label for="totp-off-code">${esc(t.code_label)}</label><input type="text" id="totp-off-code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="8" required></div>
<button type="submit" class="danger">${esc(t.totp_disable)}</button></form>`
      : pending
        ? `<p>${esc(t.totp_scan)}</p><div class="qr">${qrSvg(pending.uri, t.totp_qr)}</div>
<p>${esc(t.totp_key)}:</p>${copyable('totp-secret', pending.secret, t, t.totp_key)}
<form method="post" action="${path(project, 'totp/confirm')}">${csrfField(csrf)}
<div class="field"><label for="totp-code">${esc(t.code_label)}</label><input type="text" id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="8" required></div>
<button type="submit">${esc(t.totp_confirm)}</button></form>`
        : `<p>${esc(t.totp_off)}</p>${form(path(project, 'totp/setup'), esc(t.totp_setup))}`;
    const log = await auditLog(ctx, user);
    const auditRows = log.map((a) => [
      esc(when(a.created, project)),
      esc(a.email ?? ''),
      esc(a.action),
      a.project_id ? idCode(a.project_id) : '',
      esc(a.address ?? ''),
      `<code>${esc(Object.keys(a.detail ?? {}).length ? JSON.stringify(a.detail) : '')}</code>`,
    ]);
    const v = VIEW_STRINGS[locale];
    const zone = `<section class="panel" aria-labelledby="time-zone"><h2 id="time-zone">${esc(v.time_zone)}</h2><p>${esc(v.time_zone_intro)}</p>
${o.zoneError ? alert(o.zoneError) : ''}<form method="post" action="${path(project, 'time-zone')}">${csrfField(csrf)}
<div class="field"><label for="zone">${esc(v.time_zone)} <span class="hint" id="zone-hint">${esc(v.time_zone_hint)}</span></label>
<input type="text" id="zone" name="time_zone" list="zones" maxlength="64" autocomplete="off" spellcheck="false" value="${esc(o.zoneTyped ?? timeZoneOf(project.settings))}" aria-describedby="zone-hint"${o.zoneError ? ' aria-invalid="true"' : ''}>
<datalist id="zones">${timeZones()
      .map((z) => `<option value="${esc(z)}">`)
      .join('')}</datalist></div>
<button type="submit">${esc(v.time_zone_save)}</button></form></section>`;
    const body = `<h1>${esc(t.settings_title)}</h1>
${o.error ? alert(o.error) : ''}${o.message ? notice(o.message) : ''}
<section class="panel" aria-labelledby="api-key"><h2 id="api-key">${esc(t.api_key)}</h2>
<p>${esc(t.api_key_intro)}</p>
${o.newKey ? `<div class="notice" role="status"><p>${esc(t.new_key_shown_once)}</p>${copyable('new-api-key', o.newKey, t, t.api_key)}</div>` : ''}
${table(t.api_key, [t.key, t.created, t.last_used, t.status, t.actions], keyRows)}
${dev ? `<p>${form(path(project, 'keys'), esc(t.create_key), '', once)}</p>` : ''}</section>
<section class="panel" aria-labelledby="webhooks"><h2 id="webhooks">${esc(t.webhook_url)}</h2>
${
  dev
    ? `<form method="post" action="${path(project, 'webhook-url')}">${csrfField(csrf)}
<div class="field"><label for="webhook-url">${esc(t.webhook_url)} <span class="hint" id="webhook-hint">${esc(t.webhook_hint)}</span></label>
<input type="url" id="webhook-url" name="url" maxlength="2048" value="${esc(project.webhook_url ?? '')}" aria-describedby="webhook-hint"></div>
<button type="submit">${esc(t.save)}</button></form>`
    : `<p><code>${esc(project.webhook_url ?? '—')}</code></p>`
}
<h3>${esc(t.webhook_secret)}</h3><p>${esc(t.webhook_secret_intro)}</p>
${o.newSecret ? `<div class="notice" role="status"><p>${esc(t.new_secret_shown_once)}</p>${copyable('new-webhook-secret', o.newSecret, t, t.webhook_secret)}</div>` : ''}
${dev ? `<p>${form(path(project, 'webhook-secret'), esc(t.rotate_secret), 'secondary', once)}</p>` : ''}</section>
${project.mode === 'live' ? acquirerPanel(project.settings.acquirer, t) : ''}
<section class="panel" aria-labelledby="methods"><h2 id="methods">${esc(t.methods_title)}</h2>${table(t.methods_title, [t.method, t.currencies], methodRows)}</section>
${o.methodsError ? alert(o.methodsError) : ''}${methodsSettings(project, { locale, csrf, action: path(project, 'methods'), currencies: t.currencies, anyCurrency: v.any_currency })}
<section class="panel" aria-labelledby="fees"><h2 id="fees">${esc(t.fees_title)}</h2>${table(t.fees_title, [t.method, t.fee], feeRows)}</section>
${zone}
${await payoutSettingsPanel(kit, req, project, o.payoutsError)}
<section class="panel" aria-labelledby="security"><h2 id="security">${esc(t.security)}</h2>${o.totpError ? alert(o.totpError) : ''}${totp}</section>
<section class="panel" aria-labelledby="audit"><h2 id="audit">${esc(t.audit_title)}</h2><p>${esc(t.audit_intro)}</p>
${auditRows.length ? table(t.audit_title, [t.time, t.user, t.event, t.project, t.address, t.details], auditRows) : `<p>${esc(t.no_audit)}</p>`}</section>`;
    return kit.page(req, reply, { title: t.settings_title, body, nav: 'settings', project, status: o.status });
  }

  app.get('/projects/:project_id/settings/', async (req, reply) => {
    const t = req.portal.t;
    const q = (n: string) => field(req.query, n);
    return settingsPage(req, reply, {
      methodsError: q('methods_error') || undefined,
      message: q('revoked')
        ? t.key_revoked
        : q('sent')
          ? t.form_sent_twice
          : q('saved')
            ? t.saved
            : q('totp') === 'on'
              ? t.totp_enabled
              : q('totp') === 'off'
                ? t.totp_disabled
                : q('totp') === 'required'
                  ? TEAM_STRINGS[req.portal.locale].totp_required_notice
                  : undefined,
    });
  });

  app.post('/projects/:project_id/settings/keys', async (req, reply) => {
    const project = await kit.project(req);
    const made = await kit.once(req, 'create-key', async () => ({
      value: await createKey(ctx, kit.actor(req), project),
      shown: `/projects/${project.id}/settings/?sent=1`,
    }));
    // a resent form made no second key: the one the first made is in the list, shown once then
    if ('again' in made) return kit.redirect(reply, made.again);
    return settingsPage(req, reply, { newKey: made.done.api_key });
  });

  app.post('/projects/:project_id/settings/keys/:key_id/revoke', async (req, reply) => {
    const project = await kit.project(req);
    await revokeKey(ctx, kit.actor(req), project, (req.params as { key_id: string }).key_id);
    return kit.redirect(reply, `/projects/${project.id}/settings/?revoked=1`);
  });

  app.post('/projects/:project_id/settings/webhook-url', async (req, reply) => {
    const project = await kit.project(req);
    try {
      await saveWebhookUrl(ctx, kit.actor(req), project, field(req.body, 'url'));
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500 || statusOf(err) === 404) throw err;
      return settingsPage(req, reply, { status: statusOf(err), error: `${err.type}: ${err.message}` });
    }
    return kit.redirect(reply, `/projects/${project.id}/settings/?saved=1`);
  });

  app.post('/projects/:project_id/settings/webhook-secret', async (req, reply) => {
    const project = await kit.project(req);
    const rotated = await kit.once(req, 'rotate-secret', async () => ({
      value: await rotateSecret(ctx, kit.actor(req), project),
      shown: `/projects/${project.id}/settings/?sent=1`,
    }));
    if ('again' in rotated) return kit.redirect(reply, rotated.again);
    return settingsPage(req, reply, { newSecret: rotated.done.webhook_secret });
  });

  app.post('/projects/:project_id/settings/time-zone', async (req, reply) => {
    const project = await kit.project(req);
    const typed = field(req.body, 'time_zone');
    try {
      await saveTimeZone(ctx, kit.actor(req), project, typed);
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return settingsPage(req, reply, { status: statusOf(err), zoneError: `${err.type}: ${err.message}`, zoneTyped: typed.slice(0, 64) });
    }
    return kit.redirect(reply, `/projects/${project.id}/settings/?saved=1#time-zone`);
  });

  app.post('/projects/:project_id/settings/payouts', async (req, reply) => {
    const project = await kit.project(req);
    const error = await savePayouts(kit, req, project);
    if (error) return settingsPage(req, reply, { status: 400, payoutsError: error });
    return kit.redirect(reply, `/projects/${project.id}/settings/?saved=1#payouts-settings`);
  });

  app.post('/projects/:project_id/settings/totp/setup', async (req, reply) => {
    const project = await kit.project(req);
    await startTotpSetup(kit.ctx, req.portal.session!.user);
    return kit.redirect(reply, `/projects/${project.id}/settings/#security`);
  });

  app.post('/projects/:project_id/settings/totp/confirm', async (req, reply) => {
    const project = await kit.project(req);
    const user = req.portal.session!.user;
    if (!(await confirmTotp(kit.ctx, user, field(req.body, 'code'), req.ip)))
      return settingsPage(req, reply, { status: 400, totpError: req.portal.t.code_wrong });
    await audit(ctx, kit.actor(req), 'totp_enabled', null);
    return kit.redirect(reply, `/projects/${project.id}/settings/?totp=on`);
  });

  app.post('/projects/:project_id/settings/totp/disable', async (req, reply) => {
    const project = await kit.project(req);
    const user = req.portal.session!.user;
    if (!(await disableTotp(kit.ctx, user, field(req.body, 'code'), req.ip)))
      return settingsPage(req, reply, { status: 400, totpError: req.portal.t.code_wrong });
    await audit(ctx, kit.actor(req), 'totp_disabled', null);
    return kit.redirect(reply, `/projects/${project.id}/settings/?totp=off`);
  });
};

/** A live project's acquirer binding, read-only: only an operator changes it (`tender project set-acquirer`). */
function acquirerPanel(binding: unknown, t: PortalStrings): string {
  const b = (binding ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? esc(v) : '');
  const ds = ((b.three_ds ?? {}) as { directory_servers?: Record<string, unknown> }).directory_servers;
  const servers = ds
    ? Object.entries(ds)
        .map(([brand, url]) => `${brand === '*' ? '' : `${esc(brand)} `}<code>${text(url)}</code>`)
        .join('<br>')
    : esc(t.directory_servers_none);
  const body =
    typeof b.acquirer === 'string'
      ? table(
          t.acquirer_title,
          [t.acquirer_address, t.terminal_id, t.card_acceptor_id, t.unauthenticated, t.directory_servers],
          [
            [
              `<code>${text(b.acquirer)}</code>`,
              text(b.terminal_id),
              text(b.card_acceptor_id),
              esc(b.refuse_unauthenticated === true ? t.refused : t.accepted_no_shift),
              servers,
            ],
          ],
        )
      : `<p>${esc(t.acquirer_none)}</p>`;
  return `<section class="panel" aria-labelledby="acquirer"><h2 id="acquirer">${esc(t.acquirer_title)}</h2><p>${esc(t.acquirer_intro)}</p>${body}</section>`;
}
