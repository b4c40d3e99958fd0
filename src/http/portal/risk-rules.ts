import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { CODE_OPS, FIELD_NAMES, NUMBER_OPS, RULE_FIELDS, conditionText, type RuleField } from '../../domain/risk/rules.ts';
import { RISK_ACTIONS } from '../../domain/risk/limits.ts';
import type { RiskView } from '../../domain/schemas/risk.ts';
import type { Locale } from '../pay/i18n.ts';
import { addRule, dryRun, listRules, moveRule, removeRule, switchRule } from '../../services/risk/rules.ts';
import { audit } from '../../services/portal/actions.ts';
import { field, type Kit } from './kit.ts';
import { RULE_STRINGS } from './i18n-risk-rules.ts';
import { alert, badge, csrfField, esc, idCode, money, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/**
 * The project's risk rules (docs/portal.md "Risk rules"): the list in order with each rule's
 * state, a form for a new rule (up to 3 conditions, AND), switching on and off, moving, deleting,
 * and a rule's dry run on the last 30 days. Writing needs the developer capability (domain/roles.ts).
 */

const CONDITIONS = 3;
const CHANGES = ['on', 'off', 'up', 'down', 'delete'] as const;

/** A rule from the form: blank condition rows are left out; a value is a number, a code or a list as its field and operator need. */
function ruleFromForm(body: unknown) {
  const conditions = [];
  for (let i = 0; i < CONDITIONS; i++) {
    const f = field(body, `field_${i}`);
    if (!f) continue;
    const op = field(body, `op_${i}`);
    const raw = field(body, `value_${i}`).trim();
    const list = op === 'in' || op === 'not_in';
    const value = list
      ? raw.split(/[\s,;]+/).filter(Boolean)
      : RULE_FIELDS[f as RuleField] === 'number' && /^\d{1,15}$/.test(raw)
        ? Number(raw)
        : raw;
    conditions.push({ field: f, op, value });
  }
  return { name: field(body, 'name').trim(), action: field(body, 'action'), conditions };
}

export const riskRuleRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  async function rulesPage(req: FastifyRequest, reply: FastifyReply, o: { status?: number; error?: string; done?: string } = {}) {
    const project = await kit.project(req);
    const { locale, csrf } = req.portal;
    const r = RULE_STRINGS[locale];
    const rules = await listRules(ctx, project);
    const base = `${kit.base}/projects/${project.id}/risk/`;
    const dev = kit.can(req, 'developer');
    const k = o.error ? (req.body as Record<string, unknown>) : {};
    const change = (id: string, name: string, c: (typeof CHANGES)[number], label: string) =>
      `<form method="post" action="${base}rules/${id}/change" class="inline">${csrfField(csrf)}<input type="hidden" name="do" value="${c}"><button type="submit" class="secondary">${esc(label)}<span class="vh"> ${esc(name)}</span></button></form>`;
    const rows = rules.map((x, i) => [
      String(i + 1),
      esc(x.name),
      esc(x.conditions.map(conditionText).join(' ∧ ')),
      esc(r.actions[x.action] ?? x.action),
      `<span data-rule-state="${x.enabled ? 'on' : 'off'}">${badge(x.enabled ? 'completed' : 'initialized', x.enabled ? r.on : r.off)}</span>`,
      `<a href="${base}rules/${x.id}/dry-run">${esc(r.dry_run)}<span class="vh"> ${esc(x.name)}</span></a>${
        dev
          ? ` ${change(x.id, x.name, x.enabled ? 'off' : 'on', x.enabled ? r.switch_off : r.switch_on)}${i ? change(x.id, x.name, 'up', r.up) : ''}${
              i < rules.length - 1 ? change(x.id, x.name, 'down', r.down) : ''
            }${change(x.id, x.name, 'delete', r.remove)}`
          : ''
      }`,
    ]);
    const opt = (v: string, label: string, cur: unknown) =>
      `<option value="${esc(v)}"${v === cur ? ' selected' : ''}>${esc(label)}</option>`;
    const conditionRow = (i: number) => `<fieldset class="filters"><legend>${esc(r.condition_n(i + 1))}</legend>
<div class="field"><label for="rule-field-${i}">${esc(r.field)}</label><select id="rule-field-${i}" name="field_${i}">${opt('', r.none, k[`field_${i}`])}${FIELD_NAMES.map((f) => opt(f, f, k[`field_${i}`])).join('')}</select></div>
<div class="field"><label for="rule-op-${i}">${esc(r.op)}</label><select id="rule-op-${i}" name="op_${i}">${[...new Set([...NUMBER_OPS, ...CODE_OPS])].map((op) => opt(op, op, k[`op_${i}`])).join('')}</select></div>
<div class="field"><label for="rule-value-${i}">${esc(r.value)}</label><input type="text" id="rule-value-${i}" name="value_${i}" maxlength="400" aria-describedby="rule-value-hint" value="${esc(String(k[`value_${i}`] ?? ''))}"></div></fieldset>`;
    const form = dev
      ? `<section class="panel" aria-labelledby="rule-new"><h2 id="rule-new">${esc(r.new_rule)}</h2>
<form method="post" action="${base}rules">${csrfField(csrf)}${kit.onceField()}
<div class="filters"><div class="field"><label for="rule-name">${esc(r.name)}</label><input type="text" id="rule-name" name="name" maxlength="80" required value="${esc(String(k.name ?? ''))}"></div>
<div class="field"><label for="rule-action">${esc(r.action)}</label><select id="rule-action" name="action">${RISK_ACTIONS.map((a) => opt(a, r.actions[a]!, k.action)).join('')}</select></div></div>
<p class="hint" id="rule-value-hint">${esc(r.value_hint)}</p>
${Array.from({ length: CONDITIONS }, (_, i) => conditionRow(i)).join('\n')}
<p><button type="submit">${esc(r.add)}</button></p></form></section>`
      : '';
    const body = `<h1>${esc(r.title)}</h1>
${o.error ? alert(o.error) : ''}${o.done ? notice(o.done) : ''}<p>${esc(r.intro)}</p>
<p><a href="${base}">${esc(r.to_lists)}</a></p>
<section class="panel" aria-labelledby="rule-list"><h2 id="rule-list">${esc(r.rules)}</h2>
${rows.length ? table(r.rules, [r.position, r.name, r.conditions, r.action, r.state, req.portal.t.actions], rows) : `<p>${esc(r.no_rules)}</p>`}</section>
${form}`;
    return kit.page(req, reply, { title: r.title, body, nav: 'risk', project, status: o.status });
  }

  app.get('/projects/:project_id/risk/rules/', async (req, reply) => {
    const r = RULE_STRINGS[req.portal.locale];
    return rulesPage(req, reply, { done: field(req.query, 'added') ? r.added : field(req.query, 'changed') ? r.changed : undefined });
  });

  app.post('/projects/:project_id/risk/rules', async (req, reply) => {
    const project = await kit.project(req);
    try {
      const made = await kit.once(req, 'risk-rule', async () => {
        const rule = await addRule(ctx, project, ruleFromForm(req.body));
        await audit(ctx, kit.actor(req), 'risk_rule_added', project.id, { rule_id: rule.id, name: rule.name, action: rule.action });
        return { value: rule, shown: `/projects/${project.id}/risk/rules/?added=1` };
      });
      return kit.redirect(reply, 'again' in made ? made.again : `/projects/${project.id}/risk/rules/?added=1`);
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return rulesPage(req, reply, { status: statusOf(err), error: `${err.field ? `${err.field}: ` : ''}${err.message}` });
    }
  });

  app.post('/projects/:project_id/risk/rules/:rule_id/change', async (req, reply) => {
    const project = await kit.project(req);
    const id = (req.params as { rule_id: string }).rule_id;
    const c = field(req.body, 'do') as (typeof CHANGES)[number];
    if (!CHANGES.includes(c)) return rulesPage(req, reply, { status: 400, error: `do: one of ${CHANGES.join(', ')}` });
    if (c === 'on' || c === 'off') await switchRule(ctx, project, id, c === 'on');
    else if (c === 'delete') await removeRule(ctx, project, id);
    else await moveRule(ctx, project, id, c === 'up' ? -1 : 1);
    await audit(
      ctx,
      kit.actor(req),
      `risk_rule_${c === 'delete' ? 'deleted' : c === 'on' || c === 'off' ? `switched_${c}` : 'moved'}`,
      project.id,
      {
        rule_id: id,
      },
    );
    return kit.redirect(reply, `/projects/${project.id}/risk/rules/?changed=1`);
  });

  app.get('/projects/:project_id/risk/rules/:rule_id/dry-run', async (req, reply) => {
    const project = await kit.project(req);
    const { locale } = req.portal;
    const r = RULE_STRINGS[locale];
    const id = (req.params as { rule_id: string }).rule_id;
    const rule = (await listRules(ctx, project)).find((x) => x.id === id);
    if (!rule) throw new DomainError('NotFound', 'rule not found');
    const d = await dryRun(ctx, project, id);
    const examples = d.examples.map((e) => [
      `<a class="id" href="${kit.base}/projects/${project.id}/orders/${e.order_id}/">${esc(e.merchant_order_id ?? e.order_id)}</a>`,
      esc(money(e.amount, e.currency, locale)),
      esc(when(e.created, project)),
    ]);
    const t = req.portal.t;
    const body = `<h1>${esc(r.dry_title(rule.name))}</h1>
<p>${esc(r.dry_intro(d.replayed, when(d.since, project), d.complete))}</p>
<section class="panel" aria-labelledby="dry-counts"><h2 id="dry-counts">${esc(r.dry_run)}</h2><dl class="facts">
<dt>${esc(r.conditions)}</dt><dd>${esc(rule.conditions.map(conditionText).join(' ∧ '))}</dd>
<dt>${esc(r.dry_hit)} (${esc(r.actions[d.action] ?? d.action)})</dt><dd data-dry="hit">${d.hit}</dd>
<dt>${esc(r.dry_passed)}</dt><dd data-dry="passed">${d.passed}</dd>
<dt>${esc(r.dry_unknown)}</dt><dd data-dry="unknown">${d.unknown}</dd></dl></section>
<section class="panel" aria-labelledby="dry-examples"><h2 id="dry-examples">${esc(r.examples)}</h2>
${examples.length ? table(r.examples, [t.order, t.amount, t.created], examples, { numeric: [1] }) : `<p>${esc(r.no_examples)}</p>`}</section>
<p><a href="${kit.base}/projects/${project.id}/risk/rules/">${esc(r.back)}</a></p>`;
    return kit.page(req, reply, { title: r.dry_title(rule.name), body, nav: 'risk', project });
  });
};

/** The order page's panel of risk decisions: each screened transaction's action, and every rule behind it with why. */
export function riskPanel(txns: ReadonlyArray<{ id: string; risk?: RiskView }>, locale: Locale): string {
  const r = RULE_STRINGS[locale];
  const screened = txns.filter((x) => x.risk);
  // the reasons are written in English (they are the API's `risk` object): marked so, on the Dutch page
  const lang = locale === 'en' ? '' : ' lang="en"';
  const rows = screened.flatMap((x) =>
    x.risk!.rules.length
      ? x.risk!.rules.map((h) => [
          idCode(x.id),
          `<span data-risk-action="${esc(x.risk!.action)}">${esc(r.actions[x.risk!.action] ?? x.risk!.action)}</span>`,
          `<span data-risk-rule="${esc(h.rule)}">${esc(r.rule_names[h.rule] ?? h.rule)}</span> (${esc(r.actions[h.action] ?? h.action)})`,
          `<span${lang}>${esc(h.reason)}</span>`,
        ])
      : [[idCode(x.id), `<span data-risk-action="pass">${esc(r.actions.pass!)}</span>`, esc(r.no_rule_fired), '']],
  );
  return `<section class="panel" aria-labelledby="risk-h"><h2 id="risk-h">${esc(r.risk)}</h2>${
    rows.length ? table(r.risk, [r.transaction, r.decision, r.rule, r.why], rows) : `<p>${esc(r.no_risk)}</p>`
  }</section>`;
}
