import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { LIST_KINDS, LISTS } from '../../domain/risk/lists.ts';
import { addToList, removeFromList, showLists } from '../../services/risk/lists.ts';
import { field, type Kit } from './kit.ts';
import { RISK_STRINGS } from './i18n-risk.ts';
import { alert, csrfField, esc, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/** What the form was sent with, shown again beside its error (a card number never is). */
type Typed = { list: string; kind: string; value: string; expires_at: string; note: string };

/**
 * The Risk page (docs/risk.md "Lists"): the project's blocklists and allowlists. Everyone reads
 * them; the owners add and remove entries (domain/roles.ts `risk`), each change in the audit log.
 * A card number typed here is kept only as its fingerprint, and never shown back.
 */
export const riskRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  async function page(req: FastifyRequest, reply: FastifyReply, o: { status?: number; error?: string; done?: string; typed?: Typed } = {}) {
    const project = await kit.project(req);
    const { csrf, locale } = req.portal;
    const s = RISK_STRINGS[locale];
    const entries = await showLists(ctx, { project: project.id });
    const base = `${kit.base}/projects/${project.id}/risk/`;
    const change = kit.can(req, 'risk');
    const typed = o.typed ?? { list: 'block', kind: 'card', value: '', expires_at: '', note: '' };
    const opt = (v: string, label: string, cur: string) => `<option value="${v}"${v === cur ? ' selected' : ''}>${esc(label)}</option>`;
    const rows = entries.map((e) => [
      esc(s.lists[e.list]),
      esc(s.kinds[e.kind as keyof typeof s.kinds] ?? e.kind),
      `<code>${esc(e.value)}</code>`,
      esc(when(e.created, project)),
      esc(e.created_by ?? ''),
      e.expires_at
        ? `<span data-expired="${e.expired}">${esc(e.expired ? `${s.expired} ${when(e.expires_at, project)}` : when(e.expires_at, project))}</span>`
        : esc(s.never),
      esc(e.note ?? ''),
      change
        ? `<form method="post" action="${base}${e.id}/remove" class="inline">${csrfField(csrf)}<button type="submit" class="secondary">${esc(s.remove)}<span class="vh"> ${esc(`${s.kinds[e.kind as keyof typeof s.kinds] ?? e.kind} ${e.value}`)}</span></button></form>`
        : '',
    ]);
    const invalid = o.error ? ' aria-invalid="true"' : '';
    const form = change
      ? `<section class="panel" aria-labelledby="risk-add"><h2 id="risk-add">${esc(s.add_title)}</h2>
${o.error ? alert(o.error) : ''}<form method="post" action="${base}">${csrfField(csrf)}
<div class="field"><label for="risk-list">${esc(s.list)}</label><select id="risk-list" name="list">${LISTS.map((l) => opt(l, s.lists[l], typed.list)).join('')}</select></div>
<div class="field"><label for="risk-kind">${esc(s.kind)}</label><select id="risk-kind" name="kind">${LIST_KINDS.map((k) => opt(k, s.kinds[k], typed.kind)).join('')}</select></div>
<div class="field"><label for="risk-value">${esc(s.value)} <span class="hint" id="risk-value-hint">${esc(s.value_hint)}</span></label>
<input type="text" id="risk-value" name="value" maxlength="300" required autocomplete="off" spellcheck="false" value="${esc(typed.value)}" aria-describedby="risk-value-hint"${invalid}></div>
<div class="field"><label for="risk-expires">${esc(s.expires)}</label><select id="risk-expires" name="expires_at">${Object.entries(
          s.expiry_choices,
        )
          .map(([v, label]) => opt(v, label, typed.expires_at))
          .join('')}</select></div>
<div class="field"><label for="risk-note">${esc(s.note)} <span class="hint" id="risk-note-hint">${esc(s.note_hint)}</span></label>
<input type="text" id="risk-note" name="note" maxlength="200" autocomplete="off" value="${esc(typed.note)}" aria-describedby="risk-note-hint"></div>
<button type="submit">${esc(s.add)}</button></form><p class="muted">${esc(s.country_note)}</p></section>`
      : `<p class="muted">${esc(s.read_only)}</p>`;
    const body = `<h1>${esc(s.title)}</h1>
${o.done ? notice(o.done) : ''}${!change && o.error ? alert(o.error) : ''}<p>${esc(s.intro)}</p>
<p><a href="${base}rules/">${esc(s.to_rules)}</a></p>
${form}
<section class="panel" aria-labelledby="risk-entries"><h2 id="risk-entries">${esc(s.entries)}</h2>
${rows.length ? table(s.entries, [s.list, s.kind, s.value, s.created, s.by, s.expires, s.note, s.actions], rows) : `<p>${esc(s.none)}</p>`}</section>`;
    return kit.page(req, reply, { title: s.title, body, nav: 'risk', project, status: o.status });
  }

  /** A list change, and the page again: with its notice, or the error of what was entered. */
  async function act(req: FastifyRequest, reply: FastifyReply, run: () => Promise<string>, typed?: Typed) {
    try {
      return await page(req, reply, { done: await run() });
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return page(req, reply, { status: statusOf(err), error: err.message, typed });
    }
  }

  app.get('/projects/:project_id/risk/', async (req, reply) => page(req, reply));

  app.post('/projects/:project_id/risk/', async (req, reply) => {
    const project = await kit.project(req);
    const s = RISK_STRINGS[req.portal.locale];
    const input = {
      list: field(req.body, 'list'),
      kind: field(req.body, 'kind'),
      value: field(req.body, 'value'),
      expires_at: field(req.body, 'expires_at'),
      note: field(req.body, 'note'),
    };
    // a card number is never sent back to the browser, not even into the form it came from
    const typed = { ...input, value: input.kind === 'card' ? '' : input.value };
    return act(
      req,
      reply,
      async () => ((await addToList(ctx, { project: project.id }, input, kit.actor(req))).added ? s.added : s.already),
      typed,
    );
  });

  app.post('/projects/:project_id/risk/:entry_id/remove', async (req, reply) => {
    const project = await kit.project(req);
    const s = RISK_STRINGS[req.portal.locale];
    const id = (req.params as { entry_id: string }).entry_id;
    return act(req, reply, async () => (await removeFromList(ctx, { project: project.id }, id, kit.actor(req)), s.removed));
  });
};
