import type { Ctx } from '../platform/context.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { detectBrands } from '../../domain/card.ts';
import { CARD } from '../../domain/payment-methods.ts';
import type { CounterRow } from '../../store/risk/counters.ts';
import { DomainError, invalid, notFound, rateLimited } from '../../domain/errors.ts';
import { newId, isUuid } from '../../domain/ids.ts';
import {
  firstRule,
  matches,
  MAX_RULES,
  pendingRules,
  threeDsFact,
  ruleFaults,
  type Facts,
  type PendingRule,
  type Rule,
  type RuleInput,
} from '../../domain/risk/rules.ts';
import type { RiskAction, Screening } from '../../domain/risk/limits.ts';
import * as store from '../../store/risk/rules.ts';
import { takeSearchShare } from '../platform/fair-share.ts';

/**
 * Rules a merchant writes (docs/risk.md "Rules a merchant writes"): kept per project, off until
 * switched on, tried in order at every card screening (screen.ts), and replayed on the last 30
 * days of payments before they are switched on (the dry run).
 */

export const listRules = (ctx: Ctx, project: Pick<ProjectRow, 'id'>) => store.rulesOf(ctx.db, project.id);

/** Adds a rule, off. A rule that breaks the schema is refused with its first fault, and nothing is stored. */
export async function addRule(ctx: Ctx, project: Pick<ProjectRow, 'id'>, input: unknown): Promise<store.RuleRow> {
  const [fault] = ruleFaults(input);
  if (fault) throw invalid(fault.field, fault.message);
  const r = input as RuleInput;
  const row = await store.insertRule(
    ctx.db,
    { id: newId(), project_id: project.id, name: r.name.trim(), action: r.action, conditions: r.conditions, created: new Date() },
    MAX_RULES,
  );
  if (!row) throw new DomainError('ValidationError', `a project has at most ${MAX_RULES} rules`, 'rule');
  return row;
}

const found = (ok: boolean) => {
  if (!ok) throw notFound('rule');
};

const ruleId = (id: string) => {
  if (!isUuid(id)) throw notFound('rule');
  return id;
};

export async function switchRule(ctx: Ctx, project: Pick<ProjectRow, 'id'>, id: string, enabled: boolean) {
  found(await store.setEnabled(ctx.db, project.id, ruleId(id), enabled, new Date()));
}

export async function moveRule(ctx: Ctx, project: Pick<ProjectRow, 'id'>, id: string, by: -1 | 1) {
  if (!(await store.ruleById(ctx.db, project.id, ruleId(id)))) throw notFound('rule');
  await store.moveRule(ctx.db, project.id, id, by, new Date());
}

export async function removeRule(ctx: Ctx, project: Pick<ProjectRow, 'id'>, id: string) {
  found(await store.deleteRule(ctx.db, project.id, ruleId(id)));
}

/** The project's enabled rules as the screening statement read them (store/risk/counters.ts). */
const rulesRead = (rows: Array<{ id: string; name: string; action: string; conditions: unknown }> | null): Rule[] =>
  (rows ?? []).map((r) => ({ id: r.id, name: r.name, action: r.action as RiskAction, conditions: r.conditions as Rule['conditions'] }));

/**
 * Adds the first matching rule of the merchant's to the limits' decision: the strongest action
 * wins, as between limits (a rule cannot let through what a limit refuses).
 */
function withRule(s: Screening, rules: readonly Rule[], facts: Facts): Screening {
  const hit = firstRule(rules, facts);
  if (!hit) return s;
  const strength = { pass: 0, flag: 1, challenge: 2, refuse: 3 };
  return { action: strength[hit.action] > strength[s.action] ? hit.action : s.action, rules: [...s.rules, hit] };
}

const DAY = 86_400_000;

/** What a rule would have done to the project's recent payments. */
export interface DryRun {
  action: RiskAction;
  /** payments the rule would have acted on, left alone, and could not judge (a fact not kept: a velocity count, an unknown card country) */
  hit: number;
  passed: number;
  unknown: number;
  /** payments replayed (the newest, up to RISK_DRY_RUN_MAX_PAYMENTS), and since when */
  replayed: number;
  since: string;
  /** whether the newest RISK_DRY_RUN_MAX_PAYMENTS were all there was to replay */
  complete: boolean;
  examples: Array<{ order_id: string; merchant_order_id: string | null; amount: number; currency: string; created: string }>;
}

/**
 * Replays a rule on the project's card payments of the last 30 days, read from ctx.replica
 * within the project's share of search time and RISK_DRY_RUN_TIMEOUT_MS: a big merchant's dry
 * run waits in its own line and stops, it does not slow the others.
 */
export async function dryRun(ctx: Ctx, project: Pick<ProjectRow, 'id'>, id: string): Promise<DryRun> {
  const rule = await store.ruleById(ctx.db, project.id, ruleId(id));
  if (!rule) throw notFound('rule');
  const { dryRunTimeoutMs, dryRunMax } = ctx.config.risk;
  const since = new Date(Date.now() - 30 * DAY);
  const release = await takeSearchShare(ctx, project.id);
  let rows: store.PastPayment[];
  const signal = AbortSignal.timeout(dryRunTimeoutMs);
  try {
    const read = (q: Parameters<typeof store.pastCardPayments>[0]) => store.pastCardPayments(q, project.id, since, dryRunMax);
    rows = await (ctx.replica.withCancel ? ctx.replica.withCancel(signal, read) : read(ctx.replica));
  } catch (err) {
    if (!signal.aborted) throw err;
    throw rateLimited(`the dry run took longer than ${dryRunTimeoutMs} ms and was stopped: try again later`, 60);
  } finally {
    release();
  }
  const out: DryRun = {
    action: rule.action,
    hit: 0,
    passed: 0,
    unknown: 0,
    replayed: rows.length,
    since: since.toISOString(),
    complete: rows.length < dryRunMax,
    examples: [],
  };
  for (const p of rows) {
    const facts: Facts = { amount: Number(p.amount), currency: p.currency };
    if (p.payment_method) facts.method = p.payment_method;
    if (p.brand) facts.brand = p.brand;
    if (p.address_country) facts.address_country = p.address_country;
    if (p.card_country) facts.card_country = p.card_country;
    if (p.trans_status) facts.three_ds = threeDsFact(p.trans_status);
    const m = matches(rule, facts);
    if (m === undefined) out.unknown++;
    else if (!m) out.passed++;
    else {
      out.hit++;
      if (out.examples.length < 5)
        out.examples.push({
          order_id: p.order_id,
          merchant_order_id: p.merchant_order_id,
          amount: Number(p.amount),
          currency: p.currency,
          created: new Date(p.created).toISOString(),
        });
    }
  }
  return out;
}

/** What the screening statement read beside the counts: the enabled rules and the hold in force. */
type Read = Pick<CounterRow, 'rules' | 'held'> | undefined;

/** The facts of a card attempt the rules see (a fact not known is left out: the card's country when the BIN table has no line for it). */
export function paymentFacts(
  txn: Pick<TransactionRow, 'amount' | 'currency' | 'payment_method'>,
  order: Pick<OrderRow, 'body'>,
  pan: string,
  velocity: Facts,
  cardCountry?: string,
): Facts {
  const country = (order.body?.customer as Record<string, unknown> | undefined)?.country;
  const brand = detectBrands(pan)?.brand;
  return {
    amount: Number(txn.amount),
    currency: txn.currency,
    method: txn.payment_method ?? CARD,
    ...(brand ? { brand } : {}),
    ...(cardCountry ? { card_country: cardCountry } : {}),
    ...(typeof country === 'string' ? { address_country: country } : {}),
    ...velocity,
  };
}

/**
 * The limits' decision with the merchant's first matching rule, and the platform hold's refusal;
 * with the rules on three_ds to judge again after 3-D Secure (`pending`), unless it refuses now.
 */
export function judge(s: Screening, read: Read, facts: Facts): Screening & { pending?: PendingRule[] } {
  const rules = rulesRead(read?.rules ?? null);
  const out = withRule(s, rules, facts);
  if (read?.held) {
    const reason = `the platform holds this project until the operator lifts it: ${read.held}`;
    return { action: 'refuse', rules: [...out.rules, { rule: 'platform_hold', action: 'refuse', reason }] };
  }
  const pending = out.action === 'refuse' ? [] : pendingRules(rules, facts);
  return pending.length ? { ...out, pending } : out;
}
