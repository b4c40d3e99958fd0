import type { Ctx } from '../services/platform/context.ts';
import { rotateKey } from '../services/platform/tenancy.ts';
import { listProjects } from '../store/platform/projects.ts';
import { rotateWebhookSecret, setProjectWebhookUrl } from '../services/webhooks/endpoints.ts';
import { rewrapDataKeys } from '../services/platform/crypto-envelope.ts';
import { parseKey } from '../services/platform/master-key.ts';
import { checkLedger } from '../services/payments/ledger-check.ts';
import { setActiveMethods } from '../services/payments/methods/settings.ts';
import { seedOrders } from '../services/platform/seed.ts';
import { createUser } from '../services/portal/users.ts';
import { DomainError } from '../domain/errors.ts';
import { isUuid } from '../domain/ids.ts';
import { createBoundProject, setAcquirer } from '../services/payments/acquirer-link.ts';
import { reconcile } from '../services/payments/reconcile.ts';
import { runPayouts, scheduleMerchant } from '../services/payouts/payouts.ts';
import { readBankFile } from '../services/payouts/bankfiles.ts';
import { payoutsOverview } from '../services/payouts/overview.ts';
import { parseEuros } from '../domain/payouts/sepa.ts';
import { invalid } from '../domain/errors.ts';
import { importDisputes } from '../services/disputes/import.ts';
import { exportEvidence, operatorList } from '../services/disputes/disputes.ts';
import { holdList, liftProjectHold } from '../services/risk/hold.ts';
import { riskTable } from './risk.ts';

/**
 * Administrative commands. The CLI runs them on the store directly, or, when a server holds
 * the embedded store, through that server's admin endpoint (see store/db/lock.ts). Their args are
 * what the CLI parsed (cli/index.ts) or the admin endpoint received as JSON: checked by the use case.
 */
export type Command = (ctx: Ctx, args: Record<string, unknown>) => Promise<unknown>;

/** What the admin endpoint (http/admin.ts) answers a command: its result, or the error. */
export type AdminAnswer<R> = { result: R; error?: { value?: string; type?: string } };

/** The acquirer binding of a live project, as `project create` and `project set-acquirer` take it. */
const bindingArgs = (a: Record<string, unknown>) => ({
  acquirer: a.acquirer === undefined ? undefined : String(a.acquirer),
  terminalId: a.terminal_id === undefined ? undefined : String(a.terminal_id),
  cardAcceptorId: a.card_acceptor_id === undefined ? undefined : String(a.card_acceptor_id),
  refuseUnauthenticated: a.refuse_unauthenticated === true,
  ...Object.fromEntries(
    (
      [
        ['directoryServer', 'directory_server'],
        ['acquirerBin', 'acquirer_bin'],
        ['mcc', 'mcc'],
        ['merchantCountry', 'merchant_country'],
        ['requestorId', 'requestor_id'],
        ['requestorName', 'requestor_name'],
        ['dsClientCert', 'ds_client_cert'],
        ['dsClientKey', 'ds_client_key'],
        ['dsCa', 'ds_ca'],
      ] as const
    ).flatMap(([k, arg]) => (a[arg] === undefined || a[arg] === null || a[arg] === '' ? [] : [[k, String(a[arg])]])),
  ),
});

const table: Record<string, Command> = {
  'project create': (ctx, a) =>
    createBoundProject(ctx, {
      name: String(a.name),
      mode: a.mode as 'test' | 'live',
      merchantId: a.merchant as string | undefined,
      ...bindingArgs(a),
    }),
  'project set-acquirer': (ctx, a) => setAcquirer(ctx, String(a.project), bindingArgs(a)),
  reconcile: (ctx, a) => reconcile(ctx, String(a.text ?? ''), { acquirer: a.acquirer as string | undefined }),
  'key rotate': (ctx, a) => rotateKey(ctx, String(a.project)),
  'webhook-secret rotate': (ctx, a) => rotateWebhookSecret(ctx, String(a.project)),
  'project methods': (ctx, a) =>
    setActiveMethods(
      ctx,
      String(a.project),
      a.methods === 'all'
        ? 'all'
        : String(a.methods ?? '')
            .split(',')
            .map((m) => m.trim())
            .filter(Boolean),
    ),
  'project set-webhook': (ctx, a) => setProjectWebhookUrl(ctx, String(a.project), a.url ? String(a.url) : null),
  'keys rewrap': async (ctx, a) => rewrapDataKeys(ctx, parseKey(String(a.new_master_key ?? '')), { prune: Boolean(a.prune) }),
  'payouts schedule': (ctx, a) => {
    const minimum = a.minimum === undefined ? 0 : parseEuros(String(a.minimum));
    if (minimum === undefined) throw invalid('minimum', 'minimum must be an amount in euros such as 25 or 25.50');
    return scheduleMerchant(ctx, {
      merchant: String(a.merchant ?? ''),
      iban: String(a.iban ?? ''),
      name: String(a.name ?? ''),
      every: String(a.every ?? ''),
      minimum,
      time_zone: a.time_zone === undefined ? undefined : String(a.time_zone),
    });
  },
  'payouts run': (ctx, a) => runPayouts(ctx, { out: a.out === undefined ? undefined : String(a.out) }),
  'payouts booked': (ctx, a) => readBankFile(ctx, String(a.text ?? '')),
  'disputes import': (ctx, a) => importDisputes(ctx, String(a.text ?? '')),
  'disputes list': (ctx) => operatorList(ctx),
  'disputes evidence': (ctx, a) => exportEvidence(ctx, String(a.id ?? ''), String(a.out ?? '')),
  'risk hold list': (ctx, a) => holdList(ctx, a.project ? String(a.project) : undefined),
  'risk hold lift': async (ctx, a) => {
    const lifted = await liftProjectHold(ctx, String(a.project), 'operator');
    if (!lifted) throw new DomainError('NotFound', `project ${String(a.project)} is not held`);
    return lifted;
  },
  'payouts overview': (ctx) => payoutsOverview(ctx),
  'ledger check': (ctx, a) => checkLedger(ctx.db, a.project ? String(a.project) : undefined),
  seed: (ctx, a) =>
    seedOrders(ctx, {
      projectId: String(a.project),
      orders: Number(a.orders),
      days: a.days as number | undefined,
      prefix: a.prefix as string | undefined,
      first: a.first as number | undefined,
    }),
  'user create': (ctx, a) =>
    createUser(ctx, {
      merchantId: String(a.merchant),
      email: String(a.email),
      password: typeof a.password === 'string' ? a.password : undefined,
    }),
  ...riskTable,
  'project list': async (ctx) =>
    (await listProjects(ctx.db)).map((p) => ({ project_id: p.id, merchant_id: p.merchant_id, name: p.name, mode: p.mode })),
};

/**
 * An id that is not a UUID names nothing: NotFound, as an unknown UUID is (the CLI exits 2 with
 * one line), instead of a database error about the uuid type.
 */
const idsChecked =
  (cmd: Command): Command =>
  async (ctx, a) => {
    for (const k of ['project', 'merchant'])
      if (a[k] !== undefined && a[k] !== null && !isUuid(String(a[k]))) throw new DomainError('NotFound', `${k} ${String(a[k])} not found`);
    return cmd(ctx, a);
  };

export const commands: Record<string, Command> = Object.fromEntries(Object.entries(table).map(([k, c]) => [k, idsChecked(c)]));
