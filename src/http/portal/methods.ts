import type { FastifyInstance } from 'fastify';
import { DomainError, notFound } from '../../domain/errors.ts';
import { activeMethods, defaultSettings, settingsOf, type ProjectSettings } from '../../domain/project.ts';
import { PAYMENT_METHODS, isSandboxMethod, methodInfo } from '../../domain/payment-methods.ts';
import { setActiveMethods } from '../../services/payments/methods/settings.ts';
import { settleTransfer } from '../../services/payments/methods/sandbox.ts';
import { audit } from '../../services/portal/actions.ts';
import type { Locale } from '../pay/i18n.ts';
import { type Kit } from './kit.ts';
import { alert, csrfField, esc, notice } from './view.ts';
import { statusOf } from '../errors.ts';

/**
 * The portal's part of the payment methods (docs/payment-methods.md): Settings turns each method
 * on or off; the test tools complete or expire a bank transfer. Texts EN and NL.
 */

const TEXT = {
  en: {
    title: 'Turn payment methods on or off',
    intro: 'Tick the methods your customers may pay with. The methods other than the card and wallets run in the sandbox.',
    save: 'Save payment methods',
    transfer: 'Bank transfer or viacash',
    transfer_intro: 'Complete a waiting bank transfer (the exact amount) or let it expire.',
    order: 'Order id',
    amount: 'Amount received (minor units)',
    paid: 'Money arrived',
    expire: 'Let it expire',
    done: (s: string) => `The order is now ${s}.`,
  },
  nl: {
    title: 'Betaalmethoden aan- of uitzetten',
    intro: 'Vink de methoden aan waarmee uw klanten mogen betalen. Andere methoden dan de kaart en wallets draaien in de sandbox.',
    save: 'Betaalmethoden opslaan',
    transfer: 'Overboeking of viacash',
    transfer_intro: 'Voltooi een wachtende overboeking (precies het bedrag) of laat hem verlopen.',
    order: 'Order-id',
    amount: 'Ontvangen bedrag (kleinste eenheid)',
    paid: 'Geld ontvangen',
    expire: 'Laten verlopen',
    done: (s: string) => `De order is nu ${s}.`,
  },
};
const text = (locale: string) => TEXT[(locale === 'nl' ? 'nl' : 'en') as Locale];

const label = (m: string, locale: string) => (isSandboxMethod(m) ? `${methodInfo(m).name[locale === 'nl' ? 'nl' : 'en']} (${m})` : m);

/** Settings: every method with a checkbox (on when active) and the currencies it takes. */
export function methodsSettings(
  p: { id: string; settings: Partial<ProjectSettings> },
  o: { locale: string; csrf: string; action: string; currencies: string; anyCurrency: string },
): string {
  const s = settingsOf(p.settings);
  const on = activeMethods(s) as string[];
  const x = text(o.locale);
  // a method that is off shows the currencies it would take when turned on
  const defaults = defaultSettings().payment_methods;
  const rows = PAYMENT_METHODS.map((m) => {
    const cur = s.payment_methods[m]?.currencies ?? defaults[m]?.currencies ?? (isSandboxMethod(m) ? [...methodInfo(m).currencies] : []);
    const id = `method-${esc(m)}`;
    return `<li class="method-choice${on.includes(m) ? ' on' : ''}"><input type="checkbox" id="${id}" name="method" value="${esc(m)}" aria-describedby="${id}-currencies"${on.includes(m) ? ' checked' : ''}>
<label for="${id}">${esc(label(m, o.locale))}</label>
<p class="hint" id="${id}-currencies"><span class="vh">${esc(o.currencies)}: </span>${cur.length ? cur.map((c) => `<span class="currency">${esc(c)}</span>`).join(' ') : esc(o.anyCurrency)}</p></li>`;
  }).join('\n');
  return `<section class="panel" aria-labelledby="methods-on"><h2 id="methods-on">${esc(x.title)}</h2><p>${esc(x.intro)}</p>
<form method="post" action="${esc(o.action)}">${csrfField(o.csrf)}<ul class="method-list" data-methods>
${rows}
</ul><button type="submit">${esc(x.save)}</button></form></section>`;
}

/** Test tools: complete or expire an order's waiting bank transfer. */
export function transferTool(o: { locale: string; csrf: string; action: string; error?: string; message?: string }): string {
  const x = text(o.locale);
  return `<section class="panel" aria-labelledby="transfer"><h2 id="transfer">${esc(x.transfer)}</h2>
${o.error ? alert(o.error) : ''}${o.message ? notice(o.message) : ''}<p>${esc(x.transfer_intro)}</p>
<form method="post" action="${esc(o.action)}">${csrfField(o.csrf)}
<div class="field"><label for="transfer-order">${esc(x.order)}</label><input type="text" id="transfer-order" name="order_id" maxlength="36" required></div>
<div class="field"><label for="transfer-amount">${esc(x.amount)}</label><input type="text" id="transfer-amount" name="amount" inputmode="numeric" maxlength="16"></div>
<button type="submit" name="outcome" value="paid">${esc(x.paid)}</button>
<button type="submit" name="outcome" value="expired" class="secondary">${esc(x.expire)}</button></form></section>`;
}

const many = (body: unknown, name: string): string[] => {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
};
const one = (body: unknown, name: string) => many(body, name)[0] ?? '';

export const methodPortalRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  app.post('/projects/:project_id/settings/methods', async (req, reply) => {
    const project = await kit.project(req);
    const names = many(req.body, 'method');
    try {
      const r = await setActiveMethods(ctx, project.id, names);
      await audit(ctx, kit.actor(req), 'payment_methods_set', project.id, { payment_methods: r.payment_methods });
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500 || statusOf(err) === 404) throw err;
      return kit.redirect(reply, `/projects/${project.id}/settings/?methods_error=${encodeURIComponent(err.message)}#methods-on`);
    }
    return kit.redirect(reply, `/projects/${project.id}/settings/?saved=1#methods-on`);
  });

  app.post('/projects/:project_id/test/bank-transfer', async (req, reply) => {
    const project = await kit.project(req);
    if (project.mode !== 'test') throw notFound('page');
    const outcome = one(req.body, 'outcome') === 'expired' ? 'expired' : 'paid';
    const raw = one(req.body, 'amount').trim();
    const back = (q: string) => kit.redirect(reply, `/projects/${project.id}/test/?${q}#transfer`);
    try {
      const amount = raw ? Number(raw) : undefined;
      if (amount !== undefined && !Number.isSafeInteger(amount))
        throw new DomainError('ValidationError', 'amount must be whole minor units', 'amount');
      const order = await settleTransfer(ctx, project, one(req.body, 'order_id').trim().toLowerCase(), { outcome, amount });
      await audit(ctx, kit.actor(req), 'test_bank_transfer', project.id, { order_id: order.id, outcome });
      return back(`transfer=${encodeURIComponent(String(order.status))}`);
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return back(`transfer_error=${encodeURIComponent(err.message)}`);
    }
  });
};

export const transferMessage = (locale: string, status: string) => text(locale).done(status);
