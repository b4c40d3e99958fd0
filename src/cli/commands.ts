import type { Ctx } from '../services/platform/context.ts';
import { createProject, rotateKey } from '../services/platform/tenancy.ts';
import { listProjects } from '../store/platform/projects.ts';
import { rotateWebhookSecret, setProjectWebhookUrl } from '../services/webhooks/endpoints.ts';
import { rewrapDataKeys } from '../services/platform/crypto-envelope.ts';
import { parseKey } from '../services/platform/master-key.ts';
import { checkLedger } from '../services/payments/ledger-check.ts';
import { seedOrders } from '../services/platform/seed.ts';
import { createUser } from '../services/portal/users.ts';

/**
 * Administrative commands. The CLI runs them on the store directly, or, when a server holds
 * the embedded store, through that server's admin endpoint (see store/lock.ts). Their args are
 * what the CLI parsed (cli/index.ts) or the admin endpoint received as JSON: checked by the use case.
 */
export type Command = (ctx: Ctx, args: Record<string, unknown>) => Promise<unknown>;

/** What the admin endpoint (http/admin.ts) answers a command: its result, or the error. */
export type AdminAnswer<R> = { result: R; error?: { value?: string } };

export const commands: Record<string, Command> = {
  'project create': (ctx, a) =>
    createProject(ctx, { name: String(a.name), mode: a.mode as 'test' | 'live', merchantId: a.merchant as string | undefined }),
  'key rotate': (ctx, a) => rotateKey(ctx, String(a.project)),
  'webhook-secret rotate': (ctx, a) => rotateWebhookSecret(ctx, String(a.project)),
  'project set-webhook': (ctx, a) => setProjectWebhookUrl(ctx, String(a.project), a.url ? String(a.url) : null),
  'keys rewrap': async (ctx, a) => rewrapDataKeys(ctx, parseKey(String(a.new_master_key ?? '')), { prune: Boolean(a.prune) }),
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
  'project list': async (ctx) =>
    (await listProjects(ctx.db)).map((p) => ({ project_id: p.id, merchant_id: p.merchant_id, name: p.name, mode: p.mode })),
};
