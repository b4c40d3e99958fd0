import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { EVIDENCE, type DisputeState, type EvidenceFile, type Stage } from '../../domain/disputes.ts';
import { answerDispute, getDispute, listDisputes, type DisputeView } from '../../services/disputes/disputes.ts';
import { audit } from '../../services/portal/actions.ts';
import { nowFor } from '../../services/platform/context.ts';
import { field, type Kit } from './kit.ts';
import { DISPUTE_STRINGS } from './i18n-disputes.ts';
import { alert, badge, csrfField, esc, money, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/** A defence's whole form: its files at their limit, and room for the text and the multipart framing. */
const BODY_LIMIT = EVIDENCE.maxFiles * EVIDENCE.maxBytes + 256 * 1024;

/** The files of a request's defence form, beside its body (the body's fields are strings only: input hooks may copy it). */
const uploads = new WeakMap<FastifyRequest, EvidenceFile[]>();

const BADGE: Record<DisputeState, string> = {
  open: 'processing',
  accepted: 'cancelled',
  defended: 'processing',
  won: 'completed',
  lost: 'error',
};

/**
 * The Disputes page (list with deadlines) and a dispute's page, where an owner accepts it or
 * defends it with a text and files (docs/portal.md "Disputes"). The defence form is
 * multipart/form-data, read with the platform's own parser (the fetch API's FormData).
 */
export const disputePortalRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT },
    async (req: FastifyRequest, body: Buffer) => {
      let form: FormData;
      try {
        form = await new Response(new Uint8Array(body), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
      } catch {
        throw new DomainError('ValidationError', 'the form could not be read');
      }
      const out: Record<string, unknown> = {};
      const files: EvidenceFile[] = [];
      for (const [k, v] of form.entries()) {
        if (typeof v === 'string') out[k] = v;
        else if (v.size || v.name) files.push({ name: v.name.slice(0, 200), type: v.type, bytes: new Uint8Array(await v.arrayBuffer()) });
      }
      uploads.set(req, files);
      return out;
    },
  );

  const base = (projectId: string) => `${kit.base}/projects/${projectId}/disputes/`;

  app.get('/projects/:project_id/disputes/', async (req, reply) => {
    const project = await kit.project(req);
    const d = DISPUTE_STRINGS[req.portal.locale];
    const { disputes } = await listDisputes(ctx, project);
    const rows = disputes.map((x) => [
      esc(when(x.created, project)),
      `<a class="id" href="${kit.base}/projects/${project.id}/orders/${x.order_id}/">${esc(x.order_id)}</a>`,
      esc(x.reason_code ?? ''),
      esc(money(x.amount, x.currency, req.portal.locale)),
      `<span data-dispute-state="${x.state}">${badge(BADGE[x.state as DisputeState], d.states[x.state as DisputeState])}</span>`,
      x.state === 'open' ? `<strong>${esc(when(x.deadline, project))}</strong>` : esc(when(x.deadline, project)),
      `<a href="${base(project.id)}${x.id}/">${esc(d.open_it)}<span class="vh"> ${esc(x.id)}</span></a>`,
    ]);
    const body = `<h1>${esc(d.title)}</h1>
<p class="muted">${esc(d.intro)}</p>
<section class="panel" aria-labelledby="dsp-list"><h2 id="dsp-list" class="vh">${esc(d.title)}</h2>
${rows.length ? table(d.title, [d.created, d.order, d.reason, d.amount, d.state, d.deadline, d.one], rows, { numeric: [3] }) : `<p>${esc(d.none)}</p>`}</section>`;
    return kit.page(req, reply, { title: d.title, body, nav: 'disputes', project });
  });

  async function disputePage(req: FastifyRequest, reply: FastifyReply, o: { status?: number; error?: string; done?: string } = {}) {
    const project = await kit.project(req);
    const { locale, csrf } = req.portal;
    const d = DISPUTE_STRINGS[locale];
    const x: DisputeView = await getDispute(ctx, project, (req.params as { dispute_id: string }).dispute_id);
    const url = `${base(project.id)}${x.id}/`;
    const facts: Array<[string, string]> = [
      [d.state, `<span data-dispute-state="${x.state}">${badge(BADGE[x.state as DisputeState], d.states[x.state as DisputeState])}</span>`],
      [d.amount, esc(money(x.amount, x.currency, locale))],
      [d.deadline, esc(when(x.deadline, project))],
      [d.order, `<a class="id" href="${kit.base}/projects/${project.id}/orders/${x.order_id}/">${esc(x.order_id)}</a>`],
      [d.reason, esc(x.reason_code ?? '')],
      [d.source, esc(x.source === 'test' ? d.source_test : d.source_acquirer)],
      ...(x.host_dispute_id ? ([[d.host_id, `<code>${esc(x.host_dispute_id)}</code>`]] as Array<[string, string]>) : []),
    ];
    const stages = x.stages.map((s) => [esc(s.date), esc(d.stage_names[s.stage as Stage]), esc(money(s.amount, x.currency, locale))]);
    const owner = kit.can(req, 'disputes');
    const late = Date.parse(x.deadline) < nowFor(project).getTime();
    const answer =
      x.state !== 'open'
        ? ''
        : late
          ? `<p class="muted">${esc(d.deadline_passed)}</p>`
          : !owner
            ? `<p class="muted">${esc(d.owners_only)}</p>`
            : `<section class="panel" aria-labelledby="dsp-defend"><h2 id="dsp-defend">${esc(d.defend_title)}</h2>
<form method="post" action="${url}defend" enctype="multipart/form-data">${csrfField(csrf)}
<div class="field"><label for="dsp-text">${esc(d.defend_label)} <span class="hint" id="dsp-text-hint">${esc(d.defend_hint)}</span></label>
<textarea id="dsp-text" name="text" rows="6" maxlength="${EVIDENCE.maxTextChars}" required aria-describedby="dsp-text-hint"></textarea></div>
<div class="field"><label for="dsp-files">${esc(d.files_label)} <span class="hint" id="dsp-files-hint">${esc(d.files_hint)}</span></label>
<input type="file" id="dsp-files" name="files" multiple accept="${Object.keys(EVIDENCE.types).join(',')}" aria-describedby="dsp-files-hint"></div>
<button type="submit">${esc(d.defend)}</button></form></section>
<section class="panel" aria-labelledby="dsp-accept"><h2 id="dsp-accept">${esc(d.accept_title)}</h2><p>${esc(d.accept_text)}</p>
<form method="post" action="${url}accept">${csrfField(csrf)}<button type="submit" class="secondary">${esc(d.accept)}</button></form></section>`;
    const defence = x.defence
      ? `<section class="panel" aria-labelledby="dsp-defence"><h2 id="dsp-defence">${esc(d.defence)}</h2><p class="prewrap">${esc(x.defence)}</p>
<h3>${esc(d.evidence)}</h3>${
          x.evidence.length
            ? `<ul>${x.evidence.map((e) => `<li><code>${esc(e.name)}</code> ${esc(e.content_type)}, ${esc(d.bytes(e.size))}</li>`).join('')}</ul>`
            : `<p>${esc(d.no_evidence)}</p>`
        }</section>`
      : '';
    const body = `<h1>${esc(d.one)} <code class="id">${esc(x.id)}</code></h1>
${o.error ? alert(o.error) : ''}${o.done ? notice(o.done) : ''}
<section class="panel" aria-labelledby="dsp-facts"><h2 id="dsp-facts" class="vh">${esc(d.one)}</h2>
<dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl></section>
<section class="panel" aria-labelledby="dsp-stages"><h2 id="dsp-stages">${esc(d.stages)}</h2>
${table(d.stages, [d.date, d.stage, d.amount], stages, { numeric: [2] })}</section>
${defence}${answer}`;
    return kit.page(req, reply, { title: d.one, body, nav: 'disputes', project, status: o.status });
  }

  app.get('/projects/:project_id/disputes/:dispute_id/', async (req, reply) => disputePage(req, reply));

  async function answer(req: FastifyRequest, reply: FastifyReply, accept: boolean) {
    const project = await kit.project(req);
    const d = DISPUTE_STRINGS[req.portal.locale];
    const id = (req.params as { dispute_id: string }).dispute_id;
    const by = req.portal.session!.user.id;
    try {
      if (accept) await answerDispute(ctx, project, id, { accept: true, by });
      else {
        const files = uploads.get(req) ?? [];
        await answerDispute(ctx, project, id, { accept: false, by, text: field(req.body, 'text'), files });
      }
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500 || statusOf(err) === 404) throw err;
      return disputePage(req, reply, { status: statusOf(err), error: err.message });
    }
    await audit(ctx, kit.actor(req), accept ? 'dispute_accepted' : 'dispute_defended', project.id, { dispute_id: id });
    return disputePage(req, reply, { done: accept ? d.accepted_done : d.defended_done });
  }

  app.post('/projects/:project_id/disputes/:dispute_id/accept', async (req, reply) => answer(req, reply, true));
  app.post('/projects/:project_id/disputes/:dispute_id/defend', { bodyLimit: BODY_LIMIT }, async (req, reply) => answer(req, reply, false));
};
